# Solved when the script backs up the two notes of note/ (the folder is note/, not notes/).
rm -rf backup
out=$(bash backup.sh 2>&1) || { echo "$out"; exit 1; }
[ -f backup/a.txt ] && [ -f backup/b.txt ] || { echo "backup/: $(ls backup 2>&1)"; exit 1; }

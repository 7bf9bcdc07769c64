# Solved when app.py runs and prints the report it was written to print.
out=$(python3 app.py 2>&1) || { echo "$out"; exit 1; }
expected=$'items: 2\nsubtotal: 25\ntotal: 30.0'
[ "$out" = "$expected" ] || { echo "got: $out"; exit 1; }

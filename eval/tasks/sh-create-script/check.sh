# Solved when the new script counts the lines of a file it has not seen.
[ -f bin/count_lines.sh ] || { echo "bin/count_lines.sh is missing"; exit 1; }
printf 'a\nb\nc\nd\ne\n' > /tmp/eval-check-$$.txt
out=$(bash bin/count_lines.sh /tmp/eval-check-$$.txt 2>&1); rm -f /tmp/eval-check-$$.txt
[ "$(echo "$out" | tr -d '[:space:]')" = "5" ] || { echo "printed: $out"; exit 1; }

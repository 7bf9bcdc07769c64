# Solved when the answer gives the number in app/conf/config.json (config.json is not at the root).
grep -Eq "(^|[^0-9])7([^0-9]|$)|seven" <<<"$ANSWER"

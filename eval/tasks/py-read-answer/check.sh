# Solved when the answer names the port the settings file sets.
grep -q "8437" <<<"$ANSWER"

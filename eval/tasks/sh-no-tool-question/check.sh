# Solved when the answer says the script exits (stops) when a command fails.
grep -Eiq "exit|stop|abort|terminat" <<<"$ANSWER" && grep -Eiq "fail|error|non-?zero" <<<"$ANSWER"

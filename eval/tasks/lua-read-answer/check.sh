# Solved when the answer names the picker's keys.
grep -Eiq "<leader>fp|leader.{0,4}fp" <<<"$ANSWER"

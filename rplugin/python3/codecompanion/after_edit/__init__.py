"""What the editor and the project say after the model's edits: the language servers' fresh
diagnostics with each edit's result (`diagnostics.py`), and the checks that run after a tool
round that changed files (`checks.py` finds them, `trust.py` remembers the user's yes,
`runs.py` runs them)."""

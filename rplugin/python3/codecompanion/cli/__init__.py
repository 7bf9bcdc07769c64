"""The command line: `python -m codecompanion tool|replay ...`."""

"""Helpers only the builtin tools use: paths, text files, project files, edits and review."""

"""The plugins the eval drives: this one (`ours`) and the Lua CodeCompanion (`theirs`)."""

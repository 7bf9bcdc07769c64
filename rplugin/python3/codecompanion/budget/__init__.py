"""The model's context budget: token counts, model windows, prices, pruning and compaction."""

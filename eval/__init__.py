"""The eval: real tasks run by a real model through this plugin and the Lua CodeCompanion."""

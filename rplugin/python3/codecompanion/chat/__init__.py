"""The chat: its turn loop, the user's message as sent, and how it looks in its buffer."""

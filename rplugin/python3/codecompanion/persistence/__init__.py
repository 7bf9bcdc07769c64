"""What outlives the host: saved chats."""

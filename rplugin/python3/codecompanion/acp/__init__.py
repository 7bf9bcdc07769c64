"""External agents over the Agent Client Protocol (ACP): a chat whose turns an agent produces."""

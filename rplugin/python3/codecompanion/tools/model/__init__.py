"""What a tool is: the Tool type, the `@tool` decorator, argument checking and the registry."""

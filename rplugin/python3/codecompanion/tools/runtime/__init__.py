"""How tool calls run: the tool system, the orchestrator, approvals, the runner and processes."""

"""CodeCompanion's tool tables on the native contract: `cmds`, `handlers`, `output` callbacks in
each of the forms its guides have used, and `chat:add_tool_output`, as one kind of Invocation."""

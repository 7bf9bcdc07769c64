"""agent: hand a task to a subagent, which works in its own fresh context and answers once."""

from __future__ import annotations

from typing import Any

from ...errors import ToolError
from ..model.arguments import arg_opt_text, arg_text
from ..model.contract import ToolContext
from ..model.function_tool import FunctionOutput, function_tool, nullable

DEFAULT_OPTS: dict[str, Any] = {
    "requires_approval": False,  # its own calls are approved as the chat's are
    "read_only": True,  # several in one answer run together (opts.agents.max_concurrent)
    "timeout": None,  # a subagent's rounds take as long as they take; q stops it
}

DESCRIPTION = (
    "Give a task to a subagent: it works on it with its own tools and a fresh context (it sees "
    "nothing of this conversation, so say everything it needs) and returns its final answer. "
    "Use it to read or search several or long files without filling your own context. The "
    "subagents are listed in the system prompt; null runs `general` (reads and searches)."
)

PROPERTIES = {
    "agent": nullable("string", "The subagent's name; null for `general`."),
    "task": {"type": "string", "description": "The whole task, with the file names it needs."},
}


async def run(ctx: ToolContext, args: dict[str, Any]) -> FunctionOutput:
    """Run the subagent; its answer is the result."""
    task = arg_text(args, "task").strip()
    if not task:
        raise ToolError("`task` is empty: say what the subagent should do.")
    agents = ctx.agents
    if agents is None:
        raise ToolError("This chat cannot run subagents.")
    reply = await agents.run(arg_opt_text(args, "agent"), task, ctx.call.id)
    return FunctionOutput(reply.for_llm, reply.for_user, {"agent": args.get("agent")})


TOOL = function_tool("agent", DESCRIPTION, PROPERTIES, run, opts=DEFAULT_OPTS)

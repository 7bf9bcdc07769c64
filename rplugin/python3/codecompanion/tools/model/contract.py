"""The native tool contract: what a tool's code gets for one call (`ToolContext`), what every
tool is (`ToolSpec`), and how the orchestrator drives one call of it (`Invocation`: setup →
approval → run → exit, each step answering with a `Reply` the orchestrator turns into the
call's ToolResult).

A builtin is `async run(ctx, args) -> FunctionOutput` (function_tool.py). CodeCompanion's tables
(`cmds`, handlers, output callbacks) are another kind of `Invocation`, in tools/compat/.
"""

from __future__ import annotations

import asyncio
import json
import logging
import ssl
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ...messages import Status, ToolCall
from ...ports import Editor, HunkDecision, UnsavedChoice
from .calling import as_text, invoke

if TYPE_CHECKING:
    from ...sandbox.commands import CommandSandbox
    from ...sandbox.settings import Mode
    from ...skills import ChatSkills

log = logging.getLogger("codecompanion.tools")

_CANCEL_GRACE = 5.0  # seconds a cancelled step gets to clean up (kill its processes)

QuestionKind = Literal[
    "call",  # may this tool call run
    "outside_project",  # may a file tool touch a path outside the project
    "git_control",  # may a file tool write git's control files (hooks, config, attributes)
    "redirect",  # may a web tool follow a redirect to another site
    "round_cap",  # may the model go on calling tools past the automatic round cap
    "diff_review",  # must the user review a file edit hunk by hunk
    "tool",  # a yes/no question a tool's own code asks
]

CommandStatus = Literal["success", "error", "timeout"]


class Questions(Protocol):
    """What a call may ask the user, through the chat's one approval gate."""

    async def confirm(self, question: str, kind: QuestionKind = "tool") -> bool:
        """The user's yes or no (False when nobody can be asked)."""
        ...

    async def review(
        self, path: str, old: list[str], new: list[str], note: str | None = None
    ) -> HunkDecision | None:
        """The user's hunk decisions on a file edit; None when the policy spares the review."""
        ...

    async def unsaved(self, path: str) -> UnsavedChoice:
        """What to do with an edit of a buffer holding the user's unsaved changes."""
        ...


@dataclass(frozen=True)
class CommandRun:
    """One finished command: its status, read the same way for every tool, and its output.

    `exit_code` is None when it was killed at its time limit or could not start (`started`);
    `notes` are lines the runner adds after the run: a git repository a confined command made
    (and whether the user kept it), the chat's process cap met.
    """

    status: CommandStatus
    argv: tuple[str, ...]
    exit_code: int | None
    stdout: str
    stderr: str
    truncated: bool = False
    duration: float = 0.0
    started: bool = True
    notes: str = ""

    @property
    def timed_out(self) -> bool:
        """True when the command was killed at its time limit."""
        return self.status == "timeout"


class Commands(Protocol):
    """The one way tool code runs a command: the chat's environment and sandbox applied."""

    async def run(
        self,
        argv: Sequence[str],
        *,
        timeout: float | None,
        cwd: Path | None = None,
        max_output: int | None = None,
        env: Mapping[str, str] | None = None,
        confined: bool = True,
    ) -> CommandRun:
        """Run `argv` (in `cwd`, else the project root); `confined=False` runs it outside the
        chat's sandbox; `env` replaces the chat's environment for tool processes."""
        ...


class Events(Protocol):
    """What a call tells besides its answer: `User CodeCompanion*` events, and each file a file
    tool wrote (the chat's checkpoints attribute it to the tool)."""

    def fire(self, name: str, data: dict[str, Any]) -> None:
        """Fire `User CodeCompanion<name>`."""
        ...

    def wrote(self, path: Path) -> None:
        """A file tool wrote or removed `path` (absolute)."""
        ...


class Subagents(Protocol):
    """The chat's subagents, as the `agent` tool runs one."""

    async def run(self, name: str | None, task: str, call_id: str) -> SubagentAnswer:
        """Run subagent `name` (None: the general one) on `task`; a ToolError when it cannot."""
        ...


class SubagentAnswer(Protocol):
    """A subagent's one answer: for the model, and a line for the user."""

    @property
    def for_llm(self) -> str:
        """The answer the model gets."""
        ...

    @property
    def for_user(self) -> str:
        """One line for the user."""
        ...


class ChatHandle(Protocol):
    """The chat as tool code reaches it."""

    @property
    def id(self) -> str:
        """The chat's id."""
        ...

    @property
    def flags(self) -> dict[str, bool]:
        """Named outcomes of commands (CodeCompanion's `chat.tool_registry.flags`)."""
        ...

    def add_message(self, role: str, content: str, visible: bool = True) -> None:
        """A message for the model, added to the history after the batch's results."""
        ...


@dataclass(frozen=True)
class ToolContext:
    """Everything one call's code may use, passed to it explicitly.

    `root` is the project root; `opts` the tool's options (the user's merged in); `timeout`
    the call's time limit in seconds (None: none); `environment()` the variables a process it
    starts gets (no keys, no editor socket); `asks` the user's answers through the approval
    gate; `commands` runs processes; `events` fires `User CodeCompanion*` events (and hears
    of files written); `edited` collects the files the batch's file tools changed on disk (the
    round's checks look at them); `chat_opts` are the chat's tool options (`opts.tool_system`:
    what an edit's result carries from the language servers, say); `skills` and `agents` the
    chat's skills and subagents (None: none).
    """

    root: Path
    call: ToolCall
    opts: Mapping[str, Any]
    timeout: float | None
    mode: Mode
    editor: Editor | None
    sandbox: CommandSandbox | None
    environment: Callable[[], dict[str, str]]
    asks: Questions
    commands: Commands
    events: Events
    chat: ChatHandle
    tls: Callable[[], Awaitable[ssl.SSLContext]]
    cancel: Callable[[], None]
    edited: list[Path]
    chat_opts: Mapping[str, Any]
    skills: ChatSkills | None = None
    agents: Subagents | None = None

    async def confirm(self, question: str, kind: QuestionKind = "tool") -> bool:
        """A yes/no question for the user (see `Questions.confirm`)."""
        return await self.asks.confirm(question, kind)


@dataclass(frozen=True)
class Reply:
    """A step's answer for the call: the orchestrator adds notes and caps it (the ToolResult)."""

    status: Status
    for_llm: str
    for_user: str | None = None
    detail: str = ""  # shown beside the tool's line (e.g. "timed out after 5s")


@dataclass
class ToolSpec:
    """What every tool is, however it is written: the name the model calls, its schema,
    options and system prompt, and how one call of it starts (`start`)."""

    name: str
    schema: dict[str, Any] = field(default_factory=dict)
    system_prompt: str | Callable[[dict[str, Any]], str] | None = None
    opts: dict[str, Any] = field(default_factory=dict)

    @property
    def function(self) -> dict[str, Any]:
        """The `function` object of the OpenAI-format schema."""
        function = self.schema.get("function", self.schema)
        return function if isinstance(function, dict) else {}

    @property
    def description(self) -> str:
        """The schema's description."""
        return str(self.function.get("description", ""))

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        params = self.function.get("parameters")
        return params if isinstance(params, dict) else {"type": "object", "properties": {}}

    def openai_schema(self) -> dict[str, Any]:
        """The schema in OpenAI function form, named as this tool is named."""
        function = dict(self.function)
        function["name"] = self.name
        function.setdefault("parameters", {"type": "object", "properties": {}})
        return {"type": "function", "function": function}

    @property
    def words_results(self) -> bool:
        """True when the tool's code writes its result as a message to the model itself (as a
        CodeCompanion tool's `output_prompt` does)."""
        return False

    def prompt_text(self) -> str | None:
        """The tool's system prompt, resolved."""
        if callable(self.system_prompt):
            return str(self.system_prompt(self.schema))
        return self.system_prompt

    def start(self, ctx: ToolContext, args: dict[str, Any], entry: Mapping[str, Any]) -> Invocation:
        """One call of this tool with the model's (checked) `args`; `entry` is its config entry."""
        raise NotImplementedError(f"{type(self).__name__} cannot run")


class Invocation:
    """One call of a tool as the orchestrator drives it: this call's arguments, options and
    approval, and its steps. The defaults suit a tool with nothing but `run`."""

    def __init__(
        self, spec: ToolSpec, ctx: ToolContext, args: dict[str, Any], entry: Mapping[str, Any]
    ) -> None:
        self.spec = spec
        self.ctx = ctx
        self.name = spec.name
        self.call = ctx.call  # as the model sent it
        self.args = args
        self.opts = dict(spec.opts)
        self.entry = dict(entry)
        self.approved = False  # the user (or YOLO, or a rule) approved this call

    @property
    def runs_commands(self) -> bool:
        """True when the call runs commands (the sandbox and the modes that trust it apply)."""
        return self.opts.get("sandbox") is not False and self.opts.get("sandboxed") is True

    async def setup(self) -> Reply | None:
        """Prepare the call; a Reply ends it (its setup failed)."""
        return None

    @property
    def own_approval(self) -> Callable[[], Awaitable[bool]] | None:
        """The tool's own approval step (True runs, False rejects); None: the gate decides."""
        return None

    async def prompt(self) -> str | None:
        """The approval question; None for the default one."""
        return None

    async def needs_asking(self) -> bool:
        """Whether the call needs approval: `requires_approval` (a bool or a function)."""
        opts = self.opts
        value = opts.get("requires_approval", opts.get("require_approval_before", False))
        if callable(value):
            value = await invoke(value, self, self.ctx)
        return bool(value)

    async def run(self) -> Reply:
        """Run the approved call."""
        raise NotImplementedError

    async def rejected(self, reason: str | None) -> Reply:
        """The answer when the user rejected the call."""
        return Reply("rejected", *default_output("rejected", self.name, [], [], reason))

    async def cancelled(self) -> Reply:
        """The answer when the call was stopped."""
        return Reply("cancelled", *default_output("cancelled", self.name, [], []))

    def interrupted(self, status: Status) -> Reply:
        """The answer when a step was cut short (synchronous: it may come during a cancel)."""
        return Reply(status, *default_output(status, self.name, [], []))

    async def exit(self) -> None:
        """After the call's answer."""

    def edited(self, args: dict[str, Any]) -> None:
        """The user edited the arguments before approving: the call runs with `args`."""
        self.args = args


def joined(values: Sequence[Any]) -> str:
    """Several outputs as one text."""
    texts = (as_text(value).rstrip("\n") for value in values)
    return "\n".join(text for text in texts if text)


def default_output(
    status: Status,
    name: str,
    data: Sequence[Any],
    errors: Sequence[Any],
    reason: str | None = None,
) -> tuple[str, str | None]:
    """The (for_llm, for_user) text of an answer the tool's code said nothing in."""
    output = joined(data)
    if status == "success":
        return (output or f"The {name} tool ran and produced no output.", None)
    if status in ("error", "timeout"):
        text = f"The {name} tool failed:\n{joined(errors) or 'no error message'}"
        if output:
            text += f"\n\nOutput before the failure:\n{output}"
        return (text, None)
    if status == "rejected":
        text = f"The user rejected the {name} tool call."
        if reason:
            text += f' Their reason: "{reason}"'
        return (text, f"Rejected `{name}`" + (f": {reason}" if reason else ""))
    text = f"The user cancelled the {name} tool call; it did not finish."
    if output:
        text += f"\n\nOutput before the cancel:\n{output}"
    return (text, f"Cancelled `{name}`")


def default_prompt(name: str, args: Mapping[str, Any], command: str | None) -> str:
    """`Run the <name> tool?` with every argument (or the command line, when it runs one)."""
    if command is not None and isinstance(args.get(command), str):
        return f"Run the command `{args[command]}`?"
    summary = ", ".join(
        f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items()
    )
    # Never cut: a field past any cut is exactly where a hostile call would hide.
    return f"Run the {name} tool?" + (f" ({summary})" if summary else "")


# Raised to say something (as Lua's `error("...")`): their message is the whole text.
_PLAIN = (Exception, RuntimeError)


def raised_text(exc: BaseException) -> str:
    """What tool code raised: the message of a plain `Exception`/`RuntimeError`, else the type
    too, where it tells what went wrong (`KeyError: 'x'`, `ZeroDivisionError: ...`)."""
    message = str(exc)
    if not message:
        return type(exc).__name__
    return message if type(exc) in _PLAIN else f"{type(exc).__name__}: {message}"


async def bounded(awaitable: Awaitable[Any], timeout: float | None) -> tuple[bool, Any]:
    """Run `awaitable` with a deadline: (True, value), or (False, None) when time ran out.

    Unlike `asyncio.wait_for` this tells our deadline apart from a TimeoutError the tool raises.
    """
    task = asyncio.ensure_future(awaitable)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        await asyncio.wait({task}, timeout=_CANCEL_GRACE)
        raise
    if not done:
        task.cancel()
        await asyncio.wait({task}, timeout=_CANCEL_GRACE)
        return False, None
    return True, task.result()

"""A scripted ACP agent on the SDK's agent side: each prompt's first word picks a scenario.

Sessions are kept in `$SCRIPTED_STATE` (a JSON file) so a new process can load them; with
`$SCRIPTED_AUTH` set a session needs `authenticate("token")` first; `$SCRIPTED_STDERR` bytes
are written to stderr at start (an undrained pipe would stop the agent there).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    AuthEnvVar,
    AvailableCommand,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    Cost,
    CurrentModeUpdate,
    EnvVarAuthMethod,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    ToolCallLocation,
    ToolCallUpdate,
    UsageUpdate,
)

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    plan_entry,
    run_agent,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought,
    update_plan,
    update_tool_call,
    update_user_message,
)

STATE = Path(os.environ.get("SCRIPTED_STATE", "/tmp/scripted-agent-state.json"))
MODES = SessionModeState(
    current_mode_id="code",
    available_modes=[SessionMode(id="code", name="Code"), SessionMode(id="plan", name="Plan")],
)


def options(model: str = "small") -> list[SessionConfigOptionSelect]:
    values = [SessionConfigSelectOption(value=v, name=v.title()) for v in ("small", "large")]
    return [
        SessionConfigOptionSelect(
            type="select",
            id="model",
            name="Model",
            category="model",
            current_value=model,
            options=values,
        )
    ]


def load_state() -> dict[str, Any]:
    try:
        return dict(json.loads(STATE.read_text()))
    except (OSError, ValueError):
        return {}


def save_state(state: dict[str, Any]) -> None:
    STATE.write_text(json.dumps(state))


def raw(message: dict[str, Any]) -> None:
    """A line written straight to stdout (between the SDK's own, which are drained)."""
    os.write(1, (json.dumps(message) + "\n").encode())


class Scripted:
    def __init__(self) -> None:
        self.conn: Any = None
        self.authed = not os.environ.get("SCRIPTED_AUTH")
        self.cancelled: dict[str, asyncio.Event] = {}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **_: Any) -> InitializeResponse:
        methods = [
            EnvVarAuthMethod(
                type="env_var", id="token", name="Token", vars=[AuthEnvVar(name="SCRIPTED_TOKEN")]
            )
        ]
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            auth_methods=methods if os.environ.get("SCRIPTED_AUTH") else [],
        )

    async def authenticate(self, method_id: str, **_: Any) -> AuthenticateResponse:
        if method_id != "token" or not os.environ.get("SCRIPTED_TOKEN"):
            raise RequestError.invalid_params({"details": "no token"})
        self.authed = True
        return AuthenticateResponse()

    async def new_session(
        self, cwd: str, mcp_servers: list[Any] | None = None, **_: Any
    ) -> NewSessionResponse:
        if not self.authed:
            raise RequestError.auth_required()
        state = load_state()
        session_id = f"s{len(state) + 1}"
        names = [server.name for server in mcp_servers or []]
        state[session_id] = {"cwd": cwd, "history": [], "mcp": names}
        save_state(state)
        # An update before the answer: the client must keep it for the session it learns of.
        commands = [AvailableCommand(name="review", description="Review the changes")]
        await self.conn.session_update(
            session_id,
            AvailableCommandsUpdate(
                session_update="available_commands_update", available_commands=commands
            ),
        )
        return NewSessionResponse(session_id=session_id, modes=MODES, config_options=options())

    async def load_session(self, cwd: str, session_id: str, **_: Any) -> LoadSessionResponse:
        state = load_state()
        if session_id not in state:
            raise RequestError.resource_not_found(session_id)
        for role, text in state[session_id]["history"]:
            update = (
                update_user_message(text_block(text))
                if role == "user"
                else update_agent_message_text(text)
            )
            await self.conn.session_update(session_id, update)
        return LoadSessionResponse(modes=MODES, config_options=options())

    async def list_sessions(self, cwd: str | None = None, **_: Any) -> ListSessionsResponse:
        state = load_state()
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=k, cwd=v["cwd"], title=(v["history"] or [["", k]])[0][1][:30]
                )
                for k, v in state.items()
            ]
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: Any
    ) -> SetSessionModeResponse:
        await self.conn.session_update(
            session_id,
            CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id),
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: Any, **_: Any
    ) -> SetSessionConfigOptionResponse:
        return SetSessionConfigOptionResponse(config_options=options(str(value)))

    async def cancel(self, session_id: str, **_: Any) -> None:
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def prompt(self, session_id: str, prompt: list[Any], **_: Any) -> PromptResponse:
        text = " ".join(getattr(block, "text", "") for block in prompt).strip()
        word, _, rest = text.partition(" ")
        self.cancelled[session_id] = asyncio.Event()
        scenario = getattr(self, f"do_{word}", self.do_echo)
        reply = await scenario(session_id, rest, prompt)
        state = load_state()
        if session_id in state:
            state[session_id]["history"] += [["user", text], ["agent", reply or ""]]
            save_state(state)
        stop = "cancelled" if self.cancelled[session_id].is_set() else "end_turn"
        return PromptResponse(stop_reason=stop)

    async def say(self, session_id: str, text: str) -> str:
        await self.conn.session_update(session_id, update_agent_message_text(text))
        return text

    async def do_echo(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        extra = [b for b in prompt if getattr(b, "type", "") == "resource"]
        note = f" (+{len(extra)} resource)" if extra else ""
        await self.say(session_id, "Hel")
        return "Hel" + await self.say(session_id, f"lo: {rest}{note}")

    async def do_kinds(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        up = self.conn.session_update
        await up(session_id, update_agent_thought(text_block("thinking it over")))
        await up(session_id, update_agent_message_text("Working."))
        await up(
            session_id,
            update_plan(
                [plan_entry("read", status="in_progress"), plan_entry("write", priority="high")]
            ),
        )
        loc = [ToolCallLocation(path=f"{rest}/a.txt", line=3)]
        diff = tool_diff_content(f"{rest}/a.txt", "new\n", "old\n")
        await up(
            session_id,
            start_tool_call(
                "t1",
                "Edit a.txt",
                kind="edit",
                status="pending",
                locations=loc,
                content=[diff],
                raw_input={"path": "a.txt"},
            ),
        )
        await up(session_id, update_tool_call("t1", status="in_progress"))
        await up(
            session_id,
            update_tool_call(
                "t1", status="completed", content=[tool_content(text_block("edited"))]
            ),
        )
        await up(
            session_id,
            update_plan(
                [
                    plan_entry("read", status="completed"),
                    plan_entry("write", priority="high", status="completed"),
                ]
            ),
        )
        await up(
            session_id,
            CurrentModeUpdate(session_update="current_mode_update", current_mode_id="plan"),
        )
        await up(
            session_id,
            ConfigOptionUpdate(
                session_update="config_option_update", config_options=options("large")
            ),
        )
        await up(
            session_id,
            SessionInfoUpdate(session_update="session_info_update", title="Scripted title"),
        )
        await up(
            session_id,
            UsageUpdate(
                session_update="usage_update",
                used=1234,
                size=200000,
                cost=Cost(amount=0.5, currency="USD"),
            ),
        )
        await asyncio.sleep(0.05)
        raw(
            {
                "jsonrpc": "2.0",
                "method": "session/update",
                "params": {
                    "sessionId": session_id,
                    "update": {"sessionUpdate": "mystery_kind", "x": 1},
                },
            }
        )
        await up(session_id, start_tool_call("t2", "Never finished", kind="read"))
        return await self.say(session_id, " Done.")

    async def do_many(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        for i in range(300):
            await self.conn.session_update(session_id, update_agent_message_text(f"{i},"))
        return "many"

    async def do_mcp(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        return await self.say(session_id, "mcp: " + ",".join(load_state()[session_id]["mcp"]))

    async def do_garbage(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        await asyncio.sleep(0.05)
        os.write(1, b'this is not json\n[1, 2]\n5\n"text"\n')
        return await self.say(session_id, "still here")

    async def do_big(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        return await self.say(session_id, "x" * (5 * 1024 * 1024))

    async def do_crash(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        await self.say(session_id, "about to die")
        await asyncio.sleep(0.05)
        sys.stderr.write("scripted agent: fatal: crashed on purpose\n")
        sys.stderr.flush()
        os._exit(3)

    async def do_hang(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        await self.say(session_id, "waiting")
        await self.cancelled[session_id].wait()
        return "waiting"

    async def do_read(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        try:
            got = await self.conn.read_text_file(session_id=session_id, path=rest)
            return await self.say(session_id, f"read: {got.content}")
        except RequestError as exc:
            return await self.say(session_id, f"read failed: {exc.data}")

    async def do_write(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        path, _, content = rest.partition(" ")
        try:
            await self.conn.write_text_file(
                session_id=session_id, path=path, content=content.replace("\\n", "\n")
            )
            return await self.say(session_id, "written")
        except RequestError as exc:
            return await self.say(session_id, f"write failed: {exc.data}")

    async def do_asknew(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        """A permission question about a call never announced (as Qwen Code asks), then the
        call's end as an update."""
        call = ToolCallUpdate(
            tool_call_id=f"q{rest}",
            title=f"run {rest}",
            kind="execute",
            raw_input={"command": rest},
        )
        offered = [PermissionOption(option_id="o-allow", name="Allow", kind="allow_once")]
        answer = await self.conn.request_permission(
            session_id=session_id, tool_call=call, options=offered
        )
        chosen = getattr(answer.outcome, "option_id", answer.outcome.outcome)
        done = update_tool_call(
            f"q{rest}", status="completed", content=[tool_content(text_block(rest))]
        )
        await self.conn.session_update(session_id, done)
        return await self.say(session_id, f"chosen: {chosen}")

    async def do_ask(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        kinds = ["allow_once", "allow_always", "reject_once", "reject_always"]
        offered = [PermissionOption(option_id=f"o-{k}", name=k, kind=k) for k in kinds]
        call = ToolCallUpdate(
            tool_call_id=f"p{rest}",
            title=f"run {rest}",
            kind="execute",
            raw_input={"command": rest},
        )
        await self.conn.session_update(
            session_id,
            start_tool_call(
                f"p{rest}",
                f"run {rest}",
                kind="execute",
                status="pending",
                raw_input={"command": rest},
            ),
        )
        answer = await self.conn.request_permission(
            session_id=session_id, tool_call=call, options=offered
        )
        chosen = getattr(answer.outcome, "option_id", answer.outcome.outcome)
        await self.conn.session_update(
            session_id,
            update_tool_call(f"p{rest}", status="completed" if "allow" in chosen else "failed"),
        )
        return await self.say(session_id, f"chosen: {chosen}")

    async def do_run(self, session_id: str, rest: str, prompt: list[Any]) -> str:
        try:
            made = await self.conn.create_terminal(
                session_id=session_id, command="sh", args=["-c", rest]
            )
        except RequestError as exc:
            return await self.say(session_id, f"run failed: {exc.data}")
        await self.conn.session_update(
            session_id,
            start_tool_call(
                "r1",
                rest,
                kind="execute",
                status="in_progress",
                content=[tool_terminal_ref(made.terminal_id)],
            ),
        )
        exit_status = await self.conn.wait_for_terminal_exit(
            session_id=session_id, terminal_id=made.terminal_id
        )
        out = await self.conn.terminal_output(session_id=session_id, terminal_id=made.terminal_id)
        await self.conn.session_update(
            session_id,
            update_tool_call(
                "r1", status="completed", content=[tool_terminal_ref(made.terminal_id)]
            ),
        )
        await self.conn.release_terminal(session_id=session_id, terminal_id=made.terminal_id)
        return await self.say(session_id, f"exit {exit_status.exit_code}: {out.output.strip()}")


async def main() -> None:
    chatter = int(os.environ.get("SCRIPTED_STDERR") or 0)
    if chatter:
        sys.stderr.write("e" * chatter + "\n")
        sys.stderr.flush()
    await run_agent(Scripted())


if __name__ == "__main__":
    asyncio.run(main())

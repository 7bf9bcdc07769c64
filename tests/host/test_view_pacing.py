"""When the chat view writes to Neovim: progress once per frame or when the stream goes quiet,
held back while a tool round runs and its next request leaves; everything else on the loop's
next turn."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from codecompanion.chat.transcript import event
from codecompanion.nvim import view as view_module
from codecompanion.nvim.view import NvimChatView
from codecompanion.render_ops import (
    Append,
    Header,
    Lock,
    Notice,
    SetVar,
    Spinner,
    Tool,
    ToolStatus,
)


class FakeBridge:
    """Records each batch sent to Lua with the loop time it left."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.batches: list[tuple[float, list[dict[str, Any]]]] = []

    def notify_lua(self, module: str, function: str, bufnr: int, ops: list[Any]) -> None:
        self.batches.append((self.loop.time(), ops))


def kinds(batch: list[dict[str, Any]]) -> list[str]:
    return [op.get("name", op["kind"]) for op in batch]


async def settle(seconds: float = 0.0) -> None:
    await asyncio.sleep(seconds)
    await asyncio.sleep(0)


# Long frames and holds, so a slow test machine cannot make a wait look like none.
FRAME = 0.3
QUIET = 0.1
MIN_GAP = 0.05
HOLD = 0.6


@pytest.fixture(autouse=True)
def slow_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(view_module, "FRAME", FRAME)
    monkeypatch.setattr(view_module, "QUIET", QUIET)
    monkeypatch.setattr(view_module, "MIN_GAP", MIN_GAP)
    monkeypatch.setattr(view_module, "HOLD", HOLD)


async def test_text_goes_when_the_stream_is_quiet_or_a_frame_has_passed() -> None:
    bridge = FakeBridge(asyncio.get_running_loop())
    view = NvimChatView(bridge, 1)  # type: ignore[arg-type]
    view.render([Append(text="a")])
    await settle()
    assert [kinds(b) for _, b in bridge.batches] == [["append"]]  # a frame since the last: now
    view.render([Append(text="b")])
    await settle(QUIET / 2)
    assert len(bridge.batches) == 1  # within the frame: the stream may go on
    await settle(QUIET)
    assert bridge.batches[1][1] == [{"kind": "append", "text": "b"}]  # it went quiet
    assert bridge.batches[1][0] - bridge.batches[0][0] < FRAME * 0.9
    await settle(FRAME)
    # A steady stream (a chunk every QUIET / 2): batched, one batch per frame.
    began = asyncio.get_running_loop().time()
    while asyncio.get_running_loop().time() - began < FRAME * 1.5:
        view.render([Append(text="b")])
        await settle(QUIET / 2)
    # The first chunk goes at once (a frame since the last batch), the rest a frame later.
    assert [len(b[0]["text"]) for _, b in bridge.batches[2:]] == [1, 5]
    assert FRAME * 0.9 <= bridge.batches[3][0] - bridge.batches[2][0] <= FRAME * 1.4


async def test_a_notice_goes_out_at_once_with_the_text_before_it() -> None:
    bridge = FakeBridge(asyncio.get_running_loop())
    view = NvimChatView(bridge, 1)  # type: ignore[arg-type]
    view.render([Append(text="d"), Notice(text="n")])
    await settle()
    assert [kinds(b) for _, b in bridge.batches] == [["append", "notice"]]


async def test_a_tool_round_is_held_until_the_next_answer_streams() -> None:
    bridge = FakeBridge(asyncio.get_running_loop())
    view = NvimChatView(bridge, 1)  # type: ignore[arg-type]
    view.render([event("RequestFinished", {}), event("ToolsStarted", {})])
    view.render([Tool(call_id="c", title="t"), event("ToolsFinished", {})])
    view.render([Lock(), event("RequestStarted", {})])
    await settle(HOLD / 4)
    assert bridge.batches == []  # the tools ran and the request left: Neovim not written yet
    streaming = asyncio.get_running_loop().time()
    view.render([Spinner(on=False), event("RequestStreaming", {})])
    await settle(QUIET * 1.5)  # the hold ends: the batch goes like streamed text
    assert bridge.batches and bridge.batches[0][0] - streaming < HOLD / 2
    assert [kinds(b) for _, b in bridge.batches] == [
        [
            "RequestFinished",
            "ToolsStarted",
            "tool",
            "ToolsFinished",
            "lock",
            "RequestStarted",
            "spinner",
            "RequestStreaming",
        ]
    ]


async def test_a_hold_ends_after_its_time_and_a_question_breaks_it() -> None:
    bridge = FakeBridge(asyncio.get_running_loop())
    view = NvimChatView(bridge, 1)  # type: ignore[arg-type]
    view.render([event("ToolsStarted", {}), Tool(call_id="c", title="t")])
    await settle(HOLD * 1.5)
    assert [kinds(b) for _, b in bridge.batches] == [["ToolsStarted", "tool"]]  # a slow tool
    view.render([event("ToolsStarted", {})])
    view.render([ToolStatus(call_id="c", status="awaiting_approval")])
    await settle()
    assert kinds(bridge.batches[-1][1]) == ["ToolsStarted", "tool_status"]


async def test_a_variable_or_a_checkpoint_during_a_hold_waits_with_it() -> None:
    bridge = FakeBridge(asyncio.get_running_loop())
    view = NvimChatView(bridge, 1)  # type: ignore[arg-type]
    view.render([SetVar(name="codecompanion_mode", value="ask")])
    await settle()
    assert [kinds(b) for _, b in bridge.batches] == [["codecompanion_mode"]]  # at once
    view.render([Tool(call_id="c", title="t"), event("ToolsFinished", {})])
    view.render([SetVar(name="codecompanion_approvals", value=0), Lock()])
    view.render([event("Checkpoint", {"turn": 1})])  # the round's capture, recorded
    await settle(HOLD / 4)
    assert len(bridge.batches) == 1  # the round's end and its variables wait for the answer
    view.render([event("RequestStreaming", {})])
    await settle(QUIET * 1.5)
    assert [kinds(b) for _, b in bridge.batches][1] == [
        "tool",
        "ToolsFinished",
        "codecompanion_approvals",
        "lock",
        "Checkpoint",
        "RequestStreaming",
    ]


async def test_a_submissions_header_lock_and_spinner_wait_for_the_answer_or_the_hold() -> None:
    bridge = FakeBridge(asyncio.get_running_loop())
    view = NvimChatView(bridge, 1)  # type: ignore[arg-type]
    view.render([event("ChatSubmitted", {})])
    await settle()  # the turn's task starts on a later turn of the loop
    view.render([Lock()])
    view.render([Header(role="llm", text="LLM"), Lock(), Spinner(on=True, text="waiting")])
    view.render([event("RequestStarted", {})])
    await settle(HOLD / 4)
    # The submission's event goes at once; the turn's start waits: the request is on its way.
    assert [kinds(b) for _, b in bridge.batches] == [["ChatSubmitted"]]
    view.render([Spinner(on=False), event("RequestStreaming", {}), Append(text="a")])
    await settle(QUIET * 1.5)
    assert [kinds(b) for _, b in bridge.batches][1] == [
        "lock",
        "header",
        "lock",
        "RequestStarted",
        "spinner",  # the batch's last spinner op: the one before it is never seen
        "RequestStreaming",
        "append",
    ]
    # A slow provider: the turn's start shows once the hold is over.
    view.render([event("ChatSubmitted", {})])
    await settle()
    view.render([Header(role="llm", text="LLM"), Lock()])
    await settle(HOLD / 4)
    assert [kinds(b) for _, b in bridge.batches][2:] == [["ChatSubmitted"]]
    await settle(HOLD)
    assert [kinds(b) for _, b in bridge.batches][3] == ["header", "lock"]


async def test_a_batch_keeps_only_its_last_spinner_and_each_calls_last_status() -> None:
    # A tool round queues a spinner and a status per call and per change; Neovim draws the
    # batch once, so the earlier ones are dropped. Events stay, each once, in order.
    bridge = FakeBridge(asyncio.get_running_loop())
    view = NvimChatView(bridge, 1)  # type: ignore[arg-type]
    for n in range(3):
        view.render([Tool(call_id=f"c{n}", title=f"read {n}", status="pending")])
    for n in range(3):
        view.render([ToolStatus(call_id=f"c{n}", status="running", title=f"reading {n}")])
        view.render([Spinner(on=True, text=f"running {n}"), event("ToolStarted", {"tool": "r"})])
    for n in range(3):
        view.render([ToolStatus(call_id=f"c{n}", status="success"), event("ToolFinished", {})])
    view.render([Spinner(on=False)])
    view.flush()
    (_, batch), *rest = bridge.batches
    assert rest == []
    assert kinds(batch) == [
        *["tool"] * 3,
        *["ToolStarted"] * 3,
        *["tool_status", "ToolFinished"] * 3,
        "spinner",
    ]
    statuses = [op for op in batch if op["kind"] == "tool_status"]
    assert [(op["call_id"], op["status"], op["title"]) for op in statuses] == [
        (f"c{n}", "success", f"reading {n}") for n in range(3)
    ]
    assert [op for op in batch if op["kind"] == "spinner"] == [{"kind": "spinner", "on": False}]

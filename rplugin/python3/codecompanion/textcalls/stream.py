"""Finding call blocks in an answer as it streams, and keeping them out of the text shown.

A call block is a fenced block (```` ```json ````, ```` ```xml ````, or one without an info
word) or a `<tool_call>`/`<tool>` element starting a line, whose text reads as calls (see
`blocks.read_block`); an answer that is nothing but a JSON call object counts too. Fences
are read as Markdown reads them (a fence inside another fence is text), so a block quoted in
an example of a longer code block is never a call.

Two policies:
- `prompt`: the model was told to write calls as blocks; every call block is a call, wherever
  it stands in the answer.
- `recover`: the model was offered tools natively but wrote a call as text. Only a block that
  names an offered tool with arguments that validate counts, and only at the end of the
  answer (nothing but whitespace and other call blocks after it): a call quoted in prose
  (an example followed by explanation) stays text.

Candidate blocks are held back from the buffer until they are closed and read; what turns
out not to be a call is shown then, unchanged. A shown block that still looks like a call (it
names an offered tool, or is a `<tool_call>` element) is kept in `missed`: the answer meant a
call that could not be run, and the chat may ask for it again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .blocks import JSON_LANGS, XML_LANGS, Catalog, TextCall, read_block, read_json

Policy = Literal["prompt", "recover"]
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([^\s`]*)[^`]*$")
_TAG_OPEN = re.compile(r"^ {0,3}<(tool_call|tools|tool)>")
_CANDIDATE_LANGS = XML_LANGS | JSON_LANGS
_MAX_HELD = 200_000  # characters held back at most before they are shown as text


@dataclass(frozen=True)
class ShownText:
    """Text for the buffer."""

    text: str


@dataclass(frozen=True)
class FoundCalls:
    """Calls read from call blocks; `raw` is the text of the blocks, not shown."""

    calls: tuple[TextCall, ...]
    raw: str


Piece = ShownText | FoundCalls


@dataclass
class _Block:
    """A candidate block still open: how it closes, its info word and its lines so far."""

    closer: str
    lang: str
    opener: str
    lines: list[str] = field(default_factory=list)
    fence: bool = True


class CallScanner:
    """Feed an answer's text in any pieces; get the text to show and the calls found."""

    def __init__(self, catalog: Catalog, policy: Policy) -> None:
        self.catalog = catalog
        self.policy = policy
        self.raw: list[str] = []  # everything fed, unchanged
        self.shown: list[str] = []  # everything shown
        self.calls: list[TextCall] = []
        self._line = ""  # the current line so far
        self._line_shown = 0  # how much of it was already shown
        self._block: _Block | None = None
        self._text_fence: str | None = None  # the closing marker of an ordinary code block
        self._held: list[str] = []  # recover: trailing call blocks (and whitespace after them)
        self._held_calls: list[TextCall] = []
        self.missed: list[FoundCalls] = []  # call-like blocks shown as text
        self._start = ""  # leading text until its first non-space character decides
        self._bare: bool | None = None  # the answer is a bare JSON object (None: undecided)
        self._out: list[Piece] = []

    # -- feeding -----------------------------------------------------------------------------

    def feed(self, text: str) -> list[Piece]:
        """The pieces this text completes (text to show at once, calls found)."""
        self.raw.append(text)
        if self._bare is None:
            self._start += text
            stripped = self._start.lstrip()
            if not stripped:
                return []
            self._bare = stripped[0] in "{["
            text, self._start = ("", self._start) if self._bare else (self._start, "")
        if self._bare:
            self._start += text
            if len(self._start) > _MAX_HELD:
                self._bare, held, self._start = False, self._start, ""
                self._scan(held)
        else:
            self._scan(text)
        return self._take()

    def close(self) -> list[Piece]:
        """The remaining pieces once the answer has ended."""
        if self._bare is None:
            self._show(self._start)
        elif self._bare:
            self._close_bare()
        else:
            if self._line:
                line, shown, self._line, self._line_shown = self._line, self._line_shown, "", 0
                self._complete_line(line, shown)
            if self._block is not None:  # an unclosed block at the end: read it as it is
                block, self._block = self._block, None
                self._finish(block, "")
            if self._held_calls:
                self._found(self._held_calls, "".join(self._held))
                self._held, self._held_calls = [], []
        return self._take()

    def _close_bare(self) -> None:
        text = self._start
        calls = read_json(text.strip(), self.catalog)
        if calls is not None and self._accepts(calls):
            self._found(calls, text)
        else:
            self._miss(calls, text)
            self._show(text)

    def _scan(self, text: str) -> None:
        while text:
            head, newline, text = text.partition("\n")
            self._line += head + newline
            if newline:
                line, shown, self._line, self._line_shown = self._line, self._line_shown, "", 0
                self._complete_line(line, shown)
        if self._line and self._block is None and not self._may_open(self._line):
            self._show_line_part()

    def _may_open(self, partial: str) -> bool:
        """True while the start of a line could still become a fence or a call tag."""
        if self._line_shown or self._text_fence is not None:
            return False
        if self._held and not partial.strip():
            return True
        start = partial.lstrip(" ")
        if len(partial) - len(start) > 3:
            return False
        for prefix in ("```", "~~~", "<tool_call>", "<tools>", "<tool>"):
            if start.startswith(prefix) or prefix.startswith(start):
                return True
        return False

    def _show_line_part(self) -> None:
        part = self._line[self._line_shown :]
        if part:
            self._show(part)
            self._line_shown = len(self._line)

    # -- one line -------------------------------------------------------------------------

    def _complete_line(self, line: str, shown: int = 0) -> None:
        block = self._block
        if block is not None:
            if _closes(line, block):
                self._block = None
                self._finish(block, line)
            else:
                block.lines.append(line)
                if sum(map(len, block.lines)) > _MAX_HELD:
                    self._block = None
                    self._show(block.opener + "".join(block.lines))
            return
        if self._text_fence is not None:
            if _fence_closes(line, self._text_fence):
                self._text_fence = None
            self._show(line[shown:])
            return
        if not shown and self._open(line):
            return
        self._show(line[shown:])

    def _open(self, line: str) -> bool:
        """Start a block if `line` opens one; True when the line was taken."""
        fence = _FENCE.match(line.rstrip("\n"))
        if fence is not None:
            marker, lang = fence.group(1), fence.group(2).lower()
            if lang in _CANDIDATE_LANGS:
                self._block = _Block(marker, lang, line)
                return True
            self._text_fence = marker
            return False
        tag = _TAG_OPEN.match(line)
        if tag is None:
            return False
        name = tag.group(1)
        block = _Block(f"</{name}>", "tool_call" if name == "tool_call" else "xml", "", fence=False)
        if _closes(line, block):
            self._finish(block, line)
        else:
            block.lines.append(line)
            self._block = block
        return True

    def _finish(self, block: _Block, closing: str) -> None:
        """Read a closed block: calls are found (or held), anything else is shown."""
        if block.fence:
            body = "".join(block.lines)
            raw = block.opener + body + closing
        else:
            raw = "".join(block.lines) + closing
            body = raw
            if block.lang == "tool_call":
                body = re.sub(r"^\s*<tool_call>|</tool_call>\s*$", "", raw.strip())
        calls = read_block(block.lang, body, self.catalog)
        if calls is None or not self._accepts(calls):
            self._miss(calls, raw)
            self._show(raw)
        elif self.policy == "prompt":
            self._found(calls, raw)
        else:
            self._held.append(raw)
            self._held_calls.extend(calls)

    def _accepts(self, calls: list[TextCall]) -> bool:
        """Recover only calls of offered tools whose arguments validate."""
        if self.policy == "prompt":
            return True
        return all(
            self.catalog.offers(c.name) and self.catalog.validate(c.name, c.arguments) is None
            for c in calls
        )

    # -- output ---------------------------------------------------------------------------

    def _show(self, text: str) -> None:
        if not text:
            return
        if self._held:
            if not text.strip():
                self._held.append(text)
                return
            # Text after a call block: the block was quoted, not a call.
            held, calls = "".join(self._held), tuple(self._held_calls)
            self._held, self._held_calls = [], []
            self.missed.append(FoundCalls(calls, held))
            self._emit(held)
        self._emit(text)

    def _miss(self, calls: list[TextCall] | None, raw: str) -> None:
        """Keep a block shown as text that still looks like a call (see the module's note)."""
        if calls or looks_like_call(raw, self.catalog):
            self.missed.append(FoundCalls(tuple(calls or ()), raw))

    def _emit(self, text: str) -> None:
        self.shown.append(text)
        if self._out and isinstance(self._out[-1], ShownText):
            self._out[-1] = ShownText(self._out[-1].text + text)
        else:
            self._out.append(ShownText(text))

    def _found(self, calls: list[TextCall], raw: str) -> None:
        self.calls.extend(calls)
        self._out.append(FoundCalls(tuple(calls), raw))

    def _take(self) -> list[Piece]:
        out, self._out = self._out, []
        return out


_NAMED = re.compile(
    r'"(?:name|tool|tool_name)"\s*:\s*"([^"\\]{1,100})"|<name>\s*([^<]{1,100}?)\s*</name>'
)


def looks_like_call(text: str, catalog: Catalog) -> bool:
    """True for a block that names an offered tool as a call names it, or is a `<tool_call>`
    element: a call the model meant, whether or not it could be read."""
    if "<tool_call>" in text:
        return True
    return any(catalog.offers(a or b) for a, b in _NAMED.findall(text))


def _fence_closes(line: str, marker: str) -> bool:
    stripped = line.strip()
    return (
        len(line) - len(line.lstrip(" ")) <= 3
        and bool(stripped)
        and set(stripped) == {marker[0]}
        and len(stripped) >= len(marker)
    )


def _closes(line: str, block: _Block) -> bool:
    if block.fence:
        return _fence_closes(line, block.closer)
    return block.closer in line

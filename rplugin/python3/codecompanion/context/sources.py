"""Context sent with a message (variables such as `#{buffer}`, slash commands such as `/file`):
what the model reads."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..outside import Json
from ..render_ops import Context, RenderOp

MAX_LINES = 5000  # lines of one buffer or file sent to the model


@dataclass(frozen=True)
class ContextItem:
    """A buffer or file shared with the model: where it is, its filetype and its lines."""

    kind: str
    path: str
    filetype: str
    lines: tuple[str, ...]
    mention: str | None = None  # the text in the message it stands for, e.g. `#{buffer}`
    numbered: bool = True  # lines of a file get their numbers; a list or an outline is as is
    first: int = 1  # the number of the first line (a selection starts where it starts)
    source: str | None = None  # the file an image is read from when the message is sent

    @classmethod
    def from_lua(cls, data: Mapping[str, Any]) -> ContextItem | None:
        """Read one item sent by Lua; None when it is malformed."""
        lines = data.get("lines")
        path = data.get("path")
        if not isinstance(path, str) or not isinstance(lines, list):
            return None
        mention = data.get("mention")
        first = data.get("first")
        source = data.get("file")
        return cls(
            kind=str(data.get("kind") or "file"),
            path=path,
            filetype=str(data.get("filetype") or ""),
            lines=tuple(str(line) for line in lines),
            mention=mention if isinstance(mention, str) else None,
            numbered=data.get("numbered") is not False,
            source=source if isinstance(source, str) else None,
            first=first
            if isinstance(first, int) and not isinstance(first, bool) and first > 0
            else 1,
        )

    @property
    def title(self) -> str:
        """The one line the chat shows for it."""
        return _title(self.kind, self.path, len(self.lines))

    def shown(self) -> str:
        """The lines as the model reads them (numbered from `first` when `numbered`)."""
        shown = self.lines[:MAX_LINES]
        if self.numbered:
            width = len(str(self.first + len(shown) - 1))
            text = "\n".join(f"{i:>{width}}: {line}" for i, line in enumerate(shown, self.first))
        else:
            text = "\n".join(shown)
        cut = len(self.lines) - len(shown)
        return text + (f"\n[{cut} more lines not shown]" if cut > 0 else "")

    def for_llm(self) -> str:
        """The block the model reads."""
        language = self.filetype or ""
        numbers = ", with line numbers" if self.numbered else ""
        fence = "````" if any(line.startswith("```") for line in self.lines) else "```"
        return (
            f"Content of the {self.kind} `{self.path}`"
            + (f" (filetype {self.filetype})" if self.filetype else "")
            + f"{numbers}:\n{fence}{language}\n{self.shown()}\n{fence}"
        )

    def to_lua(self) -> dict[str, Any]:
        """The item as Lua's context module holds it."""
        return {
            "kind": self.kind,
            "path": self.path,
            "filetype": self.filetype,
            "lines": list(self.lines),
            "numbered": self.numbered,
            "first": self.first,
        }

    def summary(self) -> dict[str, Any]:
        """What a saved chat keeps about it (the content is in the message already)."""
        return {"kind": self.kind, "path": self.path, "lines": len(self.lines)}


def _title(kind: object, path: object, lines: object) -> str:
    """The one line the chat shows for an item, live or restored from its summary."""
    if kind == "image":
        return f"> image `{path}`"
    return f"> {kind} `{path}` ({lines} line{'' if lines == 1 else 's'})"


def read_items(raw: Json) -> list[ContextItem]:
    """Context items from Lua's list; malformed ones are dropped."""
    items = (
        [ContextItem.from_lua(d) for d in raw if isinstance(d, Mapping)]
        if isinstance(raw, list)
        else []
    )
    return [item for item in items if item is not None]


def with_context(text: str, items: list[ContextItem]) -> str:
    """The message the model reads: mentions name what they stand for, context blocks follow."""
    named: dict[str, list[ContextItem]] = {}
    for item in items:
        if item.mention:
            named.setdefault(item.mention, []).append(item)
    for mention, group in named.items():
        # `#{buffers}` stands for several blocks: every one is named where it was written.
        kind = group[0].kind if len(group) == 1 else group[0].kind + "s"
        paths = ", ".join(f"`{item.path}`" for item in group)
        text = text.replace(mention, f"the {kind} {paths} (below)")
    blocks = [item.for_llm() for item in items]
    return "\n\n".join([text, *blocks]) if blocks else text


def context_ops(items: list[ContextItem]) -> list[RenderOp]:
    """One folded line per item in the chat (`zo` shows what was sent)."""
    ops: list[RenderOp] = [Context(title=item.title, text=item.shown()) for item in items]
    return ops


def replay_ops(summaries: Json) -> list[RenderOp]:
    """The lines a restored chat shows for the context its message carried."""
    ops: list[RenderOp] = []
    for data in summaries if isinstance(summaries, list) else []:
        if isinstance(data, Mapping):
            title = _title(data.get("kind"), data.get("path"), data.get("lines"))
            ops.append(Context(title=title, text=""))
    return ops

"""An edit written as a file's changed copy: an answer that calls nothing but shows a fenced copy
of a file read in this turn with some lines changed, read as the `insert_edit_into_file` call
it means (small models often print the fixed file instead of making the call).

The copy is matched to the read on its non-blank lines; each change inside the part it copies
becomes one edit whose old text is the file's own lines, widened until it matches one place."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from ..messages import Message
from .prompt import TEXT_CALLS

EDIT_TOOL = "insert_edit_into_file"
SHOWN_EDIT = "shown_edit"  # the text_calls extra of an answer's call read from a changed copy
FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1[ \t]*$", re.M | re.S)
READ_HEAD = re.compile(r"^(.+?)(?: \(as its buffer open in Neovim has it\))?: lines \d+-\d+ of ")
SHARED = 0.5  # the part of a block's non-blank lines found in the read for it to be its copy
MAX_HUNKS = 3
MAX_WIDEN = 5  # lines of context added, at most, to make an edit's old text match one place
MAX_DROPPED = 5  # non-blank lines a change may remove without adding any: more is an elision
# A line standing for lines left out ("# ...", "// rest unchanged"): the copy is not the file.
ELISION = re.compile(
    r"^\s*(?:#|//|--|/\*|<!--|;)?\s*(?:\.\.\.|…)"
    r"|(?:#|//|--|/\*).*\b(?:unchanged|existing|rest of)\b",
    re.I,
)


@dataclass(frozen=True)
class Replacement:
    """One change: the file's lines as they are, and what the copy has instead."""

    old: str
    new: str

    def to_json(self) -> dict[str, str | None]:
        """The edit as `insert_edit_into_file` takes it."""
        return {"oldText": self.old, "newText": self.new, "replaceAll": None}


@dataclass(frozen=True)
class ShownEdit:
    """The file an answer showed changed, and the replacements (none: the change could not be
    read as at most MAX_HUNKS replacements that each match one place)."""

    path: str
    edits: tuple[Replacement, ...]

    def arguments(self) -> dict[str, object]:
        """The edit tool's arguments for this change."""
        return {
            "filepath": self.path,
            "edits": [edit.to_json() for edit in self.edits],
            "explanation": "The change shown in the answer above.",
        }


def _blocks(text: str) -> Iterator[list[str]]:
    """Each fenced block's lines, without their line ends."""
    for match in FENCE.finditer(text):
        yield match[2].splitlines()


def this_turn(messages: Sequence[Message]) -> Iterator[Message]:
    """The messages since the user's last message, newest first."""
    for message in reversed(messages):
        if message.role == "user" and message.visible:
            return
        yield message


def _reads(messages: Sequence[Message]) -> list[tuple[str, list[str]]]:
    """The reads since the user's last message, newest first: (path, the lines read)."""
    found: list[tuple[str, list[str]]] = []
    for message in this_turn(messages):
        if message.role != "tool" or message.tool_name != "read_file" or message.is_error:
            continue
        head = READ_HEAD.match(message.content or "")
        body = next(_blocks(message.content or ""), None)
        if head and body is not None:
            found.append((head[1], body))
    return found


def _solid(lines: list[str]) -> list[tuple[int, str]]:
    """The non-blank lines with their index, trailing blanks dropped for comparing."""
    return [(i, line.rstrip()) for i, line in enumerate(lines) if line.strip()]


def _once(whole: str, part: str) -> bool:
    """Whether `part` occurs exactly once in `whole`, overlapping occurrences counted."""
    first = whole.find(part)
    return first >= 0 and whole.find(part, first + 1) < 0


def _unique(lines: list[str], first: int, last: int) -> tuple[int, int] | None:
    """`lines[first:last + 1]` widened by unchanged lines (above first) until it occurs once."""
    # With a final line end: the file's last line is then found where the file has it.
    whole, end = "\n".join(lines) + "\n", len(lines) - 1
    for extra in range(MAX_WIDEN + 1):
        for lo, hi in ((first - extra, last), (first, last + extra), (first - extra, last + extra)):
            lo, hi = max(lo, 0), min(hi, end)
            if _once(whole, "\n".join(lines[lo : hi + 1])):
                return lo, hi
    return None


def _replacement(
    old: list[str], new: list[str], span: tuple[int, int], new_span: tuple[int, int]
) -> Replacement | None:
    """The change of `old[span]` into `new[new_span]` (inclusive), widened to match once."""
    widened = _unique(old, *span)
    if widened is None:
        return None
    lo, hi = widened
    before, after = old[lo : span[0]], old[span[1] + 1 : hi + 1]
    changed = [*before, *new[new_span[0] : new_span[1] + 1], *after]
    return Replacement("\n".join(old[lo : hi + 1]), "\n".join(changed))


Code = tuple[str, int, int, int, int]  # an opcode of difflib: tag, i1, i2, j1, j2


def _copied(codes: list[Code], size: int) -> list[Code] | None:
    """The opcodes of the part of the file the copy shows; None when an edge of a partial copy
    changed (it may be a label, not the file's line)."""
    # Lines of the file before and after the part the copy shows are not changes.
    while codes and codes[0][0] == "delete":
        codes.pop(0)
    while codes and codes[-1][0] == "delete":
        codes.pop()
    if (codes[0][0] != "equal" and codes[0][1] > 0) or (
        codes[-1][0] != "equal" and codes[-1][2] < size
    ):
        return None
    return codes


Span = tuple[int, int, int, int]  # the file's lines first..last, the copy's lines first..last


def _hunk(a: list[tuple[int, str]], b: list[tuple[int, str]], code: Code) -> Span | None:
    """The lines one opcode changes, in the file and in the copy; None when it is no change to
    read (an elision, many lines dropped, an insertion with no line before it)."""
    tag, i1, i2, j1, j2 = code
    if any(ELISION.search(text) for _, text in b[j1:j2]) or (
        tag == "delete" and i2 - i1 > MAX_DROPPED
    ):
        return None
    # An insertion or a deletion keeps the unchanged line before it as its anchor.
    lo_a, lo_b = (i1, j1) if tag == "replace" else (i1 - 1, j1 - 1)
    if lo_a < 0 or lo_b < 0:
        return None
    hi_a, hi_b = max(i2 - 1, lo_a), max(j2 - 1, lo_b)
    return a[lo_a][0], a[hi_a][0], b[lo_b][0], b[hi_b][0]


def _made(old: list[str], edits: Sequence[Replacement]) -> bool:
    """Whether the edits apply one after another as the edit tool applies them (each old
    text found once in the text as the edits before it left it)."""
    text = "\n".join(old) + "\n"
    for edit in edits:
        if not _once(text, edit.old):
            return False
        text = text.replace(edit.old, edit.new, 1)
    return True


def _edits(old: list[str], new: list[str], spans: list[Span]) -> tuple[Replacement, ...]:
    """The spans as replacements that apply in order; spans whose widened lines overlap are
    made one; () when there is no such reading."""
    for tried in (spans, [(spans[0][0], spans[-1][1], spans[0][2], spans[-1][3])]):
        made = [_replacement(old, new, (s[0], s[1]), (s[2], s[3])) for s in tried]
        edits = tuple(edit for edit in made if edit is not None)
        if len(edits) == len(made) and _made(old, edits):
            return edits
    return ()


def _line_by_line(a: list[str], b: list[str]) -> list[Code]:
    """The opcodes of a copy as long as the file: its lines compared in place (a changed line
    among repeated ones is that line, not one added and another dropped)."""
    codes: list[Code] = []
    for i, same in enumerate(x == y for x, y in zip(a, b, strict=True)):
        tag = "equal" if same else "replace"
        if codes and codes[-1][0] == tag:
            codes[-1] = (tag, codes[-1][1], i + 1, codes[-1][3], i + 1)
        else:
            codes.append((tag, i, i + 1, i, i + 1))
    return codes


def _opcodes(a: list[str], b: list[str]) -> list[Code]:
    """How the copy `b` differs from the file `a`. A copy about as long as the file is a whole
    copy: compared in place when as long, else the lines it starts and ends with as the file
    does are held in place first, so a change between repeated lines is not read as lines added
    at one end."""
    if len(a) == len(b):
        return _line_by_line(a, b)
    if abs(len(a) - len(b)) > MAX_HUNKS:
        return [*difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()]
    size = min(len(a), len(b))
    head = next((i for i in range(size) if a[i] != b[i]), size)
    tail = next((i for i in range(size - head) if a[-1 - i] != b[-1 - i]), size - head)
    if head == size:
        return [("equal", 0, len(a), 0, len(b))]
    middle = difflib.SequenceMatcher(
        None, a[head : len(a) - tail], b[head : len(b) - tail], autojunk=False
    )
    codes: list[Code] = [("equal", 0, head, 0, head)] if head else []
    codes += [
        (t, i1 + head, i2 + head, j1 + head, j2 + head)
        for t, i1, i2, j1, j2 in middle.get_opcodes()
    ]
    if tail:
        codes.append(("equal", len(a) - tail, len(a), len(b) - tail, len(b)))
    return codes


def _a_changed_copy(codes: list[Code], size: int) -> bool:
    """Whether a copy of `size` lines with these opcodes mostly repeats the file, not all of it
    as it is."""
    common = sum(j2 - j1 for tag, _, _, j1, j2 in codes if tag == "equal")
    return SHARED * size <= common < size


def _changes(old: list[str], new: list[str]) -> tuple[Replacement, ...] | None:
    """The replacements that turn the part of `old` that `new` copies into `new`; None when `new`
    is no changed copy of it, () when its change cannot be read as replacements."""
    a, b = _solid(old), _solid(new)
    if len(b) < 2 or not a:
        return None
    opcodes = _opcodes([t for _, t in a], [t for _, t in b])
    if not _a_changed_copy(opcodes, len(b)):
        return None
    codes = _copied(opcodes, len(a)) or []
    spans = [_hunk(a, b, code) for code in codes if code[0] != "equal"]
    if not codes or not spans or None in spans or len(spans) > MAX_HUNKS:
        return ()
    return _edits(old, new, [span for span in spans if span is not None])


def shown_edit(text: str, messages: Sequence[Message]) -> ShownEdit | None:
    """The file read in this turn that a fenced block of `text` shows changed, or None."""
    reads = _reads(messages)
    for block in _blocks(text):
        for path, lines in reads:
            edits = _changes(lines, block)
            if edits is not None:
                return ShownEdit(path, edits)
    return None


def offered_before(messages: Sequence[Message]) -> bool:
    """Whether a changed copy was already read as an edit since the user's last message."""
    return any(message.extra.get(TEXT_CALLS) == SHOWN_EDIT for message in this_turn(messages))

"""f and g: pure-Python costs, timed in this process with perf_counter."""

from __future__ import annotations

import random
import time

from codecompanion.adapters.base import AdapterSettings, TextDelta
from codecompanion.adapters.openai import OpenAIAdapter
from codecompanion.tools.builtin._support.edits import Edit, apply_edits

from .figures import Results
from .turns import answer_pieces, sse_bytes, text_events

FILE_LINES = 20_000
EVENTS = 10_000
_NAMES = (
    "items request buffer window cursor chunk parser stream answer tool result output "
    "session client server config options layout render header message history store "
    "editor folder path lines offset limit total count index value factor"
).split()


def big_file(lines: int = FILE_LINES) -> str:
    """A Python-looking file of varied lines (seeded, so every run edits the same text)."""
    rng = random.Random(20_000)
    out = []
    for n in range(lines):
        a, b, c = rng.sample(_NAMES, 3)
        if n % 6 == 0:
            out.append(f"def {a}_{b}({c}, limit={rng.randint(1, 999)}):")
        elif n % 6 == 5:
            out.append(f"    return {a}.{b}({c}) or {rng.randint(0, 99)}")
        else:
            out.append(f"    {a} = {b}.{c}({rng.choice(_NAMES)}, {rng.randint(0, 9999)})")
    return "\n".join(out) + "\n"


def fuzzy_edit() -> tuple[str, Edit]:
    """The file, and an edit whose 5-line oldText has two small typos (only fuzzy matching fits)."""
    content = big_file()
    lines = content.split("\n")
    block = lines[12_000:12_005]
    typos = [
        block[0],
        block[1][:-3] + block[1][-2:],
        block[2],
        block[3].replace(".", ",", 1),
        block[4],
    ]
    new = [*block[:4], "    return None  # replaced"]
    return content, Edit("\n".join(typos), "\n".join(new))


def time_fuzzy_edit(content: str, edit: Edit) -> float:
    """One insert_edit_into_file match-and-apply on the big file (ms)."""
    start = time.perf_counter()
    result = apply_edits(content, [edit])
    elapsed = (time.perf_counter() - start) * 1000
    if result.applied[0].strategy != "fuzzy":
        raise RuntimeError(f"expected a fuzzy match, got {result.applied[0].strategy}")
    return elapsed


def parser_stream(events: int = EVENTS) -> list[bytes]:
    """A recorded-shape OpenAI SSE stream of about `events` events, one network chunk each."""
    return sse_bytes(text_events(answer_pieces(events - 4, "BENCHEND")))


def time_parser(chunks: list[bytes]) -> float:
    """Parser cost per SSE event (µs), feeding each event as its own chunk."""
    adapter = OpenAIAdapter(AdapterSettings(name="openai", url="http://127.0.0.1:9/v1"))
    parser = adapter.new_parser()
    text = 0
    start = time.perf_counter()
    for chunk in chunks:
        for event in parser.feed(chunk):
            if isinstance(event, TextDelta):
                text += 1
    parser.close()
    elapsed = time.perf_counter() - start
    if text != len(chunks) - 4:
        raise RuntimeError(f"the parser produced {text} text deltas, expected {len(chunks) - 4}")
    return elapsed / len(chunks) * 1e6


def time_long_line(size: int = 10_000_000, piece: int = 4096) -> float:
    """One SSE event of `size` bytes on one line, fed in `piece`-byte chunks (ms)."""
    body = b'data: {"choices":[{"index":0,"delta":{"content":"' + b"x" * size + b'"}}]}\n\n'
    adapter = OpenAIAdapter(AdapterSettings(name="openai", url="http://127.0.0.1:9/v1"))
    parser = adapter.new_parser()
    start = time.perf_counter()
    events = []
    for offset in range(0, len(body), piece):
        events += parser.feed(body[offset : offset + piece])
    elapsed = (time.perf_counter() - start) * 1000
    if sum(len(e.text) for e in events if isinstance(e, TextDelta)) != size:
        raise RuntimeError("the long line did not parse to one text event")
    return elapsed


def run(results: Results, runs: int) -> None:
    """f, g and the 10 MB line, each `runs` times after one warm-up."""
    content, edit = fuzzy_edit()
    chunks = parser_stream()
    for index in range(runs + 1):
        f = time_fuzzy_edit(content, edit)
        g = time_parser(chunks)
        line = time_long_line()
        if index:
            results.add("f", f)
            results.add("g", g)
            results.note("one 10 MB SSE line in 4 KB chunks (ms)", line)

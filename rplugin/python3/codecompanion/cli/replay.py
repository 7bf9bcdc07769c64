"""`python -m codecompanion replay --adapter NAME FILE`: parse a captured response body offline.

The body (a stream or one JSON document, told apart from its bytes) goes through the adapter's
parser; the assembled assistant message is printed as JSON:
`{"content": str|null, "reasoning": str|null, "tool_calls": [{"id", "name", "arguments"}]}`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from ..errors import CodeCompanionError


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register the `replay` subcommand."""
    from ..adapters import ADAPTERS

    parser = subparsers.add_parser(
        "replay",
        help="parse a captured provider response and print the assistant message as JSON",
        description=__doc__,
    )
    parser.add_argument("--adapter", required=True, choices=sorted(ADAPTERS), help="provider")
    parser.add_argument("file", help="the captured response body ('-' reads stdin)")
    parser.add_argument(
        "--chunk-size",
        type=int,
        default=0,
        help="feed the parser this many bytes at a time (0: all at once)",
    )
    parser.set_defaults(handler=run)


def replay_bytes(adapter_name: str, data: bytes, chunk_size: int = 0) -> dict[str, Any]:
    """The assistant message `data` describes, parsed as adapter `adapter_name` would."""
    from ..adapters import create_adapter
    from ..adapters.base import AdapterSettings
    from ..streams.parser import assemble_message

    # A placeholder url and key: replay never connects, it only needs the parser.
    settings = AdapterSettings(
        name=adapter_name, url="http://replay.invalid", api_key="replay", model="replay"
    )
    parser = create_adapter(settings).new_parser()
    size = chunk_size if chunk_size > 0 else max(len(data), 1)
    events = []
    for start in range(0, len(data), size):
        events += parser.feed(data[start : start + size])
    events += parser.close()
    parser.raise_for_error()
    return assemble_message(events)


def run(args: argparse.Namespace) -> int:
    """Print the assembled message; one-line error and exit 1 on bad input."""
    try:
        data = sys.stdin.buffer.read() if args.file == "-" else Path(args.file).read_bytes()
    except OSError as exc:
        print(f"replay: cannot read {args.file}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    try:
        message = replay_bytes(args.adapter, data, args.chunk_size)
    except CodeCompanionError as exc:
        print(f"replay: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(message, ensure_ascii=False, indent=2))
    return 0

"""Command line: `python -m codecompanion replay|tool ...` for tool authors, scripts and tests."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    """Parse the command line and run one subcommand."""
    from .cli import replay, tool

    parser = argparse.ArgumentParser(prog="codecompanion")
    sub = parser.add_subparsers(dest="command", required=True)
    replay.add_parser(sub)
    tool.add_parser(sub)
    args = parser.parse_args(argv)
    handler = args.handler
    return int(handler(args))


if __name__ == "__main__":
    sys.exit(main())

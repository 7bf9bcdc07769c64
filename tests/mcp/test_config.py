"""The `mcp` setting: servers checked without starting them; secrets never in a repr."""

from __future__ import annotations

import pytest

from codecompanion.mcp.config import check_mcp, parse_server


def test_stdio_and_http_servers_parse() -> None:
    stdio = parse_server("time", {"cmd": "python -m mcp_server_time", "env": {"TZ": "UTC"}})
    assert stdio.cmd == ("python", "-m", "mcp_server_time") and stdio.transport == "stdio"
    assert stdio.requires_approval is True
    http = parse_server("docs", {"url": "https://x/mcp", "headers": {"A": "env:TOKEN"}})
    assert http.transport == "http" and http.headers == {"A": "env:TOKEN"}


def test_secrets_are_not_in_the_repr() -> None:
    server = parse_server("docs", {"url": "https://x/mcp", "headers": {"A": "literal-secret"}})
    assert "literal-secret" not in repr(server)
    server = parse_server("t", {"cmd": ["x"], "env": {"KEY": "other-secret"}})
    assert "other-secret" not in repr(server)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("a b", {"cmd": ["x"]}, "server name"),
        ("s", {"cmd": ["x"], "url": "http://x"}, "either cmd"),
        ("s", {}, "either cmd"),
        ("s", {"cmd": []}, "non-empty"),
        ("s", {"cmd": ["x", 1]}, "list of strings"),
        ("s", {"url": "ftp://x"}, "http(s)"),
        ("s", {"cmd": ["x"], "env": {"A": 1}}, "env must be"),
        ("s", {"cmd": ["x"], "timeout": 0}, "timeout"),
        ("s", {"cmd": ["x"], "requires_approval": "no"}, "requires_approval"),
        ("s", {"cmd": ["x"], "tools": {"t": {"bogus": 1}}}, "unknown key"),
        ("s", {"cmd": ["x"], "colour": 1}, "unknown key"),
        ("s", "python -m x", "expected a dict"),
    ],
)
def test_bad_servers_are_one_line_errors(name: str, value: object, message: str) -> None:
    with pytest.raises(ValueError, match=None) as caught:
        parse_server(name, value)
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_check_keeps_valid_servers_and_functions() -> None:
    def lazy() -> dict[str, object]:
        raise AssertionError("not called while checking")

    kept, errors = check_mcp({"servers": {"ok": {"cmd": ["x"]}, "bad": {"cmd": 3}, "fn": lazy}})
    assert kept == {"servers": {"ok": {"cmd": ["x"]}, "fn": lazy}}
    assert len(errors) == 1 and "bad" in errors[0]
    assert check_mcp([])[0] is None
    assert check_mcp({"servers": [], "x": 1})[1]


def test_a_server_program_may_start_with_the_home_folder() -> None:
    from pathlib import Path

    from codecompanion.mcp.config import parse_server

    config = parse_server("time", {"cmd": "~/.local/share/mcp-time/bin/mcp-server-time --x"})
    assert config.cmd == (str(Path.home() / ".local/share/mcp-time/bin/mcp-server-time"), "--x")

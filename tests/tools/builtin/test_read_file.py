"""read_file: ranges, limits, binary files, buffers, path confinement."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codecompanion.tools.builtin import read_file
from tests.support.builtin import FakeTools, run_tool
from tests.support.fakes import FakeEditor


def _args(path: str, start: object = 0, end: object = -1) -> dict[str, object]:
    return {
        "filepath": path,
        "start_line_number_base_zero": start,
        "end_line_number_base_zero": end,
    }


@pytest.fixture
def ten(project: Path) -> Path:
    path = project / "ten.py"
    path.write_text("".join(f"line {i}\n" for i in range(10)))
    return path


async def test_whole_file(tools: FakeTools, ten: Path) -> None:
    out = await run_tool(read_file, _args("ten.py"), tools)
    assert out.status == "success"
    assert "ten.py: lines 0-9 of 10" in out.for_llm
    assert "```py\nline 0\n" in out.for_llm
    assert "line 9\n```" in out.for_llm
    assert out.for_user == "Read `ten.py` (lines 1-10 of 10)"


async def test_range_is_inclusive_and_end_is_clamped(tools: FakeTools, ten: Path) -> None:
    out = await run_tool(read_file, _args("ten.py", 2, 4), tools)
    assert "line 2\nline 3\nline 4\n```" in out.for_llm
    assert "line 5" not in out.for_llm
    out = await run_tool(read_file, _args("ten.py", 8, 500), tools)
    assert out.status == "success"
    assert "lines 8-9 of 10" in out.for_llm


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (-1, 3, "must be 0 or more"),
        (0, -2, "must be -1 or more"),
        (10, -1, "past the end"),
        (5, 3, "backwards"),
        ("a", 3, "must be an integer"),
        (1.5, 3, "whole number"),
        (True, 3, "must be an integer"),
    ],
)
async def test_range_errors(
    tools: FakeTools, ten: Path, start: object, end: object, message: str
) -> None:
    out = await run_tool(read_file, _args("ten.py", start, end), tools)
    assert out.status == "error"
    assert message in out.for_llm


async def test_null_range_reads_everything(tools: FakeTools, ten: Path) -> None:
    out = await run_tool(read_file, _args("ten.py", None, None), tools)
    assert "lines 0-9 of 10" in out.for_llm


async def test_missing_filepath_and_missing_file(tools: FakeTools) -> None:
    out = await run_tool(read_file, {"start_line_number_base_zero": 0}, tools)
    assert out.status == "error"
    assert "`filepath` must be a string" in out.for_llm
    out = await run_tool(read_file, _args("nope.txt"), tools)
    assert "No such file or directory: nope.txt" in out.for_llm


async def test_directory_is_refused(tools: FakeTools, project: Path) -> None:
    (project / "sub").mkdir()
    out = await run_tool(read_file, _args("sub"), tools)
    assert out.status == "error"
    assert "not a regular file" in out.for_llm


async def test_binary_file_refused(tools: FakeTools, project: Path) -> None:
    (project / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    out = await run_tool(read_file, _args("img.png"), tools)
    assert out.status == "error"
    assert "binary" in out.for_llm


async def test_empty_file(tools: FakeTools, project: Path) -> None:
    (project / "empty.txt").write_text("")
    out = await run_tool(read_file, _args("empty.txt"), tools)
    assert out.status == "success"
    assert "is empty" in out.for_llm


async def test_large_file_needs_ranges(tools: FakeTools, project: Path) -> None:
    (project / "big.txt").write_text("".join(f"row {i}\n" for i in range(5000)))
    out = await run_tool(read_file, _args("big.txt"), tools)
    assert out.status == "error"
    assert "5,000 lines" in out.for_llm
    assert "ranges" in out.for_llm
    out = await run_tool(read_file, _args("big.txt", 100, 199), tools)
    assert out.status == "success"
    assert "lines 100-199 of 5000" in out.for_llm


async def test_byte_limit(tools: FakeTools, project: Path) -> None:
    (project / "wide.txt").write_text(("x" * 10_000 + "\n") * 30)
    out = await run_tool(read_file, _args("wide.txt"), tools)
    assert out.status == "error"
    assert "bytes" in out.for_llm
    assert "end_line_number_base_zero=18" in out.for_llm


async def test_byte_limit_counts_each_lines_utf8_bytes_and_line_end(
    tools: FakeTools, project: Path
) -> None:
    # 200,000 bytes exactly (two-byte characters, line ends counted) reads; one more is refused.
    line = "é" * 9_999 + "\n"  # 19,999 bytes
    (project / "fit.txt").write_text(line * 10 + "a" * 9 + "\n")
    assert (project / "fit.txt").stat().st_size == 200_000
    assert (await run_tool(read_file, _args("fit.txt"), tools)).status == "success"
    (project / "over.txt").write_text(line * 10 + "a" * 10 + "\n")
    out = await run_tool(read_file, _args("over.txt"), tools)
    assert out.status == "error" and "200,001 bytes" in out.for_llm


async def test_crlf_file_reads_as_lines(tools: FakeTools, project: Path) -> None:
    (project / "win.txt").write_bytes(b"a\r\nb\r\n")
    out = await run_tool(read_file, _args("win.txt"), tools)
    assert "```txt\na\nb\n```" in out.for_llm


async def test_reads_loaded_buffer_text(project: Path, ten: Path) -> None:
    editor = FakeEditor(buffers={str(ten): ["unsaved first line", "line 1"]})
    tools = FakeTools(cwd=project, editor=editor)
    out = await run_tool(read_file, _args("ten.py"), tools)
    assert "unsaved first line" in out.for_llm
    assert "(as its buffer open in Neovim has it)" in out.for_llm
    assert "of 2" in out.for_llm


async def test_dotdot_escape_refused_unless_user_allows(tools: FakeTools, project: Path) -> None:
    outside = project.parent / "secret.txt"
    outside.write_text("secret\n")
    out = await run_tool(read_file, _args("../secret.txt"), tools)
    assert out.status == "error"
    assert "outside the project" in out.for_llm
    assert tools.questions == [f"Allow reading a file outside the project: {outside}?"]
    tools.answers.append(True)
    out = await run_tool(read_file, _args(str(outside)), tools)
    assert out.status == "success"
    assert "secret" in out.for_llm


async def test_symlink_escape_refused(tools: FakeTools, project: Path) -> None:
    outside = project.parent / "elsewhere"
    outside.mkdir()
    (outside / "f.txt").write_text("hidden\n")
    os.symlink(outside, project / "link")
    out = await run_tool(read_file, _args("link/f.txt"), tools)
    assert out.status == "error"
    assert "outside the project" in out.for_llm
    assert "hidden" not in out.for_llm


async def test_nul_and_newline_in_path(tools: FakeTools) -> None:
    out = await run_tool(read_file, _args("a\x00b"), tools)
    assert "NUL byte" in out.for_llm
    out = await run_tool(read_file, _args("a\nb"), tools)
    assert "newline" in out.for_llm

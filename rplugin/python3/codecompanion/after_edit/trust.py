"""The user's answer about a project's checks, remembered: once said for a list of checks, the
question comes again only when the list changes (a new command in `package.json`, say)."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .checks import Check

log = logging.getLogger("codecompanion.after_edit")


def digest(checks: Sequence[Check]) -> str:
    """What the answer was given for: the globs and command lines, in order."""
    import hashlib  # not loaded with every chat: the first round that edits needs it

    text = json.dumps([[c.glob, c.command] for c in checks])
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class TrustStore:
    """Answers by project folder, in one JSON file of the plugin's data folder."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def _load(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.warning(
                "%s is unreadable (%s): every project's checks are asked again", self.path, exc
            )
            return {}
        return data if isinstance(data, dict) else {}

    def answer(self, root: Path, checks: Sequence[Check]) -> bool | None:
        """The answer given for exactly these checks in `root`, or None when not asked yet."""
        entry = self._load().get(str(root))
        if not isinstance(entry, dict) or entry.get("digest") != digest(checks):
            return None
        allowed = entry.get("allowed")
        return allowed if isinstance(allowed, bool) else None

    def remember(self, root: Path, checks: Sequence[Check], allowed: bool) -> None:
        """Keep the answer for these checks in `root` (a temp file renamed over the old one)."""
        data = self._load()
        data[str(root)] = {"digest": digest(checks), "allowed": allowed}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        try:
            temp.write_text(json.dumps(data, indent=1), encoding="utf-8")
            os.replace(temp, self.path)
        except OSError as exc:
            log.warning("cannot remember the checks' answer in %s: %s", self.path, exc)
            temp.unlink(missing_ok=True)

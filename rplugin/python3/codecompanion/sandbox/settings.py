"""The `permissions` settings: the chat's mode and what its command sandbox allows."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

Mode = Literal["ask", "edits", "sandboxed", "yolo"]
MODES: tuple[Mode, ...] = get_args(Mode)

# Folders and files a command never reads; `deny_read` in the settings adds to these.
DEFAULT_DENY_READ = (
    "~/.ssh",
    "~/.gnupg",
    "~/.aws",
    "~/.azure",
    "~/.kube",
    "~/.docker",
    "~/.config/gcloud",
    "~/.config/gh",
    "~/.config/hub",
    "~/.netrc",
    "~/.git-credentials",
    "~/.pypirc",
    "~/.npmrc",
    "~/.cargo/credentials.toml",
    "~/.password-store",
    "~/.local/share/keyrings",
    "~/.mozilla",
    "~/.thunderbird",
    "~/.config/google-chrome",
    "~/.config/chromium",
    "~/.config/BraveSoftware",
    "~/.config/microsoft-edge",
    "~/snap/firefox",
    "~/.var/app/org.mozilla.firefox",
)


@dataclass(frozen=True)
class Permissions:
    """The `permissions` table: the default mode and the sandbox's limits."""

    mode: Mode = "ask"
    sandbox: bool = True  # False: commands run unconfined (yolo then asks nothing at all)
    network: bool = False
    deny_read: tuple[str, ...] = field(default=DEFAULT_DENY_READ)
    writable: tuple[str, ...] = ()  # folders writable besides the project and the private temp
    max_processes: int = 1024


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"permissions.{key} must be a list of strings")
    return tuple(value)


def read_permissions(raw: Mapping[str, Any] | None) -> Permissions:
    """The settings from a config table (ValueError with a one-line reason when malformed)."""
    raw = dict(raw or {})
    unknown = set(raw) - {"mode", "sandbox", "network", "deny_read", "writable", "max_processes"}
    if unknown:
        raise ValueError(f"unknown permissions key(s): {', '.join(sorted(unknown))}")
    mode = raw.get("mode", "ask")
    if mode not in MODES:
        raise ValueError(f"permissions.mode must be one of {', '.join(MODES)}, not {mode!r}")
    for key in ("sandbox", "network"):
        if not isinstance(raw.get(key, True), bool):
            raise ValueError(f"permissions.{key} must be true or false")
    limit = raw.get("max_processes", 1024)
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise ValueError("permissions.max_processes must be a positive whole number")
    return Permissions(
        mode=mode,
        sandbox=raw.get("sandbox", True),
        network=raw.get("network", False),
        deny_read=DEFAULT_DENY_READ + _strings(raw.get("deny_read"), "deny_read"),
        writable=_strings(raw.get("writable"), "writable"),
        max_processes=limit,
    )

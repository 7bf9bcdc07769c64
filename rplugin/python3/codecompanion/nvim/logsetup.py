"""Logging for the host: everything to `stdpath("log")/codecompanion.log`, keys redacted."""

from __future__ import annotations

import logging
import os
import re

from ..adapters.secret_mask import mask

_SECRET = re.compile(
    r"(?i)(authorization|x-api-key|x-goog-api-key|api[_-]?key|bearer)([\"':= ]+)([^\s\"',}]+)"
)


class RedactingFormatter(logging.Formatter):
    """Masks anything that looks like a credential, and every known secret, in the record."""

    def __init__(self, fmt: str) -> None:
        super().__init__(fmt)
        # The workspace's resolver fills this set as keys are resolved (see `mask_secrets`).
        self.secrets: set[str] = set()

    def format(self, record: logging.LogRecord) -> str:
        """Format, then replace secret values with `***`."""
        text = mask(super().format(record), self.secrets)  # the one masker (secret_mask.py)
        return _SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}***", text)


def mask_secrets(secrets: set[str]) -> None:
    """Make the log mask every value of `secrets` (a set that keeps growing)."""
    for handler in logging.getLogger("codecompanion").handlers:
        if isinstance(handler.formatter, RedactingFormatter):
            handler.formatter.secrets = secrets


def setup_logging(path: str | None = None, level: str | None = None) -> None:
    """Send the project's log records (and tracebacks) to the log file."""
    target = path or os.environ.get("CODECOMPANION_LOG")
    handler: logging.Handler
    if target:
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        handler = logging.FileHandler(target, encoding="utf-8")
    else:
        handler = logging.StreamHandler()
    handler.setFormatter(RedactingFormatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logger = logging.getLogger("codecompanion")
    logger.handlers[:] = [handler]
    logger.setLevel((level or os.environ.get("CODECOMPANION_LOG_LEVEL") or "INFO").upper())
    logger.propagate = False

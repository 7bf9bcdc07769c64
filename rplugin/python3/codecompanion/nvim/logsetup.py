"""Logging for the host: everything to `stdpath("log")/codecompanion.log`, keys redacted."""

from __future__ import annotations

import logging
import os
import re

_SECRET = re.compile(
    r"(?i)(authorization|x-api-key|x-goog-api-key|api[_-]?key|bearer)([\"':= ]+)([^\s\"',}]+)"
)


class RedactingFormatter(logging.Formatter):
    """Masks anything that looks like a credential in the formatted record."""

    def format(self, record: logging.LogRecord) -> str:
        """Format, then replace secret values with `***`."""
        return _SECRET.sub(lambda m: f"{m.group(1)}{m.group(2)}***", super().format(record))


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

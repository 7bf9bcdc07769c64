"""Python's cyclic garbage collector held off while a request is on its way out."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic garbage collection while a request is built and sent.

    Building a long chat's request allocates a dict per message; in a host holding such a chat
    that triggers full collections of 10–17 ms, which then sit between Enter and the request.
    The body is freed by reference counting; the deferred collection runs while the answer
    streams. Concurrent requests may end a pause early, never leave the collector off.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()

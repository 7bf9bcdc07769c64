"""API keys from configuration: a literal, `env:VAR`, or `cmd:some command` (run once, cached)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping

from ..errors import AuthenticationError

CMD_TIMEOUT = 30.0


def describe_key(spec: str | None) -> str:
    """Where a key comes from, for error messages (never the key itself)."""
    if spec is None:
        return "the adapter's api_key setting"
    if spec.startswith("env:"):
        return f"${spec[4:].strip()}"
    if spec.startswith("cmd:"):
        program = spec[4:].strip().split(" ", 1)[0]
        return f"the output of the api_key command ({program} ...)"
    return "the api_key in the adapter's settings"


class KeyResolver:
    """Resolves key specs; `cmd:` results are cached for the life of this object (the host)."""

    def __init__(self, env: Mapping[str, str] | None = None) -> None:
        self._env = env
        self._cache: dict[str, str] = {}
        self._running: dict[str, asyncio.Future[str]] = {}
        # Every secret handed out (keys, secret headers): what logs and messages must mask.
        self.known: set[str] = set()

    def remember(self, secret: str) -> None:
        """Mask `secret` wherever this resolver's secrets are masked (too short ones are not)."""
        if len(secret) >= 8:
            self.known.add(secret)

    async def resolve(self, spec: str | None) -> str | None:
        """The key for `spec` (None without a spec); AuthenticationError if it cannot be had."""
        key = await self._resolve(spec)
        if key:
            self.remember(key)
        return key

    async def _resolve(self, spec: str | None) -> str | None:
        if spec is None:
            return None
        if spec.startswith("env:"):
            name = spec[4:].strip()
            env = os.environ if self._env is None else self._env
            value = env.get(name, "").strip()
            if not value:
                raise AuthenticationError(f"no API key: environment variable {name} is not set")
            return value
        if spec.startswith("cmd:"):
            return await self._command(spec)
        return spec

    async def _command(self, spec: str) -> str:
        if spec in self._cache:
            return self._cache[spec]
        running = self._running.get(spec)
        if running is not None:
            return await asyncio.shield(running)
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self._running[spec] = future
        try:
            value = await _run(spec[4:].strip(), describe_key(spec))
        except asyncio.CancelledError:
            future.cancel()
            raise
        except Exception as exc:
            future.set_exception(exc)
            future.exception()  # retrieved here so a lone caller leaves no "never retrieved" noise
            raise
        finally:
            self._running.pop(spec, None)
        self._cache[spec] = value
        future.set_result(value)
        return value

    def problem(self, spec: str | None) -> str | None:
        """Why `spec` cannot give a key, without running anything.

        A `cmd:` key that has not run yet is reported as fine: it runs on the first request.
        """
        if spec is None:
            return "no API key configured"
        if spec.startswith("env:"):
            name = spec[4:].strip()
            env = os.environ if self._env is None else self._env
            if not env.get(name, "").strip():
                return f"environment variable {name} is not set"
        return None

    def clear(self) -> None:
        """Forget cached command output (e.g. after the user fixed their key)."""
        self._cache.clear()


async def _run(command: str, label: str) -> str:
    process = await asyncio.create_subprocess_shell(
        command,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    try:
        stdout, stderr = await asyncio.wait_for(process.communicate(), CMD_TIMEOUT)
    except asyncio.TimeoutError:
        raise AuthenticationError(
            f"no API key: {label} timed out after {CMD_TIMEOUT:g} s"
        ) from None
    finally:
        if process.returncode is None:
            # The whole group: a child left holding the pipes would keep wait() from returning.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
    if process.returncode != 0:
        first = stderr.decode(errors="replace").strip().splitlines()[:1]
        detail = f": {first[0][:120]}" if first else ""
        raise AuthenticationError(f"no API key: {label} failed (exit {process.returncode}){detail}")
    value = stdout.decode(errors="replace").strip()
    if not value:
        raise AuthenticationError(f"no API key: {label} printed nothing")
    return value

"""The availability probe: a second RPC client that asks Neovim `nvim_eval("1")` every 20 ms.

Runs as its own process (`python -m bench.probe SOCKET`) so the driver's threads (the
loopback server) never hold its GIL. Each sample is (start, latency) in seconds on the
system's monotonic clock, the same clock as Neovim's `vim.uv.hrtime()` and the server's
`time.monotonic()`. Commands on stdin: `dump` prints the samples so far as one JSON line
and forgets them; end of input stops the probe.
"""

from __future__ import annotations

import json
import select
import sys
import time

INTERVAL = 0.020


def main(argv: list[str]) -> int:
    """Probe the Neovim listening on argv[1] until stdin closes."""
    import pynvim

    nvim = pynvim.attach("socket", path=argv[1])
    samples: list[tuple[float, float]] = []
    print("ready", flush=True)
    next_at = time.monotonic()
    while True:
        wait = max(0.0, next_at - time.monotonic())
        readable, _, _ = select.select([sys.stdin], [], [], wait)
        if readable:
            line = sys.stdin.readline()
            if not line:
                return 0
            if line.strip() == "dump":
                print(json.dumps(samples), flush=True)
                samples = []
            continue
        start = time.monotonic()
        try:
            nvim.api.eval("1")
        except Exception:  # Neovim went away: the run is over
            return 0
        samples.append((start, time.monotonic() - start))
        next_at = start + INTERVAL


if __name__ == "__main__":
    sys.exit(main(sys.argv))

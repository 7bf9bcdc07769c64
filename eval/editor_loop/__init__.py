"""The editor in the loop, measured: one task run with the loop (diagnostics with each edit's
result) and without it (`opts["editor"]["diagnostics"] = False`, no checks), pylsp attached to
Python buffers in both, through the eval's runner and recording proxy."""

"""Settings of the inventory server."""

import os

HOST = os.environ.get("INVENTORY_HOST", "127.0.0.1")
PORT = int(os.environ.get("INVENTORY_PORT", "8437"))
WORKERS = 4

import json
from pathlib import Path

CONFIG = json.loads((Path(__file__).parent / "conf" / "config.json").read_text())

"""`python -m eval.editor_loop [--runs 5] [--port 8094] [--out FILE] [--plugin-root DIR]`: the
task(s) in eval/editor_loop/tasks run through this plugin with the loop and without it, each run
recorded as it ends (a re-run skips what the records file holds), then the summary table."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path

from ..drivers import ours as ours_driver
from ..drivers.editor import Editor, xdg_env
from ..drivers.ours import Ours, OursOptions, config_text
from ..proxy import RecordingProxy, Sampling
from ..records import load_records
from ..report import table
from ..runner import Runner
from ..shared import ROOT, start_realmodel
from ..task import Task, load_suite
from ..transcript import Transcript

HERE = Path(__file__).resolve().parent
# Without the loop: an edit's result carries no diagnostics and no checks run after a round.
WITHOUT = "opts['editor'] = {'diagnostics': False, 'find_checks': False}\n"
WITH = "opts['editor'] = {'diagnostics': 'problems', 'find_checks': False}\n"


class LspOurs(Ours):
    """This plugin with pylsp started for Python buffers, as a user's Neovim would have it; each
    run's saved chat is copied to `transcripts` (the records keep only the last answer)."""

    transcripts: Path | None = None

    def run(self, task: Task, project: Path, base_url: str, scratch: Path) -> Transcript:
        """One run, as Ours.run with the init that also starts the language server."""
        config = scratch / "codecompanion.py"
        config.write_text(config_text(task, f"{base_url}/v1", self.options))
        setup = {"python": sys.executable, "start": "lazy", "config_file": str(config)}
        env = {
            **xdg_env(scratch),
            "EVAL_PLUGIN_ROOT": str(self.options.root),
            "EVAL_SETUP": json.dumps(setup),
            "EVAL_BASE_INIT": str(ours_driver.INIT),
            "EVAL_PYLSP": str(Path(sys.executable).parent / "pylsp"),
            "PYTHONPATH": str(self.options.root / "rplugin" / "python3"),
            "OPENAI_API_KEY": "",
        }
        editor = Editor(HERE / "init.lua", env)
        try:
            return self._turn(editor, task, project, scratch)
        finally:
            editor.close()
            self._keep(scratch)

    def _keep(self, scratch: Path) -> None:
        """Copy the saved chat into `transcripts`, named by variant and the time the run ended."""
        if self.transcripts is None:
            return
        self.transcripts.mkdir(parents=True, exist_ok=True)
        chats = sorted((scratch / "data" / "nvim" / "codecompanion" / "chats").glob("*.json"))
        stamp = time.strftime("%H%M%S", time.gmtime())  # the run's end, UTC
        for chat in chats[-1:]:
            shutil.copy(chat, self.transcripts / f"{self.name}-{stamp}.json")


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m eval.editor_loop", description=__doc__)
    p.add_argument("--tasks", type=Path, default=HERE / "tasks", help="a folder of task folders")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--port", type=int, default=8094)
    p.add_argument("--url", default="")
    p.add_argument("--out", type=Path, default=HERE / "results" / "records.jsonl")
    p.add_argument("--plugin-root", type=Path, default=ROOT)
    p.add_argument("--summary", action="store_true", help="only print the summary of --out")
    return p


def main(argv: list[str] | None = None) -> int:
    """Run both variants `--runs` times (alternating which goes first), then summarise."""
    args = _parser().parse_args(argv)
    out = args.out.resolve()
    if not args.summary:
        url = (args.url or start_realmodel(args.port)).rstrip("/").removesuffix("/v1")
        proxy = RecordingProxy(url, Sampling(temperature=0.2)).start()
        root = args.plugin_root.resolve()
        variants = []
        for label, extra in (("loop", WITH), ("no-loop", WITHOUT)):
            plugin = LspOurs(OursOptions(extra_config=extra, root=root))
            plugin.name = label
            plugin.transcripts = out.parent / "transcripts"
            variants.append(plugin)
        setup = {"url": url, "plugin_root": str(root), "temperature": 0.2}
        try:
            Runner(proxy, out, setup).run_suite(load_suite(args.tasks), variants, args.runs)
        finally:
            proxy.stop()
    records = list(load_records(out).values())
    print(table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())

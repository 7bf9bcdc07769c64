"""The tool examples in README.md and :help run as written (docs stay true to the code)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_tool_examples() -> str:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Write your own tool") : text.index("## Security model")]
    return "\n\n".join(re.findall(r"```python\n(.*?)```", section, re.S))


def help_examples() -> str:
    text = (ROOT / "doc" / "codecompanion.txt").read_text()
    section = text[text.index("*codecompanion-tools*") : text.index("*codecompanion-approvals*")]
    blocks = re.findall(r">python\n(.*?)\n<", section, re.S)
    return "\n\n".join(textwrap.dedent(b) for b in blocks)


def run_tool(config: Path, cwd: Path, name: str, args: dict[str, object]) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-m", "codecompanion", "tool", name, "--config", str(config)]
        + ["--cwd", str(cwd), "--args", json.dumps(args), "--yes"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
        env={
            "PYTHONPATH": str(ROOT / "rplugin" / "python3"),
            "PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin",
        },
    )
    assert done.stdout, done.stderr
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_readme_tools_run(tmp_path: Path) -> None:
    config = tmp_path / "codecompanion.py"
    config.write_text(readme_tool_examples())
    (tmp_path / "words.txt").write_text("one two three\n")
    (tmp_path / "test_ok.py").write_text("def test_ok():\n    assert True\n")
    args = {"num1": 100, "num2": 50, "operation": "multiply"}
    calc = run_tool(config, tmp_path, "calculator", args)
    assert calc["status"] == "success" and calc["for_llm"] == "5000"
    words = run_tool(config, tmp_path, "word_count", {"path": "words.txt"})
    assert words["status"] == "success" and "3" in str(words["for_llm"])
    tests = run_tool(config, tmp_path, "pytest_file", {"path": "test_ok.py"})
    assert tests["status"] == "success" and "1 passed" in str(tests["for_llm"])


def test_help_calculator_runs(tmp_path: Path) -> None:
    config = tmp_path / "codecompanion.py"
    config.write_text(help_examples())
    calc = run_tool(config, tmp_path, "calculator", {"num1": 7, "num2": 6, "operation": "multiply"})
    assert calc["status"] == "success" and calc["for_llm"] == "42"
    zero = run_tool(config, tmp_path, "calculator", {"num1": 1, "num2": 0, "operation": "divide"})
    assert zero["status"] == "error" and "zero" in str(zero["for_llm"])

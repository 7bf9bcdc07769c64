"""The tool examples in README.md and :help run as written (docs stay true to the code)."""

from __future__ import annotations

import ast
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
    today = run_tool(
        config, tmp_path, "calculator_today", {"num1": "7", "num2": 6, "operation": "add"}
    )
    assert today["status"] == "success" and str(today["for_llm"]).endswith("13")
    assert "read as a number" in str(today["for_llm"])


def readme_adapter_rows() -> dict[str, str]:
    """Adapter name → the config example of its row in README's adapters table."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index("### Adapters") : text.index("## The chat")]
    rows = re.findall(r"^\| `(\w+)` \|.*?\| `(\"\w+\": \{.*?\})`", section, re.M)
    return dict(rows)


def help_adapters_block() -> dict[str, dict[str, object]]:
    text = (ROOT / "doc" / "codecompanion.txt").read_text()
    section = text[text.index("*codecompanion-adapters*") : text.index("*codecompanion-tools*")]
    namespace: dict[str, dict[str, dict[str, object]]] = {}
    exec(textwrap.dedent(re.findall(r">python\n(.*?)\n<", section, re.S)[0]), namespace)
    return namespace["adapters"]


def test_adapter_tables_list_every_adapter_with_a_working_example() -> None:
    from codecompanion.adapters import ADAPTERS, create_adapter
    from codecompanion.adapters.base import AdapterSettings

    readme: dict[str, dict[str, object]] = {}
    for name, example in readme_adapter_rows().items():
        parsed = ast.literal_eval("{" + example + "}")
        assert list(parsed) == [name]
        readme[name] = parsed[name]
    helped = help_adapters_block()
    assert sorted(readme) == sorted(helped) == sorted(ADAPTERS)
    known = set(AdapterSettings.__dataclass_fields__) - {"name", "extra"}
    for name, config in [*readme.items(), *helped.items()]:
        settings = AdapterSettings(name=name, **{k: v for k, v in config.items() if k in known})
        assert create_adapter(settings).name == name

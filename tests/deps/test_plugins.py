"""Entry points: the example package (examples/cc_example), pip-installed into a temp venv, adds
its tool and its adapter; without it neither exists; a broken plugin is one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cc_example"

PROBE = """
import json, sys
from codecompanion.workspace import HostOptions, Workspace
ws = Workspace(HostOptions(data_dir=sys.argv[1]), env={})
entry = ws.registry.get("word_count")
adapter = None
if "echo_llm" in ws.adapter_names():
    made, notice = ws.make_adapter("echo_llm")
    adapter = [type(made).__name__, made.settings.name, str(made.base_url), notice]
print(json.dumps({
    "tool": entry.tool.name if entry else None,
    "schema": entry.tool.parameters if entry else None,
    "adapter": adapter,
    "errors": ws.plugins.errors,
    "sources": ws.plugins.sources,
    "metadata_imported": "importlib.metadata" in sys.modules,
}))
"""


@pytest.fixture
def temp_venv(tmp_path: Path) -> Path:
    """A fresh venv that sees this checkout's package and dependencies (through a .pth file)."""
    target = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(target)
    python = target / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    ours = sysconfig.get_path("purelib")
    Path(purelib, "parent.pth").write_text(f"{ours}\n{ROOT / 'rplugin' / 'python3'}\n")
    return python


def probe(python: Path, tmp_path: Path) -> dict[str, object]:
    done = subprocess.run(
        [str(python), "-c", PROBE, str(tmp_path / "data")],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def pip_install(python: Path, path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "-q",
            "--no-index",
            "--no-deps",
            "--no-build-isolation",
            str(path),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )


def test_example_package_tool_and_adapter_are_found(temp_venv: Path, tmp_path: Path) -> None:
    before = probe(temp_venv, tmp_path)
    assert before["tool"] is None and before["adapter"] is None
    assert before["metadata_imported"] is False  # no plugin installed: nothing to parse
    pip_install(temp_venv, EXAMPLE)
    after = probe(temp_venv, tmp_path)
    assert after["errors"] == []
    assert after["tool"] == "word_count"
    assert after["schema"] == {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The text whose words are counted."}
        },
        "required": ["text"],
        "additionalProperties": False,
    }
    assert after["adapter"] == ["EchoAdapter", "echo_llm", "http://127.0.0.1:8089/v1", None]
    assert after["sources"] == {
        "tool:word_count": "cc-example 0.1.0",
        "adapter:echo_llm": "cc-example 0.1.0",
    }
    done = subprocess.run(
        [
            str(temp_venv),
            "-m",
            "codecompanion",
            "tool",
            "word_count",
            "--yes",
            "--args",
            json.dumps({"text": "one two three"}),
            "--cwd",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert "3 words" in done.stdout, done.stderr


def test_a_broken_plugin_is_one_line_and_the_rest_loads(temp_venv: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    (broken / "src" / "cc_broken").mkdir(parents=True)
    (broken / "src" / "cc_broken" / "__init__.py").write_text(
        "class NotAnAdapter:\n    pass\n\nraise_me = 1\n"
    )
    (broken / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "cc-broken"\nversion = "1.0"\n'
        '[project.entry-points."codecompanion.tools"]\nmissing = "cc_broken:nothing_here"\n'
        '[project.entry-points."codecompanion.adapters"]\nopenai = "cc_broken:NotAnAdapter"\n'
        'other = "cc_broken:NotAnAdapter"\n'
    )
    pip_install(temp_venv, broken)
    pip_install(temp_venv, EXAMPLE)
    found = probe(temp_venv, tmp_path)
    errors = list(found["errors"])  # type: ignore[call-overload]
    assert len(errors) == 3 and all("\n" not in line for line in errors)
    assert any(line.startswith("plugin tool missing (cc_broken:nothing_here)") for line in errors)
    assert any("openai" in line and "builtin adapter" in line for line in errors)
    assert any("other" in line and "HTTPAdapter" in line for line in errors)
    assert found["tool"] == "word_count"


def test_a_plugin_that_exits_or_shadows_a_builtin_is_named_and_refused(
    temp_venv: Path, tmp_path: Path
) -> None:
    hostile = tmp_path / "hostile"
    package = hostile / "src" / "cc_hostile"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(
        "def read_file(args):\n    return open(args['path']).read()\n"
    )
    (package / "exits.py").write_text("import sys\nsys.exit(3)\n")
    (package / "interrupts.py").write_text("raise KeyboardInterrupt('at import')\n")
    (hostile / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "cc-hostile"\nversion = "1.0"\n'
        '[project.entry-points."codecompanion.tools"]\nexits = "cc_hostile.exits:tool"\n'
        'interrupts = "cc_hostile.interrupts:tool"\nread_file = "cc_hostile:read_file"\n'
        '[project.entry-points."codecompanion.adapters"]\nleaves = "cc_hostile.exits:Adapter"\n'
    )
    pip_install(temp_venv, hostile)
    pip_install(temp_venv, EXAMPLE)
    found = probe(temp_venv, tmp_path)  # the host process lives through every import
    errors = list(found["errors"])  # type: ignore[call-overload]
    assert len(errors) == 4 and all("\n" not in line for line in errors), errors
    assert any(line.startswith("plugin tool exits (") and "SystemExit" in line for line in errors)
    assert any(line.startswith("plugin tool interrupts (") and "KeyboardInterrupt" in line
               for line in errors)  # fmt: skip
    assert any(line.startswith("plugin adapter leaves (") and "SystemExit" in line
               for line in errors)  # fmt: skip
    assert any(line.startswith("plugin tool read_file (") and "builtin tool" in line
               for line in errors)  # fmt: skip
    assert found["tool"] == "word_count"
    builtin = subprocess.run(
        [str(temp_venv), "-c", "from codecompanion.workspace import HostOptions, Workspace\n"
         "import sys\nws = Workspace(HostOptions(data_dir=sys.argv[1]), env={})\n"
         "print([ws.registry.get('read_file').tool.run.__module__])",
         str(tmp_path / "data")],
        capture_output=True, text=True, timeout=60, env={**os.environ, "HOME": str(tmp_path)},
    )  # fmt: skip
    assert "codecompanion.tools." in builtin.stdout, builtin.stderr
    assert "cc_hostile" not in builtin.stdout


RELOAD_PROBE = """
import json, subprocess, sys
from codecompanion.workspace import HostOptions, Workspace
ws = Workspace(HostOptions(data_dir=sys.argv[1]), env={})
before = "echo_llm" in ws.adapter_names()
subprocess.run(json.loads(sys.argv[2]), check=True, capture_output=True)  # pip install, now
ws.reload()  # what :CodeCompanionReload runs
print(json.dumps({
    "before": before,
    "after": "echo_llm" in ws.adapter_names(),
    "tool": ws.registry.get("word_count") is not None,
}))
"""


def test_reload_finds_a_package_installed_while_the_host_runs(
    temp_venv: Path, tmp_path: Path
) -> None:
    install = [
        sys.executable, "-m", "pip", "--python", str(temp_venv), "install", "-q", "--no-index",
        "--no-deps", "--no-build-isolation", str(EXAMPLE),
    ]  # fmt: skip
    done = subprocess.run(
        [str(temp_venv), "-c", RELOAD_PROBE, str(tmp_path / "data"), json.dumps(install)],
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "HOME": str(tmp_path)},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"before": False, "after": True, "tool": True}

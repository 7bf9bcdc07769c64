"""run_command starts a line of plain words as the program itself, anything else through sh."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codecompanion.messages import ToolCall
from codecompanion.tools.builtin import run_command
from codecompanion.tools.builtin._support.plain_command import plain_argv, shell_like_env
from codecompanion.tools.model.contract import ToolContext
from codecompanion.tools.runtime.child_env import EnvPolicy
from codecompanion.tools.runtime.process import run_process
from tests.support.builtin import FakeTools

PLAIN = {
    "sleep 2": ["sleep", "2"],
    "  ls -la src/  ": ["ls", "-la", "src/"],
    "git log --oneline -n 5": ["git", "log", "--oneline", "-n", "5"],
    "dd if=a of=b bs=1M count=1": ["dd", "if=a", "of=b", "bs=1M", "count=1"],
    "make\ttest": ["make", "test"],
    "./run.sh a,b user@host:/x +1 50%": ["./run.sh", "a,b", "user@host:/x", "+1", "50%"],
}

# Every shell feature and every builtin: quotes, expansions, globs, tildes, operators,
# redirections, comments, assignments, line breaks, subshells and groups.
NEEDS_THE_SHELL = [
    "",
    "   ",
    "echo hi",
    "cd src",
    "true",
    "printf x",
    "kill 1",
    "test -f a",
    "[ -f a ]",
    "pwd",
    "type ls",
    "exec ls",
    "ls *.py",
    "ls a?",
    "ls [ab]",
    "ls {a,b}",
    "ls ~",
    "ls ~/x",
    "ls $HOME",
    "ls ${HOME}",
    "ls $(pwd)",
    "ls `pwd`",
    "ls 'a b'",
    'ls "a b"',
    "ls a\\ b",
    "ls; ls",
    "ls && ls",
    "ls || ls",
    "ls | wc",
    "ls &",
    "ls > out",
    "ls < in",
    "ls 2>&1",
    "ls # comment",
    "A=1 ls",
    "A=1",
    "ls\nrm x",
    "(ls)",
    "{ ls; }",
    "! ls",
    "if true; then ls; fi",
]


@pytest.mark.parametrize(("line", "words"), PLAIN.items())
def test_plain_lines_are_their_words(line: str, words: list[str]) -> None:
    assert plain_argv(line) == words


@pytest.mark.parametrize("line", NEEDS_THE_SHELL)
def test_everything_else_needs_the_shell(line: str) -> None:
    assert plain_argv(line) is None


def test_pwd_is_the_working_directory_as_the_shell_sets_it(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    link = tmp_path / "link"
    link.symlink_to(real)
    root = os.path.realpath(real)
    assert shell_like_env({"PWD": "/elsewhere", "A": "1"}, root) == {"PWD": root, "A": "1"}
    assert shell_like_env({"A": "1"}, root)["PWD"] == root
    assert shell_like_env({"PWD": str(link)}, root) == {"PWD": str(link)}  # same directory
    assert shell_like_env({"PWD": "link"}, root)["PWD"] == root  # not absolute


def _context(root: Path, env: dict[str, str]) -> ToolContext:
    """A call's context in `root` whose processes get `env`."""
    tools = FakeTools(cwd=root)
    tools.environment = lambda: env  # type: ignore[method-assign]
    return tools.context(ToolCall("1", "run_command", {}))


@pytest.mark.parametrize(
    "line", ["printenv PWD", "ls -a", "env", "id -u", "uname -s", "expr 6 * 7"]
)
async def test_direct_start_gives_what_the_shell_gives(tmp_path: Path, line: str) -> None:
    (tmp_path / "file.txt").write_text("x")
    env = EnvPolicy().environment() | {"PWD": "/somewhere/else"}
    direct = await run_command._run(_context(tmp_path, env), line, tmp_path, 10, False)
    shell = await run_process(["sh", "-c", line], cwd=tmp_path, timeout=10, env=env)
    expected = ("sh", "-c", line) if "*" in line else tuple(line.split())
    assert direct.argv == expected
    assert (direct.exit_code, direct.stderr) == (shell.exit_code, shell.stderr)
    own_lines = ("CODECOMPANION_TOOL_RUN=", "_=")  # the run's marker; bash's last command
    # The shell passes the environment on in its own order.
    mine = sorted(x for x in direct.stdout.splitlines() if not x.startswith(own_lines))
    assert mine == sorted(x for x in shell.stdout.splitlines() if not x.startswith(own_lines))


async def test_a_program_that_cannot_start_directly_goes_to_the_shell(tmp_path: Path) -> None:
    env = EnvPolicy().environment()
    missing = await run_command._run(
        _context(tmp_path, env), "no-such-program-xyz --flag", tmp_path, 10, False
    )
    assert missing.argv == ("sh", "-c", "no-such-program-xyz --flag")
    assert missing.exit_code == 127
    assert "not found" in missing.stderr
    script = tmp_path / "noshebang"
    script.write_text("echo from a script without a first line\n")
    script.chmod(0o755)
    ran = await run_command._run(_context(tmp_path, env), "./noshebang", tmp_path, 10, False)
    assert ran.argv == ("sh", "-c", "./noshebang")
    assert (ran.exit_code, ran.stdout) == (0, "from a script without a first line\n")
    plain = tmp_path / "notexec"
    plain.write_text("echo never\n")
    denied = await run_command._run(_context(tmp_path, env), "./notexec", tmp_path, 10, False)
    assert denied.argv == ("sh", "-c", "./notexec")
    assert denied.exit_code == 126

"""Allow and deny rules against lines that read as harmless but run or write: options of
read-only programs that run programs or write files, bash's array-subscript evaluation,
`${...}` forms and option spellings, unmodelled wrappers, and git's control files spelled as
the shell will read them.

Each line is first run in a real shell (bash, and dash where `sh` is dash) to show it does
what it is said to do, so a test of the rules cannot pass by accident; then run_command
gets it with the rules, and must ask (or deny) without anything happening.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codecompanion.messages import ToolCall
from codecompanion.tools.runtime.approvals import rule_verdict
from codecompanion.tools.runtime.shell_rules import read
from codecompanion.tools.runtime.system import ToolSystem
from tests.support.fakes import RecordingChat, ScriptedApprover
from tests.support.shell_system import run_command_system

READ_ONLY_ALLOW = ["rg *", "sed *", "git *", "tar *", "sort *", "uniq *", "xxd *", "find *"]

# Each runs ./mk (which creates `made`) or writes a file, under an allow rule above.
READ_ONLY_LINES = [
    "sed -n '1e ./mk' data",
    "sed -n '1s/.*/.\\/mk/e' data",
    "sed -n 'w out' data",
    "sed 's/a/b/w out' data",
    "sed -i 's/a/b/' data",
    "sed --in-pl 's/a/b/' data",
    "git grep -O./mk alpha",
    "git grep --open-files-in-pager=./mk alpha",
    "git grep --open=./mk alpha",
    "git diff --output=out HEAD~1",
    "git show --output=out HEAD",
    "git log -p --output out -1",
    "tar -tf a.tar -I ./mk",
    "tar -tf a.tar --use-compress-program=./mk",
    "tar -tf a.tar --use-comp=./mk",
    "tar -tf a.tar --checkpoint=1 --checkpoint-action=exec=./mk",
    "tar -xf a.tar",
    "tar xf a.tar",
    "tar tfI a.tar ./mk",
    "sort -o out data",
    "sort data -o out",
    "sort --outp=out data",
    "uniq data out",
    "xxd data out",
    "xxd -r data.hex out",
    "find . -maxdepth 0 -fprint out",
    "find . -name victim -delete",
    "find . -maxdepth 0 -fls out",
]
# Read by the rules only (the program is not installed here, or needs a remote host).
READ_ONLY_READ = [
    "rg --pre ./mk alpha",
    "git diff --outp=out HEAD~1",
    "rg --pre=./mk alpha",
    "rg --hostname-bin=./mk --hyperlink-format=default alpha",
    "sort --compress-program=./mk -S 1 data",
    "tar -tf host:a.tar",
    "git -c core.pager=./mk log",
    "git -C elsewhere grep -O./mk alpha",
    "git --exec-path=. status",
    "sed -f script.sed data",
    "sed --bogus data",
    "sort --bogus data",
    "find . -bogus",
    "xxd -Z data",
    "uniq --bogus data",
    "sort $OPT data",
    "sort * ",
]
# Reading lines that stay covered by the same rules.
READ_ONLY_FINE = [
    "sed -n '1,2p' data",
    "sed -n '/alpha/p' data",
    "sed 's/alpha/beta/g' data",
    "sed -E 's/a(l)/\\1/; s/e/E/2' data",
    "sort -u -k 2 data",
    "sort -t, -k1,1n data",
    "uniq -c data",
    "xxd -l 8 data",
    "xxd -c 4 data",
    "find . -name '*.py' -type f",
    "find . -maxdepth 1 -newer data -print",
    "tar -tf a.tar",
    "tar tvf a.tar",
    "git status --short",
    "git diff --stat HEAD~1",
    "git grep -n alpha",
    "git log --oneline -3",
    "git -C . status --short",
]


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=root, check=True,
        capture_output=True,
    )  # fmt: skip


def make_project(tmp_path: Path) -> Path:
    """A git repository with data files, an archive, and ./mk that creates `made`."""
    root = tmp_path / "project"
    root.mkdir()
    (root / "data").write_text("alpha one\nbeta two\n")
    (root / "data.hex").write_text("00000000: 6869 0a                                hi.\n")
    (root / "victim").write_text("keep me\n")
    mk = root / "mk"
    mk.write_text('#!/bin/sh\ntouch "$(dirname "$0")/made"\ncat\n')
    mk.chmod(0o755)
    _git(root, "init", "-q")
    _git(root, "add", "data", "mk")
    _git(root, "commit", "-qm", "one")
    (root / "data").write_text("alpha one\nbeta two\nalpha three\n")
    _git(root, "commit", "-qam", "two")
    (root / "packed").write_text("from the archive\n")
    subprocess.run(["tar", "-cf", "a.tar", "packed"], cwd=root, check=True)
    (root / "packed").unlink()
    return root


def listing(root: Path) -> dict[str, bytes]:
    """Every file under the project (outside .git) and its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def shell_changes(root: Path, line: str, shell: str = "bash") -> bool:
    """Whether `shell -c line` in a fresh copy of the project creates, changes or deletes a file."""
    copy = root.parent / "copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(root, copy, symlinks=True)
    before = listing(copy)
    subprocess.run(
        [shell, "-c", line], cwd=copy, capture_output=True, timeout=20, stdin=subprocess.DEVNULL
    )
    return listing(copy) != before


def system(
    root: Path, approver: ScriptedApprover, opts: dict[str, Any]
) -> tuple[ToolSystem, RecordingChat]:
    return run_command_system(root, {"timeout": 20_000, **opts}, approver)


def _outcome(chat: RecordingChat, call: ToolCall) -> str:
    return chat.final_status(call.id) + " " + chat.result(call.id).for_llm


async def run_lines(
    root: Path, lines: list[str], opts: dict[str, Any]
) -> tuple[ScriptedApprover, RecordingChat, list[ToolCall]]:
    approver = ScriptedApprover(default="reject")
    tools, chat = system(root, approver, opts)
    calls = [ToolCall(f"c{i}", "run_command", {"cmd": line}) for i, line in enumerate(lines)]
    await tools.run(calls)
    return approver, chat, calls


def test_each_read_only_line_runs_or_writes_in_a_real_shell(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    quiet = [line for line in READ_ONLY_LINES if not shell_changes(root, line)]
    assert quiet == []
    before = listing(root)
    for line in READ_ONLY_FINE:
        subprocess.run(["bash", "-c", line], cwd=root, capture_output=True, timeout=20)
    assert listing(root) == before


async def test_allow_rules_for_read_only_programs_do_not_cover_running_or_writing(
    tmp_path: Path,
) -> None:
    root = make_project(tmp_path)
    before = listing(root)
    approver, _chat, _calls = await run_lines(root, READ_ONLY_LINES, {"allow": READ_ONLY_ALLOW})
    assert [r.arguments["cmd"] for r in approver.requests] == READ_ONLY_LINES
    assert listing(root) == before
    assert [
        line for line in READ_ONLY_READ
        if rule_verdict({"allow": READ_ONLY_ALLOW}, line, shell=True) is not None
    ] == []  # fmt: skip


async def test_reading_lines_stay_covered_by_their_allow_rules(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    approver, chat, calls = await run_lines(root, READ_ONLY_FINE, {"allow": READ_ONLY_ALLOW})
    assert approver.requests == []
    assert [c.arguments["cmd"] for c in calls if chat.result(c.id).is_error] == []


def test_a_deny_rule_catches_what_a_read_only_option_runs() -> None:
    lines = ["rg --pre=rm x", "tar -tf a.tar -I rm", "sed -n '1e rm victim' data",
             "git grep -Orm x", "sort --compress-program=rm data"]  # fmt: skip
    allowed = {"deny": ["rm *"], "allow": ["*"]}
    assert [line for line in lines if rule_verdict(allowed, line, shell=True) != "deny"] == []


# Options of rg, tar and git's reading subcommands that their tables do not list: asked about
# under allow rules for the programs (whatever a newer version or a misspelling makes of them).
UNKNOWN_OPTION_LINES = [
    "rg --bogus alpha",
    "rg -Y alpha",
    "rg --pre-command=./mk alpha",
    "rg --hyperlink-format=x alpha",
    "tar -tf a.tar --bogus",
    "tar -tf a.tar -Q",
    "tar -tf a.tar --to-cmd=./mk",
    "tar tQf a.tar",
    "git grep --bogus alpha",
    "git grep -Y alpha",
    "git diff --bogus HEAD~1",
    "git diff -Y HEAD~1",
    "git show --bogus HEAD",
    "git log --bogus -1",
    "git log --pager=./mk -1",
    "git whatchanged --bogus -1",
]
# Their known reading options stay covered.
KNOWN_OPTION_LINES = [
    "rg -n alpha",
    "rg --hidden -g 'da*' -e alpha --max-count 2 .",
    "rg -uu --no-ignore-vcs -C2 -i alpha",
    "tar -tvf a.tar",
    "tar --list --file=a.tar --wildcards 'p*'",
    "tar -t -f a.tar --strip-components=1 -v",
    "git grep -n -e alpha --cached",
    "git diff --cached --stat",
    "git diff -U5 --word-diff HEAD~1",
    "git show --name-only --format=%H HEAD",
    "git log --author=t --since=1.week -5 --format=%s",
    "git log -p -S alpha --follow -- data",
]


@pytest.mark.parametrize("shell", ["bash", "dash"])
async def test_unknown_options_of_rg_tar_and_git_are_asked_about(
    tmp_path: Path, shell: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sh_is(shell, tmp_path, monkeypatch)
    root = make_project(tmp_path)
    opts = {"allow": ["rg *", "tar *", "git *"]}
    approver, chat, calls = await run_lines(root, UNKNOWN_OPTION_LINES, opts)
    assert [r.arguments["cmd"] for r in approver.requests] == UNKNOWN_OPTION_LINES
    assert [c.arguments["cmd"] for c in calls if "rejected" not in _outcome(chat, c)] == []
    approver, chat, calls = await run_lines(root, KNOWN_OPTION_LINES, opts)
    assert approver.requests == []
    assert [c.arguments["cmd"] for c in calls if chat.result(c.id).is_error] == []


# --- bash evaluates array subscripts in "literal" names --------------------------------------

SUBSCRIPT_LINES = [
    "printf -v 'a[$(./mk)]' x",
    "printf -v'a[$(./mk)]' x",
    "test -v 'a[$(./mk)]'",
    "[ -v 'a[$(./mk)]' ]",
    "[[ -v 'a[$(./mk)]' ]]",
    "let 'a[$(./mk)]'",
    "declare 'a[$(./mk)]=1'",
    "typeset 'a[$(./mk)]=1'",
    "read 'a[$(./mk)]' < data",
    "x='a[$(./mk)]'; [[ x -eq 1 ]]",
    "declare -i y; y='a[$(./mk)]'",
    "x='a[$(./mk)]'; (( x ))",
    "x='a[$(./mk)]'; echo $[x]",
]
SUBSCRIPT_ALLOW = ["printf *", "test *", "[ *", "[[ *", "let *", "declare *", "typeset *",
                   "read *", "echo *", "(( *", "x=*"]  # fmt: skip


def sh_folder(tmp_path: Path, shell: str) -> Path:
    """A folder whose `sh` is `shell`, to put first on PATH (as on systems where sh is bash)."""
    folder = tmp_path / f"sh-is-{shell}"
    folder.mkdir(exist_ok=True)
    target = shutil.which(shell)
    assert target is not None
    link = folder / "sh"
    if not link.exists():
        link.symlink_to(target)
    return folder


def require(shell: str) -> None:
    """Skip the test where `shell` is not installed."""
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed")


def sh_is(shell: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`shell` as the `sh` first on PATH (skipped where it is not installed)."""
    require(shell)
    monkeypatch.setenv("PATH", f"{sh_folder(tmp_path, shell)}{os.pathsep}{os.environ['PATH']}")


def _on_dash(line: str) -> str:
    return "bash -c " + "'" + line.replace("'", "'\\''") + "'"


@pytest.mark.parametrize("shell", ["bash", "dash"])
async def test_subscript_evaluation_is_never_run_by_an_allow_rule(
    tmp_path: Path, shell: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    require(shell)
    root = make_project(tmp_path)
    lines = SUBSCRIPT_LINES if shell == "bash" else [_on_dash(line) for line in SUBSCRIPT_LINES]
    assert [line for line in lines if not shell_changes(root, line, shell)] == []
    sh_is(shell, tmp_path, monkeypatch)
    allow = [*SUBSCRIPT_ALLOW, "bash *"]
    for opts in ({"allow": allow}, {"allow": ["*"], "deny": ["./mk*", "*mk*"]}):
        before = listing(root)
        approver, chat, calls = await run_lines(root, lines, opts)
        stopped = "denied by rule" if "deny" in opts else "rejected"
        ran = [c.arguments["cmd"] for c in calls if stopped not in _outcome(chat, c)]
        assert ran == []
        assert listing(root) == before
        if "deny" not in opts:
            assert [r.arguments["cmd"] for r in approver.requests] == lines


# --- ${...} forms, shell option spellings, eval/trap/env forms, wrappers -------------------

FORM_LINES = [
    "echo ${x:-$(./mk)}",
    'echo "${x:=$(./mk)}"',
    "x=1; echo ${x:+`./mk`}",
    "echo ${x-$(./mk)}",
    "x='$(./mk)'; echo ${x@P}",
    "x='a[$(./mk)]'; echo ${!x}",
    "y=abc; x='a[$(./mk)]'; echo ${y:x}",
    "sh +e -c ./mk",
    "bash +O extglob -c ./mk",
    "bash -O extglob -c ./mk",
    "bash +o posix -c ./mk",
    "trap -- ./mk EXIT",
    "eval -- ./mk",
    "env - ./mk",
    '$"./mk"',
    "prlimit --nofile=100 ./mk",
    "setarch x86_64 ./mk",
    "chrt -o 0 ./mk",
    "ssh-agent ./mk",
    "/lib64/ld-linux-x86-64.so.2 /bin/touch made",
]


async def test_forms_read_wrongly_before_are_denied_and_asked(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    optional = ("prlimit", "setarch", "chrt", "ssh-agent", "/lib64/")
    lines = [line for line in FORM_LINES if not line.startswith(optional) or
             shutil.which(line.split()[0])]  # fmt: skip
    assert len(lines) >= len(FORM_LINES) - 4
    assert [line for line in lines if not shell_changes(root, line)] == []
    before = listing(root)
    opts = {"allow": ["*"], "deny": ["./mk*", "*touch *"], "allowed_in_yolo_mode": True}
    approver, chat, calls = await run_lines(root, lines, opts)
    assert [c.arguments["cmd"] for c in calls if "denied by rule" not in _outcome(chat, c)] == []
    assert approver.requests == []
    assert listing(root) == before
    # Without a deny rule each is either asked about or read as running ./mk.
    unread = [line for line in lines if read(line).certain and
              "./mk" not in [c.spelled for c in read(line).commands]]  # fmt: skip
    assert [line for line in lines if read(line).certain] == [
        "sh +e -c ./mk", "bash +O extglob -c ./mk", "bash -O extglob -c ./mk",
        "bash +o posix -c ./mk", "trap -- ./mk EXIT", "eval -- ./mk", "env - ./mk",
    ]  # fmt: skip
    assert unread == []


def test_plain_forms_are_still_read_as_certain() -> None:
    fine = ["echo ${HOME}", "echo ${x:-default}", "echo ${#PATH}", "echo ${x%.py}",
            "sh -e -c 'echo hi'", "bash -o pipefail -c 'echo hi | cat'", "env LC_ALL=C sort data",
            "printf '[%s]\\n' x", "[ -f data ]", "test -n x", "echo a[1]"]  # fmt: skip
    assert [line for line in fine if not read(line).certain] == []
    assert [line for line in fine if rule_verdict({"deny": ["rm *"]}, line, True) == "deny"] == []


# --- git's control files, as the shell reads the words --------------------------------------

HOOK_LINES = [
    "cp mk .g'i't/hooks/pre-commit",
    'cp mk .g"it"/hooks/pre-commit',
    "cd .gi[t]/hooks && cp ../../mk pre-commit",
    "tee .gi{t,}/hooks/pre-commit < mk",
    "cd .g?t/hooks && cp ../../mk pre-commit",
    "cd .g*/hooks && cp ../../mk pre-commit",
    "cp mk .gi\\t/hooks/pre-commit",
    "cp mk $'.gi\\x74'/hooks/pre-commit",
    "x=.gi; cp mk ${x}t/hooks/pre-commit",
    "d=.g; d+=it; cp mk $d/hooks/pre-commit",
    "d='.g?t'; cd $d/hooks && cp ../../mk pre-commit",
    "cat mk > .g'i't/hooks/pre-commit",
    "cd .gi''t/hooks && cp ../../mk pre-commit",
    "for d in .gi; do cp mk ${d}t/hooks/pre-commit; done",
    "printf '%s' .gi > n; read d < n; cp mk ${d}t/hooks/pre-commit",
]
# Names that matter on other filesystems (case-insensitive ones) or elsewhere in the tree.
CONTROL_NAMES = [
    "cp mk .GIT/hooks/pre-commit",
    "echo '* filter=x' > .gitattribute[s]",
    "cp mk sub/.g*/config",
    "cp mk .gitmodule?",
]


async def test_git_control_files_are_asked_about_however_spelled(tmp_path: Path) -> None:
    root = make_project(tmp_path)
    hook = Path(".git/hooks/pre-commit")
    planted = []
    for line in HOOK_LINES:
        shell_changes(root, line)
        planted.append((root.parent / "copy" / hook).exists())
    assert planted == [True] * len(HOOK_LINES)
    lines = HOOK_LINES + CONTROL_NAMES
    approver, _chat, _calls = await run_lines(
        root, lines, {"allow": ["*"], "allowed_in_yolo_mode": True}
    )
    assert [r.arguments["cmd"] for r in approver.requests] == lines
    assert not (root / hook).exists()
    others = ["cp mk .github/x", "cat .gitignore", "ls gitdir", "echo $HOME/x", "cp a *.py"]
    assert [line for line in others if not read(line).certain] == []

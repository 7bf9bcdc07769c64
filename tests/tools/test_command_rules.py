"""Command rules when run_command runs without a question (YOLO with allowed_in_yolo_mode, a
tool-wide "always", or an allow rule matching everything): a deny rule catches every spelling of
the denied program, and a line whose commands the rules cannot know is asked about, never run.

Every spelling below really deletes `victim` in bash (checked first, with real shells), so the
deny test cannot pass by accident.
"""

from __future__ import annotations

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

# Each deletes ./victim in bash; `script` is a file holding `rm victim`.
SPELLINGS = [
    "rm${IFS}victim",
    ">/dev/null rm victim",
    "rm</dev/null victim",
    "r\\\nm victim",
    "rm \\\nvictim",
    "/usr/bin/r[m] victim",
    "/bin/[r]m victim",
    "x=rm; $x victim",
    "${RM:-rm} victim",
    '"${RM:-rm}" victim',
    "$(echo rm) victim",
    "`echo rm` victim",
    "$(printf r)m victim",
    "bash --norc -c 'rm victim'",
    "bash -ec 'rm victim'",
    "sh -c 'sh -c \"rm victim\"'",
    "timeout -s KILL 5 rm victim",
    "timeout -sKILL 5 rm victim",
    "timeout --signal=KILL 5 rm victim",
    "echo victim | xargs rm",
    "echo victim | xargs -n1 rm",
    "echo 'rm victim' | sh",
    "echo 'rm victim' | bash -s",
    "sh < script",
    "bash <<< 'rm victim'",
    "{r,}m victim",
    "$'\\x72m' victim",
    "$'rm' victim",
    "find . -name victim -exec rm {} +",
    "find . -name victim -exec sh -c 'rm \"$1\"' _ {} \\;",
    "f() { rm victim; }; f",
    ". ./script",
    "source ./script",
    "cat <(rm victim)",
    "env -S 'rm victim'",
    "env -u HOME rm victim",
    "nice -n 5 rm victim",
    "nice -5 rm victim",
    "stdbuf -oL rm victim",
    "setsid -w rm victim",
    "exec env nice -n 1 timeout 5 rm victim",
    "echo ok |& rm victim",
    "command -p rm victim",
    "trap 'rm victim' EXIT",
    "eval \"$(printf 'rm victim')\"",
    "eval 'r''m victim'",
    "X=$(rm victim)",
    "echo ok && \\rm victim",
    "time -p rm victim",
    "ionice -c 3 rm victim",
    "busybox rm victim",
    "sudo -u root rm victim",
    "nohup rm victim > /dev/null",
    "watch -n 1 -g rm victim",
    "cat <<EOF\n$(rm victim)\nEOF",
    "a=r; b=m; $a$b victim",
    "alias x=rm\nx victim",
    "hash -p /bin/rm ls; ls victim",
    "BASH_ENV=./script bash -c true",
    "PS4='$(rm victim)'; set -x; true",
    "export BASH_ENV=./script; bash -c true",
    "env BASH_ENV=./script bash -c true",
    "PATH=.:$PATH; cp script ls; chmod +x ls; ls",
]


def bash_deletes(tmp_path: Path, spelling: str) -> bool:
    """Whether bash deletes the victim with this spelling (False if a program is missing)."""
    folder = tmp_path / "live"
    folder.mkdir(exist_ok=True)
    (folder / "victim").write_text("x")
    (folder / "script").write_text("rm victim\n")
    subprocess.run(
        ["bash", "-O", "expand_aliases", "-c", spelling], cwd=folder, capture_output=True,
        timeout=10, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    return not (folder / "victim").exists()


def test_every_spelling_deletes_in_a_real_shell(tmp_path: Path) -> None:
    missing = {"sudo", "busybox", "watch", "ionice", "setsid", "stdbuf"} - {
        name for name in ("sudo", "busybox", "watch", "ionice", "setsid", "stdbuf")
        if shutil.which(name)
    }  # fmt: skip
    live = [s for s in SPELLINGS if not any(s.startswith(m) for m in missing)]
    dead = [s for s in live if not bash_deletes(tmp_path, s)]
    assert dead == [] and len(live) >= 60, (dead, len(live))


def system(
    root: Path, approver: ScriptedApprover, opts: dict[str, Any]
) -> tuple[ToolSystem, RecordingChat]:
    return run_command_system(root, {"timeout": 10_000, **opts}, approver)


def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "victim").write_text("keep me\n")
    (root / "script").write_text("rm victim\n")
    return root


@pytest.mark.parametrize("bypass", ["yolo", "always", "allow"])
async def test_a_deny_rule_refuses_every_spelling(tmp_path: Path, bypass: str) -> None:
    root = project(tmp_path)
    opts: dict[str, Any] = {"deny": ["rm *"], "allowed_in_yolo_mode": bypass == "yolo"}
    if bypass == "allow":
        opts["allow"] = ["*"]
    approver = ScriptedApprover(default="approve")
    tools, chat = system(root, approver, opts)
    if bypass == "always":
        tools.approvals.remember("run_command", "anything", per_command=False)
    calls = [ToolCall(f"c{i}", "run_command", {"cmd": s}) for i, s in enumerate(SPELLINGS)]
    await tools.run(calls)
    ran = [c.arguments["cmd"] for c in calls if "denied by rule" not in chat.result(c.id).for_llm]
    assert ran == []
    assert (root / "victim").read_text() == "keep me\n"
    assert approver.requests == []


# Without deny rules (with one, these are refused: it could match), the rules cannot tell what
# these run, so the user is asked.
UNCERTAIN = [
    "x=touch; $x made",
    "$(echo touch) made",
    "`echo touch` made",
    "t${NOTHING}ouch made",
    "/usr/bin/touc[h] made",
    "echo made | xargs touch",
    "echo 'touch made' | sh",
    "tou\\\nch made",
    "cat <<< 'x'; touch made",
    "source ./maker",
    "timeout --weird-option 5 touch made",
    "sudo -s touch made",
    "f() { touch made; }; f",
    'echo "$(touch made)"',
    "cat <(touch made)",
    "{tou,}ch made",
    "touch made .git/hooks/post-checkout",
    "printf '* filter=x' > .gitattributes; touch made",
    "cp made.in .gitmodules && touch made",
    "cd .git && touch made",
]


@pytest.mark.parametrize("bypass", ["yolo", "always", "allow"])
async def test_a_line_the_rules_cannot_read_is_asked_about(tmp_path: Path, bypass: str) -> None:
    root = project(tmp_path)
    (root / "maker").write_text("touch made\n")
    opts: dict[str, Any] = {"allowed_in_yolo_mode": bypass == "yolo"}
    if bypass == "allow":
        opts["allow"] = ["*"]
    approver = ScriptedApprover(default="reject")
    tools, chat = system(root, approver, opts)
    if bypass == "always":
        tools.approvals.remember("run_command", "anything", per_command=False)
    calls = [ToolCall(f"u{i}", "run_command", {"cmd": s}) for i, s in enumerate(UNCERTAIN)]
    await tools.run(calls)
    assert [r.arguments["cmd"] for r in approver.requests] == UNCERTAIN
    assert all("the rules cannot tell what it runs" in p for p in approver.prompts)
    assert not (root / "made").exists()
    assert all(chat.final_status(c.id) == "rejected" for c in calls)


async def test_lines_the_rules_can_read_still_run_without_a_question(tmp_path: Path) -> None:
    root = project(tmp_path)
    approver = ScriptedApprover(default="reject")
    tools, chat = system(root, approver, {"deny": ["rm *"], "allowed_in_yolo_mode": True})
    plain = [
        "echo hi",
        "ls -la",
        "echo $HOME > home.txt",
        "printf 'rm victim' | cat",
        "echo rm victim",
        "ls rmdir || true",
        "env LC_ALL=C sort script",
        "timeout 5 echo ok",
        "bash -c 'echo inner'",
        "echo *.txt",
        "[ -f victim ] && echo present",
        "cat .gitignore || true",
        "git status --short || true",
    ]
    calls = [ToolCall(f"p{i}", "run_command", {"cmd": s}) for i, s in enumerate(plain)]
    await tools.run(calls)
    assert approver.requests == []
    assert [chat.result(c.id).is_error for c in calls] == [False] * len(plain)
    assert (root / "victim").exists()


# Lines built to break a reader (deep nesting, huge words, unbalanced quotes), and whether the
# rules must call them uncertain. Each gets a verdict, never an exception.
HOSTILE = [
    ("$(" * 5000 + "rm victim" + ")" * 5000, True),
    ("`" * 3001, True),
    ("{" * 90000 + "x", False),  # one odd but literal command name
    ("echo " + "x" * 200_000, True),  # too long to read
    ("eval " * 5000 + "rm victim", True),
    ("sh -c " * 3000 + "x", True),
    ("'" * 9999, True),
    ('"$(' * 3000, True),
    ("${" * 5000, True),
    ("\\" * 10001, False),  # escaped backslashes: a literal name
]


@pytest.mark.parametrize("index", range(len(HOSTILE)))
def test_hostile_lines_get_a_verdict_not_an_exception(index: int) -> None:
    line, uncertain = HOSTILE[index]
    reading = read(line)
    assert reading.certain is not uncertain, reading.doubts
    verdict = rule_verdict({"deny": ["rm *"], "allow": ["*"]}, line, shell=True)
    assert verdict in (("deny", None) if uncertain else ("allow",))

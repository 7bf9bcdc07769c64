"""One chat's skills: which are on, the system prompt's list of them, and `/skills`.

The list is one line per skill (name and description) in a system message of its own, kept
true before each submitted message: a skill added or removed on disk, or turned off with
`/skills`, shows from the next message on. The chat shows one folded line naming them.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ..messages import MessageStore
from .catalog import Found, Skill, SkillOptions, discover

TAG = "skills"
TOOL = "skill"
INTRO = (
    "Skills: folders of instructions (and scripts or reference files) for particular tasks. "
    f"When a task matches a skill's description, call the `{TOOL}` tool with the skill's name "
    "to read its instructions before you start, then follow them; read its other files the "
    "same way when the instructions point to them. Never guess what a skill says. Run a "
    "skill's scripts only with run_command. The skills:"
)


class ChatSkills:
    """The skills a chat offers: found in its project and the user's folders, minus those the
    user turned off."""

    def __init__(self, root: Path, options: SkillOptions, home: Path | None = None) -> None:
        self.root = root
        self.options = options
        self.home = home
        self.disabled: set[str] = set()
        self._last: Found = Found()
        self._text = ""

    def found(self) -> Found:
        """Every skill on disk now (read again each time: a new skill shows at once)."""
        self._last = discover(self.root, self.options, self.home)
        return self._last

    def enabled(self) -> list[Skill]:
        """The skills found the last time that are on."""
        return [s for s in self._last.skills if s.name not in self.disabled]

    def get(self, name: str) -> Skill | None:
        """The skill called `name` if it is on (looked for on disk again when not known)."""
        skill = next((s for s in self.enabled() if s.name == name), None)
        if skill is None and name not in self.disabled:
            skill = next((s for s in self.found().skills if s.name == name), None)
        return skill

    def prompt(self) -> str:
        """The system prompt text listing the skills that are on (empty: none)."""
        skills = self.enabled()
        if not skills:
            return ""
        return "\n".join([INTRO, *(skill.line() for skill in skills)])

    def sync(self, messages: MessageStore) -> str | None:
        """Bring the chat's skills message up to date; the line to show when it changed."""
        found = self.found()
        text = self.prompt()
        present = any(m.tag == TAG for m in messages)
        if text == self._text and (present or not text):
            return None
        self._text = text
        if text:
            after = sum(1 for m in messages if m.role == "system")
            messages.insert_system(text, TAG, after)
        else:
            messages.remove_where(TAG)
        if not text and not found.problems:
            return None
        return self.line(found)

    def line(self, found: Found) -> str:
        """One line: the skills that are on, and what was skipped."""
        names = [skill.name for skill in self.enabled()]
        line = "Skills: " + (", ".join(names) if names else "none on")
        if found.problems:
            line += " · " + "; ".join(found.problems)
        return line

    def listing(self) -> list[tuple[Skill, bool]]:
        """Every skill found, and whether it is on (for `/skills`)."""
        return [(s, s.name not in self.disabled) for s in self.found().skills]

    def toggle(self, name: str) -> str:
        """Turn a skill off or back on for this chat; the line saying which are on now."""
        self.disabled.symmetric_difference_update({name})
        state = "off" if name in self.disabled else "on"
        return f"skill {name} {state} (from the next message) · {self.line(self._last)}"

    def restore(self, names: Iterable[object]) -> None:
        """Take back the names a saved chat had turned off."""
        self.disabled = {str(name) for name in names}


def skills_of(tools: object) -> ChatSkills | None:
    """The chat's skills, from the tool system tool code receives (None: no skills)."""
    skills = getattr(tools, "skills", None)
    return skills if isinstance(skills, ChatSkills) else None

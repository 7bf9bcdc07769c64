"""Skills: SKILL.md folders found in the project and the user's config, listed one line each in
the system prompt and read only when the model asks (the `skill` tool)."""

from .catalog import Found, Skill, SkillOptions, discover
from .chat_skills import ChatSkills, skills_of

__all__ = ["ChatSkills", "Found", "Skill", "SkillOptions", "discover", "skills_of"]

"""A subagent's questions: asked in its parent's buffer, each saying which subagent asks."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..ports import ApprovalDecision, ApprovalRequest, Approver


def asked_by(name: str, question: str) -> str:
    """The question as the user reads it: the subagent's name first."""
    return f"Subagent `{name}`: {question}"


@dataclass(frozen=True)
class Asking:
    """The parent's approver, for one subagent."""

    approver: Approver
    name: str

    async def ask(self, request: ApprovalRequest) -> ApprovalDecision:
        """The call's question, under the subagent's name."""
        return await self.approver.ask(replace(request, prompt=asked_by(self.name, request.prompt)))

    async def confirm(self, chat_id: str, question: str) -> bool:
        """A yes/no question, under the subagent's name."""
        return await self.approver.confirm(chat_id, asked_by(self.name, question))

"""Checkpoints of the project around a chat's turns and tool rounds: review, rewind and undo."""

from .manager import Checkpoints, Restored, Settings, TurnInfo
from .session import ChatCheckpoints, RewindAsker

__all__ = ["ChatCheckpoints", "Checkpoints", "Restored", "RewindAsker", "Settings", "TurnInfo"]

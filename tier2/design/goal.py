"""The goal as one text: the first brief, then each follow-up in a ``<follow-up v="N">`` line — what the designers
and the writer read (every version, in order), and how the offline studio splits it back into versions (a brief
may itself span lines)."""

from __future__ import annotations

import re

__all__ = ["compose_goal", "split_goal"]

_FOLLOW = re.compile(r'\n?<follow-up v="(\d{1,4})">(.*?)</follow-up>', re.S)


def compose_goal(goals: list[str]) -> str:
    if not goals:
        return ""
    return goals[0] + "".join(f'\n<follow-up v="{i}">{g}</follow-up>' for i, g in enumerate(goals[1:], start=2))


def split_goal(goal: str) -> list[str]:
    """[the first brief, the follow-ups...] of a composed goal (a plain brief: itself alone)."""
    first = _FOLLOW.split(goal, maxsplit=1)[0].strip()
    return [first, *(m.group(2).strip() for m in _FOLLOW.finditer(goal))]

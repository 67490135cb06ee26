"""The offline policy for the writer's companions (`tier2.companions`): deterministic, through the same tools a
model companion gets, so the offline path exercises the same agent plumbing (ledger, breakers, trajectory).

* explorer: one ``Index`` lookup of the question, then an answer composed from what the index returned (paths,
  line numbers, short excerpts), most specific first;
* reviewer: one ``Checks`` run (tier2's deterministic review checks), then those findings as its JSON answer.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tier2.models.offline.history import Conversation
from tier2.models.offline.policy import Action

__all__ = ["COMPANION_MARKER", "decide_companion", "is_companion"]

#: the line every companion's system prompt starts with (``tier2/prompts/explorer.md``, ``reviewer.md``)
COMPANION_MARKER = re.compile(r"tier2 companion — role: (explorer|reviewer)")
_QUESTION = re.compile(r"<question>\s*(.*?)\s*</question>", re.S)
MAX_LINES = 24


def is_companion(conv: Conversation) -> bool:
    return COMPANION_MARKER.search(conv.system) is not None


def _lines(value: Any, depth: int = 0) -> list[str]:
    """Flatten the index's JSON answer into short lines."""
    if isinstance(value, dict):
        out: list[str] = []
        for k, v in value.items():
            if v in (None, [], {}):
                continue
            if isinstance(v, (str, int, float)):
                out.append(f"{'  ' * depth}{k}: {v}")
            else:
                out.append(f"{'  ' * depth}{k}:")
                out += _lines(v, depth + 1)
        return out
    if isinstance(value, list):
        return [f"{'  ' * depth}- {x}" for x in value if isinstance(x, (str, int, float))]
    return [f"{'  ' * depth}{value}"]


def _explorer(conv: Conversation) -> Action:
    m = _QUESTION.search(conv.last_user)
    question = m.group(1) if m else conv.last_user.strip()[:1000]
    step = conv.last("Index")
    if step is None:
        return Action("tools", [("Index", {"query": question})])
    if not step.ok or not step.result:
        return Action("final", text=f"The index could not answer {question!r}: {(step.result or '')[:300]}")
    try:
        found = json.loads(step.result)
    except json.JSONDecodeError:
        return Action("final", text=f"Nothing in the project matches {question!r}.\n{step.result[:500]}")
    lines = _lines(found)
    more = len(lines) - MAX_LINES
    body = "\n".join(lines[:MAX_LINES]) + (f"\n[{more} more line(s) not shown]" if more > 0 else "")
    return Action("final", text=f"Where to look for: {question}\n{body}")


def _reviewer(conv: Conversation) -> Action:
    step = conv.last("Checks")
    if step is None:
        return Action("tools", [("Checks", {})])
    try:
        found = json.loads(step.result or "")
    except json.JSONDecodeError:
        found = {}
    findings = found.get("findings", []) if isinstance(found, dict) and step.ok else []
    return Action("final", text=json.dumps({"findings": findings}, ensure_ascii=False))


def decide_companion(conv: Conversation) -> Action:
    m = COMPANION_MARKER.search(conv.system)
    return _reviewer(conv) if m and m.group(1) == "reviewer" else _explorer(conv)

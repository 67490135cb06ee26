"""Where to cut an agent's conversation: at block level, never between a tool call and its result.

AgentScope keeps one assistant `Msg` per reply holding all of its text, tool_call and tool_result blocks, so a long
writer turn is one huge message: the cut has to fall inside it. The conversation is flattened into blocks; a cut
at position *p* is allowed when every tool call before *p* has its result before *p*. The chosen cut is the
earliest allowed one whose tail fits ``keep_tokens`` (as much recent conversation as fits stays verbatim).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from agentscope.message import Msg, TextBlock

__all__ = ["Cut", "Unit", "choose_cut", "flatten", "rebuild"]


@dataclass(frozen=True)
class Unit:
    """One block of the conversation and where it sits (``block`` = its index in its message's content)."""

    msg: int
    block: int
    value: Any  # a content block (a str message counts as one TextBlock)


@dataclass(frozen=True)
class Cut:
    """``position``: the first kept block (blocks before it are covered by the summary)."""

    position: int
    covered_tokens: int
    kept_tokens: int


def flatten(context: list[Msg]) -> list[Unit]:
    units: list[Unit] = []
    for mi, msg in enumerate(context):
        if isinstance(msg.content, str):
            units.append(Unit(mi, 0, TextBlock(text=msg.content)))
            continue
        units.extend(Unit(mi, bi, block) for bi, block in enumerate(msg.content))
    return units


def _allowed(units: list[Unit]) -> list[bool]:
    """allowed[p]: cutting before unit p separates no tool call from its result."""
    n = len(units)
    results = {getattr(u.value, "id", None): i for i, u in enumerate(units)
               if getattr(u.value, "type", "") == "tool_result"}
    blocked = [0] * (n + 2)
    for i, u in enumerate(units):
        if getattr(u.value, "type", "") == "tool_call":
            r = results.get(u.value.id, n)  # an unanswered call: nothing after it may be cut away from it
            if r > i:
                blocked[i + 1] += 1
                blocked[min(r, n) + 1] -= 1
    out, running = [], 0
    for p in range(n + 1):
        running += blocked[p]
        out.append(running == 0)
    return out


async def choose_cut(units: list[Unit], keep_tokens: int, tokens: Callable[[Unit], Awaitable[int]]) -> Cut | None:
    """The earliest allowed cut whose tail fits ``keep_tokens``; None when nothing can be covered."""
    sizes = [await tokens(u) for u in units]
    allowed = _allowed(units)
    tail = [0] * (len(units) + 1)
    for i in range(len(units) - 1, -1, -1):
        tail[i] = tail[i + 1] + sizes[i]
    for p in range(1, len(units) + 1):
        if allowed[p] and tail[p] <= keep_tokens:
            return Cut(p, tail[0] - tail[p], tail[p])
    return None


def rebuild(context: list[Msg], units: list[Unit], start: int) -> list[Msg]:
    """The messages holding ``units[start:]``; a message cut in two keeps its id, role and name (AgentScope appends
    the reply's next blocks to it)."""
    kept: list[Msg] = []
    by_msg: dict[int, list[Any]] = {}
    order: list[int] = []
    for u in units[start:]:
        if u.msg not in by_msg:
            by_msg[u.msg] = []
            order.append(u.msg)
        by_msg[u.msg].append(u.value)
    for mi in order:
        msg = context[mi]
        whole = isinstance(msg.content, str) or len(by_msg[mi]) == len(msg.content)
        kept.append(msg if whole else msg.model_copy(update={"content": by_msg[mi]}))
    return kept

"""The one function that drives an agent turn (the writer's, a designer's, a companion's).

It consumes AgentScope's ``reply_stream``: the final `Msg` is the turn's answer; every other item (model-call,
tool and ``max_iters`` events) goes to ``on_event`` — the session maps and emits the writer's and designers' as run
events, a companion call only meters its own. A stream that ends without a message (a resumed turn whose reply was
already complete) answers with the agent's last context message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from agentscope.agent import Agent
from agentscope.event import ExceedMaxItersEvent
from agentscope.message import Msg

from tier2.runs.loop.context import Turn

__all__ = ["OnEvent", "drive_turn", "text_of"]

#: what happens to each agent event of a turn
OnEvent = Callable[[Any], Awaitable[None]]


async def drive_turn(agent: Agent, message: Msg | None, on_event: OnEvent) -> Turn:
    """Run one reply of ``agent`` (``message`` None continues an interrupted turn from its last completed step)."""
    final: Msg | None = None
    exceeded = False
    async for item in agent.reply_stream(message):
        if isinstance(item, Msg):
            final = item
            continue
        if isinstance(item, ExceedMaxItersEvent):
            exceeded = True
        await on_event(item)
    if final is None and agent.state.context:
        final = agent.state.context[-1]
    return Turn(final, exceeded)


def text_of(msg: Msg | None) -> str:
    """A message's text, stripped (empty for none)."""
    return (msg.get_text_content() or "").strip() if msg is not None else ""

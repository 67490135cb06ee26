"""Run only the design phase of a real run session (real Redis, files; scripted leader) for tests."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agentscope.message import Msg, TextBlock

from tier2.models.offline.design import decide_design
from tier2.models.offline.history import read_conversation
from tier2.runs.loop.phases.design import DesignPhase
from tier2.runs.loop.session import RunSession
from tier2.runs.request import RunRequest
from tier2.store.team import TeamMailbox
from tier2.testing import ScriptedChatModel

BRIEF = "a cozy bakery tycoon: bake bread and cakes, fill customer orders, don't go broke"


async def run_design(rt: Any, tmp_path: Path, late_note: str = "", brief: str = BRIEF,
                     existing: Path | None = None, ends: tuple[str, str] = ("stopped", "paused after design"),
                     ) -> tuple[Any, list[str]]:
    """``existing``: a project made beforehand to design in (default: a new one at ``tmp_path/game``); ``ends``:
    the status and the start of the stop reason the run must end with."""
    leader_inputs: list[str] = []
    session: RunSession

    def leader(messages: list[Msg]) -> list[TextBlock]:
        conv = read_conversation(messages)
        leader_inputs.append(conv.last_user)
        if late_note and "Converge" in conv.last_user and sum("Converge" in t for t in leader_inputs) == 1:
            box = TeamMailbox(rt.store.r, rt.store.keys, session.run_id, "leader")
            asyncio.get_running_loop().create_task(box.post("designer.level", "note", late_note))
        return [TextBlock(text=decide_design(conv).text)]

    _, route = rt.policies.snapshot().agent_route("leader")
    # the leader scripted, priced like the offline route (the run's ledger refuses unpriced models); the
    # designers on their routes
    req = RunRequest(brief=brief, out_dir=None if existing else tmp_path / "game", existing_project=existing,
                     pause_after="design", scripted_models={"leader": ScriptedChatModel(leader, model=route.model)})
    session = RunSession(rt, req, brief, phases=[DesignPhase()])
    outcome = await session.execute()
    assert outcome.status == ends[0] and outcome.stop_reason.startswith(ends[1]), outcome.stop_reason
    return session.design, leader_inputs

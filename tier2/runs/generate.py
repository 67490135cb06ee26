"""The single-writer run: brief → project from the pack template → writer Agent loop → deterministic
verification → ``delivery.json``. The validators, not the model, decide whether the game is delivered.

The steps live in `tier2.runs.loop.session.RunSession` (open → setup → phases → validate → deliver) and the run ends
through the one fenced finish (`tier2.store.finish.finish_run`); this module is the entry point callers use
(CLI, workers, benchmarks) and re-exports the request/outcome types.
"""

from __future__ import annotations

from tier2.runs.loop.session import RunSession
from tier2.runs.process.policy import run_policy
from tier2.runs.process.runtime import Runtime
from tier2.runs.request import EventSink, Resume, RunOutcome, RunRequest, new_run_id, validate_brief

__all__ = ["EventSink", "Resume", "RunRequest", "RunOutcome", "execute_run", "validate_brief", "new_run_id"]


async def execute_run(rt: Runtime, req: RunRequest, sink: EventSink | None = None) -> RunOutcome:
    """Run one brief to a terminal state. Raises only for bad input or broken setup found before the run
    starts; anything after that ends as a ``failed``/``stopped`` delivery with a reason."""
    brief = validate_brief(req.brief, rt.security.brief)
    policy = req.policy if req.policy is not None else await run_policy(rt, req.run_id)
    return await RunSession(rt, req, brief, sink, policy=policy).execute()

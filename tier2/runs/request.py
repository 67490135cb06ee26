"""What a run is asked to do (`RunRequest`, `Resume`) and what it reports back (`RunOutcome`)."""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentscope.model import ChatModelBase

from tier2.errors import BadInput
from tier2.events import Tier2Event
from tier2.runs.process.policy import RunPolicy
from tier2.settings.loader import BriefLimits
from tier2.store.checkpoints import ResumeStage
from tier2.store.lifecycle import TerminalStatus
from tier2.store.run_store import Fence

__all__ = ["EventSink", "Resume", "RunOutcome", "RunRequest", "crash_reason", "new_run_id", "validate_brief"]

#: stop-reason codes of the ends nobody planned (the exception itself goes to the server log, never to the reason)
_CRASHES = {
    "internal_error": "the run crashed",
    "worker_error": "the worker crashed outside the run loop",
}

#: Receives every event of the run with its id (CLI progress).
EventSink = Callable[[int, Tier2Event], Awaitable[None]]


@dataclass(frozen=True)
class Resume:
    """Where a new attempt continues: the newest checkpoint of the previous attempt."""

    checkpoint: int
    state_json: str
    round: int
    stage: ResumeStage
    usage: dict[str, Any] = field(default_factory=dict)
    step: int = 0


@dataclass(frozen=True)
class RunRequest:
    brief: str
    out_dir: Path | None = None
    model: str | None = None
    project_id: str | None = None
    run_id: str | None = None
    #: set to request a stop; the run ends ``stopped`` at the next step (or at once, with Task.cancel())
    cancel: asyncio.Event | None = None
    #: work on this existing project directory (a loaded project) instead of a fresh template copy
    existing_project: Path | None = None
    #: the writer's AgentState (JSON) from the thread's previous run: a follow-up continues that conversation
    initial_state: str | None = None
    #: this attempt's lease (worker runs): every write checks it is still current; None for a foreground CLI run
    fence: Fence | None = None
    worker: str = ""
    #: continue a previous attempt after its newest checkpoint
    resume: Resume | None = None
    #: the capability pack the run uses (``id``; None: the project's, else the runtime's default): resolved once
    #: into `tier2.runs.loop.context.RunContext.pack`
    pack: str | None = None
    #: per-run options for the governance layers (e.g. ``{"budget": {"usd": 0.5, "tokens": 200000}}``)
    options: dict[str, Any] = field(default_factory=dict)
    #: stop after this phase (``"design"``: a person reads and edits the design, then continues the run)
    pause_after: str | None = None
    #: the run's policy snapshot when the caller has it already (a worker: `tier2.runs.process.policy.run_policy`);
    #: None: `execute_run` takes it
    policy: RunPolicy | None = None
    #: the one test seam for models: an agent role (``writer``, ``leader``, ``designer.economy`` or ``designer``,
    #: ``explorer``, ``reviewer``) → the model it uses instead of its route's (on that route, without fallbacks)
    scripted_models: Mapping[str, ChatModelBase] | None = None


@dataclass
class RunOutcome:
    run_id: str
    project_id: str
    project_dir: str
    status: TerminalStatus
    stop_reason: str
    delivery_path: str | None
    delivery: dict[str, Any] = field(default_factory=dict)
    #: the writer's AgentState (JSON) at the end, for a follow-up run in the same thread
    agent_state: str | None = None


def new_run_id() -> str:
    return "r-" + uuid.uuid4().hex[:16]


def validate_brief(brief: object, limits: BriefLimits) -> str:
    """The stripped brief, or `BadInput` saying exactly what is wrong."""
    if not isinstance(brief, str):
        raise BadInput("brief must be a string")
    text = brief.strip()
    if not text:
        raise BadInput("brief is empty: describe the game in a sentence or two")
    if len(text) > limits.max_chars:
        raise BadInput(f"brief is {len(text)} characters; the limit is {limits.max_chars}")
    if _weight(text) < limits.min_chars:  # a CJK character says about as much as a short word: it counts twice
        raise BadInput(f"brief is too short ({len(text)} characters, at least {limits.min_chars}; a Chinese, "
                       "Japanese or Korean character counts as two)")
    if "\x00" in text:
        raise BadInput("brief contains a NUL character")
    return text


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


def _weight(text: str) -> int:
    return len(text) + len(_CJK.findall(text))


def crash_reason(code: str, exc: BaseException) -> str:
    """The stop reason of a run an unexpected exception ended: a fixed code, a fixed sentence and the exception's
    class — never its text (which may quote a path, a host, a provider's answer or the model's own output). The
    caller logs the exception with its traceback."""
    return f"{code}: {_CRASHES[code]} ({type(exc).__name__}); the details are in the server log"

"""Run a suite through the normal run path, resumably.

Every (brief, repeat, model) is a chain: the brief, then its follow-ups in the same thread. Each step is submitted
with an idempotency key made of (suite hash, brief id, step, repeat, model) — to the local use case
(`tier2.runs.submit.submit_run`, executed by in-process workers, `LocalBackend`) or to a running service's
``POST /v1/runs`` (`RemoteBackend`) — so the runs are accepted, budgeted, gated and ledgered like any other.
``OUT/state.json`` (written atomically after every change) records each step's run id and, once it ended, its row.
An interrupted eval started again with the same suite and flags skips the finished steps, re-submits the others
with the same keys (getting the same run ids back: no duplicate run) and waits for them — a run whose worker died
with the interrupted eval is reclaimed by a worker once its lease expires and resumes from its checkpoint.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from tier2.errors import BadInput
from tier2.evals.metrics import summarize
from tier2.evals.results import EvalResults, RunRow, SuiteRef
from tier2.evals.rows import RunFacts, row_from
from tier2.evals.suite import Brief, Expect, Suite, suite_hash

__all__ = ["Backend", "EvalPlan", "Rejected", "State", "Step", "job_key", "run_eval"]

STATE_FILE = "state.json"
RESULTS_FILE = "results.json"
SHOTS_DIR = "shots"


class Rejected(Exception):
    """The run path refused the step before accepting a run (a brief too short or too long, a budget over the
    tenant's ceiling): the eval records it as an honest refusal with this reason, no run id."""


class Backend(Protocol):
    """Where runs go: `tier2.evals.local.LocalBackend` or `tier2.evals.remote.RemoteBackend`."""

    where: str

    async def submit(self, text: str, model: str | None, key: str, thread_id: str | None) -> tuple[str, str]:
        """Accept one run (idempotent on ``key``); (run id, thread id). `Rejected` when the request is refused."""
        ...

    async def wait(self, run_id: str) -> RunFacts:
        """Wait until the run has ended; its facts (status, reason, delivery, fix rounds, paths)."""
        ...

    async def screenshot(self, facts: RunFacts) -> bytes | None:
        """The delivered screenshot's bytes (None: the run has none)."""
        ...


@dataclass(frozen=True)
class Step:
    brief: Brief
    follow_up: int
    repeat: int
    model: str | None

    @property
    def text(self) -> str:
        return self.brief.brief if self.follow_up == 0 else self.brief.follow_ups[self.follow_up - 1].text

    @property
    def expect(self) -> Expect:
        return self.brief.expect if self.follow_up == 0 else self.brief.follow_ups[self.follow_up - 1].expect


def model_label(model: str | None) -> str:
    return model or "default"


def step_name(step: Step) -> str:
    """The step's name inside one eval: brief id, follow-up index, repeat and model."""
    model = re.sub(r"[^A-Za-z0-9_.-]", "_", model_label(step.model))[:40]
    return f"{step.brief.id}-s{step.follow_up}-r{step.repeat}-{model}"


def job_key(eval_id: str, digest: str, step: Step) -> str:
    """The step's idempotency key: within one eval (one OUT dir, its ``eval_id``) the same suite content, brief,
    step, repeat and model give the same run — a resumed eval gets its runs back; another eval of the same suite
    (another OUT, another policy) gets runs of its own."""
    return f"eval-{eval_id}-{digest[:12]}-{step_name(step)}"


@dataclass(frozen=True)
class EvalPlan:
    models: tuple[str | None, ...]
    repeat: int = 1
    concurrency: int = 1


class _Job(BaseModel):
    model_config = ConfigDict(extra="forbid")
    run_id: str | None
    thread_id: str
    row: RunRow | None = None


class State(BaseModel):
    """``OUT/state.json``: which steps have a run, and the rows of those that ended."""

    model_config = ConfigDict(extra="forbid")
    eval_id: str = Field(default_factory=lambda: secrets.token_hex(6),
                         description="this eval's own id, part of every idempotency key (kept across resumes)")
    suite_hash: str
    models: list[str]
    repeat: int
    started_at: float
    policy_hash: str | None = None
    jobs: dict[str, _Job] = Field(default_factory=dict)

    @classmethod
    def open(cls, out: Path, digest: str, plan: EvalPlan) -> State:
        models = [model_label(m) for m in plan.models]
        path = out / STATE_FILE
        if not path.is_file():
            return cls(suite_hash=digest, models=models, repeat=plan.repeat, started_at=time.time())
        try:
            state = cls.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BadInput(f"{path}: not an eval state file ({exc}); use another --out") from exc
        if state.suite_hash != digest or state.models != models or state.repeat != plan.repeat:
            raise BadInput(f"{out} holds an eval of another suite version, model list or --repeat "
                           f"(suite {state.suite_hash[:12]}, models {state.models}, repeat {state.repeat}): "
                           "use another --out")
        return state

    def save(self, out: Path) -> None:
        write_atomic(out / STATE_FILE, self.model_dump_json(indent=1))


def write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def _chains(suite: Suite, plan: EvalPlan) -> list[list[Step]]:
    return [[Step(b, i, r, m) for i in range(len(b.follow_ups) + 1)]
            for m in plan.models for r in range(plan.repeat) for b in suite.briefs]


def _commit() -> str | None:
    """The tier2 checkout's commit, when it is a git checkout (None otherwise)."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).resolve().parents[2],  # noqa: S607
                              capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


async def run_eval(backend: Backend, suite: Suite, suite_file: Path, plan: EvalPlan, out: Path,
                   progress: Callable[[RunRow, int, int], None] | None = None) -> EvalResults:
    """Every chain of the suite through ``backend`` (``plan.concurrency`` chains at a time); OUT/results.json."""
    out.mkdir(parents=True, exist_ok=True)
    (out / SHOTS_DIR).mkdir(exist_ok=True)
    digest = suite_hash(suite)
    state = State.open(out, digest, plan)
    state.save(out)
    chains = _chains(suite, plan)
    total = sum(len(c) for c in chains)
    lock = asyncio.Lock()
    gate = asyncio.Semaphore(max(1, plan.concurrency))

    async def run_step(step: Step, thread: str | None) -> str:
        key = job_key(state.eval_id, digest, step)
        job = state.jobs.get(key)
        if job is not None and job.row is not None:
            return job.thread_id
        run_id: str | None = None
        thread_id = thread or ""
        try:
            if step.follow_up and not thread:
                raise Rejected("no thread to follow up: the brief before this follow-up was refused")
            run_id, thread_id = await backend.submit(step.text, step.model, key, thread)
        except Rejected as exc:  # refused at the door: no run, the reason is the outcome
            facts = RunFacts(run_id="", status="rejected", stop_reason=str(exc), delivery={})
        else:
            async with lock:
                state.jobs[key] = _Job(run_id=run_id, thread_id=thread_id)
                state.save(out)
            facts = await backend.wait(run_id)
        row = row_from(facts, brief_id=step.brief.id, follow_up=step.follow_up, repeat=step.repeat,
                       model=model_label(step.model), expect=step.expect, tags=step.brief.tags, lang=step.brief.lang)
        shot = await backend.screenshot(facts)
        if shot:
            name = f"{step_name(step)}.png"
            write_bytes = (out / SHOTS_DIR / name).write_bytes
            await asyncio.to_thread(write_bytes, shot)
            row = row.model_copy(update={"screenshot": f"{SHOTS_DIR}/{name}"})
        async with lock:
            if state.policy_hash is None and isinstance(facts.delivery.get("policy_hash"), str):
                state.policy_hash = facts.delivery["policy_hash"]
            state.jobs[key] = _Job(run_id=run_id, thread_id=thread_id, row=row)
            state.save(out)
            if progress is not None:
                progress(row, sum(j.row is not None for j in state.jobs.values()), total)
        return thread_id

    async def run_chain(chain: list[Step]) -> None:
        async with gate:
            thread: str | None = None
            for step in chain:
                thread = await run_step(step, thread)

    await asyncio.gather(*(run_chain(c) for c in chains))
    keys = [job_key(state.eval_id, digest, s) for c in chains for s in c]
    rows = [j.row for k in keys if (j := state.jobs.get(k)) and j.row is not None]
    results = EvalResults(
        schema="tier2.eval.results/1",
        suite=SuiteRef(id=suite.id, version=suite.version, hash=digest, path=str(suite_file)),
        models=[model_label(m) for m in plan.models], started_at=state.started_at, finished_at=time.time(),
        where=backend.where, policy_hash=state.policy_hash, tier2_commit=_commit(), repeat=plan.repeat,
        runs=rows,
        summary={model_label(m): summarize([r for r in rows if r.model == model_label(m)], plan.repeat)
                 for m in plan.models})
    write_atomic(out / RESULTS_FILE, results.dump_json())
    return results


"""The follow-up suite (issue #24): base games and the follow-ups a user sends them — a theme change, a rule change,
a new mechanic, removing a mechanic, changing a count, a contradictory request, one the pack cannot build, one the
offline leader cannot interpret — each with the goal version, the end, the designers re-run and the numbers the
built game must then have, from the pack's ``follow_ups.yaml`` (`load_chains`). `run_chain` plays one base game and
its follow-ups in order (one project, like a thread) through real runs; the test (tests/e2e/test_follow_ups.py)
asserts every expectation, the benchmark (bench/follow_ups.py) reports the model calls of each follow-up against
the base game's from scratch.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tier2.packs import Pack
from tier2.runs import RunRequest, execute_run
from tier2.runs.process.runtime import Runtime
from tier2.store.trajectory import ModelCallRecord, TrajectoryStore

__all__ = ["Chain", "FollowUp", "Result", "load_chains", "model_calls", "run_chain"]

SUITE_FILE = "follow_ups.yaml"


@dataclass(frozen=True)
class FollowUp:
    text: str
    what: str  # theme | rule | mechanic | remove | count | contradiction | unbuildable | uninterpreted
    status: str  # delivered | stopped
    #: the stop reason starts with this (delivered: ignored)
    reason: str = ""
    #: the designers re-run (exactly)
    rerun: tuple[str, ...] = ()
    #: (table, dotted path, test) the built game's data must pass: "=5", "<base", ">base", "len=2"
    checks: tuple[tuple[str, str, str], ...] = ()
    #: a requirement added by this goal version whose text starts with this
    added: str = ""
    #: plan nodes the goal version's diff must list as reused (verified, inputs unchanged, not redone)
    reused: tuple[str, ...] = ()


@dataclass(frozen=True)
class Chain:
    genre: str
    brief: str
    follow_ups: tuple[FollowUp, ...]


def load_chains(pack: Pack) -> tuple[Chain, ...]:
    """The pack's follow-up suite (``follow_ups.yaml`` at the pack's root: the pack owns what its games are)."""
    data = yaml.safe_load((pack.root / SUITE_FILE).read_text(encoding="utf-8"))
    return tuple(Chain(str(c["genre"]), str(c["brief"]), tuple(
        FollowUp(text=str(f["text"]), what=str(f["what"]), status=str(f["status"]), reason=str(f.get("reason", "")),
                 rerun=tuple(f.get("rerun") or ()), checks=tuple(tuple(x) for x in f.get("checks") or ()),
                 added=str(f.get("added", "")), reused=tuple(f.get("reused") or ()))
        for f in c["follow_ups"])) for c in data["chains"])


@dataclass
class Result:
    text: str
    what: str
    run_id: str
    project_id: str
    status: str
    reason: str
    goal_version: int
    rerun: list[str]
    reused: list[str]
    diff: dict[str, Any]
    calls: int
    scratch_calls: int
    seconds: float
    metrics: dict[str, Any] = field(default_factory=dict)
    tables: dict[str, Any] = field(default_factory=dict)
    base_tables: dict[str, Any] = field(default_factory=dict)
    requirements: list[dict[str, Any]] = field(default_factory=list)
    edited_by_person: bool = False
    #: the completion map's requirements verified / total
    verified: int = 0
    total: int = 0


async def model_calls(rt: Runtime, run_id: str) -> int:
    return sum(1 for c in await TrajectoryStore(rt.store.r, rt.store.keys).read(run_id)
               if isinstance(c, ModelCallRecord))


def _tables(project: Path) -> dict[str, Any]:
    return {p.name: json.loads(p.read_text()) for p in sorted((project / "data").glob("*.json"))}


async def run_chain(rt: Runtime, chain: Chain, project: Path) -> tuple[Result, list[Result]]:
    """The base game from scratch, then each follow-up on the same project; (base, follow-ups)."""
    t0 = time.monotonic()
    first = await execute_run(rt, RunRequest(brief=chain.brief, out_dir=project))
    base_calls = await model_calls(rt, first.run_id)
    base_tables = _tables(project)
    base = _result(project, chain.brief, "base", first.run_id, first.status, first.stop_reason, first.delivery,
                   base_calls, base_calls, time.monotonic() - t0, base_tables)
    out: list[Result] = []
    for fu in chain.follow_ups:
        t0 = time.monotonic()
        run = await execute_run(rt, RunRequest(brief=fu.text, existing_project=project))
        out.append(_result(project, fu.text, fu.what, run.run_id, run.status, run.stop_reason, run.delivery,
                           await model_calls(rt, run.run_id), base_calls, time.monotonic() - t0, base_tables))
    return base, out


def _result(project: Path, text: str, what: str, run_id: str, status: str, reason: str, delivery: dict[str, Any],
            calls: int, scratch: int, seconds: float, base_tables: dict[str, Any]) -> Result:
    design = delivery.get("design") or {}
    plan = delivery.get("plan") or {}
    goal = design.get("goal") or {}
    spec_path = project / "design" / "spec.json"
    reqs = json.loads(spec_path.read_text())["requirements"] if spec_path.is_file() else []
    return Result(text=text, what=what, run_id=run_id, project_id=str(delivery.get("project_id", "")),
                  status=status, reason=reason,
                  goal_version=int(design.get("goal_version") or 0), rerun=list(design.get("rerun") or []),
                  reused=list(design.get("reused") or []), diff=dict(goal.get("diff") or {}), calls=calls,
                  scratch_calls=scratch, seconds=round(seconds, 1), metrics=dict(plan.get("metrics") or {}),
                  tables=_tables(project), base_tables=base_tables, requirements=reqs,
                  edited_by_person=bool(design.get("edited_by_person")),
                  verified=int((delivery.get("completion") or {}).get("verified") or 0),
                  total=int((delivery.get("completion") or {}).get("total") or 0))

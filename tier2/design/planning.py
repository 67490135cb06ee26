"""The run's plan declared from the design: which nodes exist, what each one reads, may use and must achieve.

Nodes (ids are stable across goal versions, so history stays linked):

* ``design.brief`` (the leader's split), ``design.<role>`` per designer, ``design.spec`` (the converged spec);
* ``task.<group>`` — the writer's work, one per group of requirements (`TASK_OF_ROLE`): it reads the spec sections
  of its requirements, may use the writer's tools, and is done when its requirements are verified;
* ``phase.implement`` (build), ``phase.validate`` (L1), ``req.<id>`` per requirement (its own predicate), and
  ``delivery`` (every enforce-mode requirement of the current goal version verified).

`producers` maps a failing gate to the nodes that produced what it checks (evidence-driven replanning).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from tier2.design.roles import ROLES
from tier2.design.spec import PREDICATE_KINDS
from tier2.plan import NodeInput, Plan

__all__ = ["NODE_PREDICATES", "TASK_OF_ROLE", "TESTABLE", "WRITER_TOOLS", "declare_design", "declare_work",
           "enforced", "producers", "task_files", "task_of", "task_subject"]

#: requirement role -> the writer task that implements it
TASK_OF_ROLE: dict[str, str] = {"leader": "gameplay", "gameplay": "gameplay", "level": "tables",
                                "economy": "tables", "ui": "ui", "audio": "look", "vfx": "look", "assets": "assets"}
_TASK_TEXT = {"gameplay": "the game's rules and scenes (src/)", "tables": "the data tables (data/*.json)",
              "ui": "the menus, HUD and labels", "look": "the look: palette, effects, backdrop",
              "assets": "the assets the design names (RequestAsset, assets/manifest.json)"}
#: the completion predicates of nodes that are not a requirement
NODE_PREDICATES = ("answer_schema", "spec_schema", "requirements_verified", "build_ok", "gates_pass",
                   "enforce_verified")
TESTABLE = frozenset(PREDICATE_KINDS) | frozenset(NODE_PREDICATES)
WRITER_TOOLS = ["Glob", "Read", "Grep", "Write", "Edit", "Build", "RunGame", "RequestAsset", "TaskList",
                "TaskUpdate"]
_DESIGNER_TOOLS = ["Glob", "Read", "Grep"]


def task_of(req: Mapping[str, Any]) -> str:
    return "task." + TASK_OF_ROLE.get(str(req.get("role") or "gameplay"), "gameplay")


def task_subject(task_id: str) -> str:
    group = task_id.removeprefix("task.")
    return f"Implement {_TASK_TEXT.get(group, group)}"


def enforced(spec: Mapping[str, Any]) -> list[str]:
    """The ids of the spec's enforce-mode requirements (the ones delivery waits for)."""
    return [str(r["id"]) for r in spec.get("requirements") or [] if r.get("mode", "enforce") != "observe"]


def declare_design(plan: Plan, roles: Iterable[str] = ROLES) -> None:
    roles = list(roles)
    plan.add("design.brief", "design", goal="split the goal: title, genre, one task per designer",
             inputs=[NodeInput(name="goal", source="user"), NodeInput(name="pack", source="pack")],
             tools=list(_DESIGNER_TOOLS), predicate={"kind": "answer_schema", "model": "LeaderSplit"})
    for r in roles:
        plan.add(f"design.{r}", "design", ["design.brief"], goal=f"the {r} design: decisions, requirements, tables",
                 inputs=[NodeInput(name="goal", source="user"), NodeInput(name="split", source="design.brief")],
                 tools=list(_DESIGNER_TOOLS), predicate={"kind": "answer_schema", "model": "DesignerAnswer"},
                 on_fail=["design.brief"])
    plan.add("design.spec", "design", [f"design.{r}" for r in roles], goal="converge the answers into the spec",
             inputs=[NodeInput(name=f"answer:{r}", source=f"design.{r}") for r in roles],
             predicate={"kind": "spec_schema"}, on_fail=[f"design.{r}" for r in roles])


#: task group -> which of the genre's data tables it implements (``None``: all but theme.json)
_TASK_TABLES: dict[str, tuple[str, ...] | None] = {"tables": None, "look": ("theme.json",), "ui": ("theme.json",)}


def task_files(task: str, tables: Sequence[str]) -> list[str]:
    """The project files a writer task implements from (their versions decide whether it must run again)."""
    want = _TASK_TABLES.get(task.removeprefix("task."), ())
    return [f"data/{t}" for t in tables if (t != "theme.json" if want is None else t in want)]


def declare_work(plan: Plan, spec: Mapping[str, Any], tables: Sequence[str] = ()) -> None:
    """The writer's tasks, the build, the validation, one node per requirement and the delivery, from the spec
    (``tables``: the genre's data tables); nodes of requirements (and tasks) the spec no longer has are
    removed."""
    reqs = [r for r in spec.get("requirements") or [] if isinstance(r, dict)]
    groups: dict[str, list[str]] = {}
    for r in reqs:
        groups.setdefault(task_of(r), []).append(str(r["id"]))
    keep = {f"req.{r['id']}" for r in reqs} | set(groups)
    for gone in [n for n in plan.nodes if n.startswith(("req.", "task.")) and n not in keep]:
        plan.remove(gone)
    for task, ids in sorted(groups.items()):
        roles = sorted({str(r.get("role")) for r in reqs if task_of(r) == task and r.get("role") in ROLES})
        plan.add(task, "task", ["design.spec"], goal=task_subject(task),
                 inputs=[NodeInput(name=f"spec:{i}", source="design.spec") for i in ids]
                 + [NodeInput(name=f"file:{f}", source="design.spec") for f in task_files(task, tables)],
                 tools=list(WRITER_TOOLS), predicate={"kind": "requirements_verified", "ids": ids},
                 on_fail=[f"design.{r}" for r in roles])
    plan.add("phase.implement", "build", sorted(groups), goal="the project builds (esbuild)",
             inputs=[NodeInput(name="source", source="project")], tools=["Build"], predicate={"kind": "build_ok"},
             on_fail=sorted(groups))
    plan.add("phase.validate", "validation", ["phase.implement"], goal="every blocking L1 gate passes in play",
             inputs=[NodeInput(name="source", source="phase.implement")], tools=["RunGame"],
             predicate={"kind": "gates_pass", "layer": "L1"}, on_fail=["phase.implement"])
    for r in reqs:
        rid = str(r["id"])
        role = str(r.get("role") or "")
        plan.add(f"req.{rid}", "requirement",
                 ["design.spec", task_of(r), "phase.validate"] + ([f"design.{role}"] if role in ROLES else []),
                 goal=str(r.get("text", ""))[:300],
                 inputs=[NodeInput(name=f"spec:{rid}", source="design.spec"), _reads(r)],
                 predicate=dict(r.get("predicate") or {}), on_fail=[task_of(r)])
    plan.add("delivery", "delivery", ["phase.validate", *(f"req.{i}" for i in enforced(spec))],
             goal="deliver only when every enforce-mode requirement of the current goal version is verified",
             inputs=[NodeInput(name="source", source="phase.implement")],
             predicate={"kind": "enforce_verified", "ids": enforced(spec)}, on_fail=["phase.implement"])


#: predicates judged on a built table, not in play
_TABLE_PREDICATES = ("min_count", "table_value")


def _reads(req: Mapping[str, Any]) -> NodeInput:
    """What a requirement's check reads: its table (a table predicate), else the game (``source``: the game's own
    files, `tier2.plan.game_version`) — a requirement judged in play reads all of it."""
    pred = req.get("predicate") or {}
    if pred.get("kind") in _TABLE_PREDICATES and pred.get("table"):
        return NodeInput(name=f"file:data/{pred['table']}", source="phase.implement")
    return NodeInput(name="source", source="phase.implement")


#: L1 gates whose failure points at the data tables (and the designers who made them)
_TABLE_GATES = ("l1.economy", "l1.tables", "l1.data", "l1.solvable", "l1.winnable", "l1.losable")


def producers(gate_id: str, plan: Plan, spec: Mapping[str, Any]) -> dict[str, str]:
    """The nodes that produced what a failing gate checks (node -> why): a failing requirement → its writer task;
    a table gate → the economy/level designs and the tables task; the asset gate → the assets task; any other L1
    gate → the build and the gameplay task."""
    why = f"{gate_id} failed"
    if gate_id.startswith("l2.req."):
        rid = gate_id.removeprefix("l2.req.")
        req = next((r for r in spec.get("requirements") or [] if str(r.get("id")) == rid), None)
        return {task_of(req): why} if req is not None and task_of(req) in plan.nodes else {}
    if gate_id.startswith(_TABLE_GATES) or gate_id.startswith("l1.genre_"):
        out: dict[str, str] = {n: why for n in ("design.economy", "design.level", "task.tables") if n in plan.nodes}
        return out or {"phase.implement": why}
    if gate_id.startswith("l1.assets"):
        return {"task.assets": why} if "task.assets" in plan.nodes else {"phase.implement": why}
    if gate_id == "l2.genre":
        return {"design.brief": why}
    return {n: why for n in ("phase.implement", "task.gameplay") if n in plan.nodes}

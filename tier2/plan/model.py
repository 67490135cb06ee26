"""The run's plan as revisable state (seed 002 §1.1, §1.2, §2.1, §4.3): nodes with a goal, inputs and their
sources, allowed tools, a completion predicate, failure successors, a machine-readable status and — once verified —
the state versions they used.

* A node is ``verified`` only with the versions of its inputs (`PlanNode.versions`: sha256 of each file, table,
  spec section, designer answer, and the engine and pack versions). Before a verified node is reused, `Plan.stale`
  compares them with the current ones; a node whose inputs changed is invalidated with the names of what changed.
* A goal version (`GoalVersion`) is the goal's text, its author (user, leader, person, evidence) and the plan diff it
  caused; `Plan.history` only grows (the store keeps every version: `tier2.store.plans`).
* Every change to the plan is a plan version (`Plan.plan_version`): results are bound to the version they started
  at (`Plan.start` → `Ticket`, `Plan.finish`), so a late result of a cancelled, invalidated or superseded node
  never changes state.
* `Plan.invalidate` follows the dependency edges: a change invalidates exactly the nodes it touches and their
  dependants; everything else keeps its verified result (local replanning, §4.3).
"""

from __future__ import annotations

import builtins
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

__all__ = ["AUTHORS", "Author", "GoalVersion", "Modification", "NodeInput", "NodeKind", "NodeStatus", "Plan",
           "PlanNode", "STATUSES", "Ticket"]

NodeStatus = Literal["pending", "ready", "running", "verified", "failed", "blocked", "invalidated", "skipped"]
STATUSES: tuple[str, ...] = ("pending", "ready", "running", "verified", "failed", "blocked", "invalidated", "skipped")
NodeKind = Literal["design", "requirement", "task", "build", "validation", "delivery"]
#: who made a goal version or a modification: the user's follow-up, the leader's replanning, a person editing the
#: design files, or the evidence of a gate
Author = Literal["user", "leader", "person", "evidence"]
AUTHORS: tuple[str, ...] = ("user", "leader", "person", "evidence")
_OLD_KINDS = {"phase.implement": "build", "phase.validate": "validation"}


class NodeInput(BaseModel):
    """One input of a node: its name (``spec:R3``, ``file:data/economy.json``, ``answer:economy``, ``goal``,
    ``engine``, ``pack``) and its source (the node producing it, or ``user``/``pack``/``project``)."""

    name: str
    source: str


class PlanNode(BaseModel):
    id: str
    kind: NodeKind
    status: NodeStatus = "pending"
    #: what the node must achieve (a sentence)
    goal: str = ""
    inputs: list[NodeInput] = Field(default_factory=list)
    #: the tools the node's agent may use (empty: none, tier2's own code does it)
    tools: list[str] = Field(default_factory=list)
    #: when the node is done, as a deterministic predicate (``{"kind": "answer_schema", ...}``, a requirement's own)
    predicate: dict[str, Any] = Field(default_factory=dict)
    #: the nodes to redo when this one fails (failure successors)
    on_fail: list[str] = Field(default_factory=list)
    deps: list[str] = Field(default_factory=list)
    #: once verified: input name -> the version (sha256, or the engine/pack version) it was verified with
    versions: dict[str, str] = Field(default_factory=dict)
    #: what the last change was based on (a hash, a gate id, the run that produced it, the reason)
    evidence: dict[str, Any] = Field(default_factory=dict)
    goal_version: int = 1
    #: the plan version of the node's last change (a result started before it is late)
    plan_version: int = 0
    #: times the node was executed (started) over the plan's life
    runs: int = 0
    updated_at: float = Field(default_factory=time.time)

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        """Plans written before node kinds were split (``kind: phase``) load with their kinds."""
        if isinstance(data, dict) and data.get("kind") == "phase":
            data = {**data, "kind": _OLD_KINDS.get(str(data.get("id")), "build")}
        return data


class GoalVersion(BaseModel):
    version: int
    text: str
    author: Author = "user"
    at: float = Field(default_factory=time.time)
    run_id: str = ""
    #: requirements added / changed / removed, nodes invalidated (node -> why), nodes reused
    diff: dict[str, Any] = Field(default_factory=dict)


class Modification(BaseModel):
    """One change of the plan (seed 002 §3.2: modification counts and reasons)."""

    plan_version: int
    goal_version: int
    author: Author
    reason: str
    nodes: list[str] = Field(default_factory=list)
    at: float = Field(default_factory=time.time)


@dataclass(frozen=True)
class Ticket:
    """A node's execution, bound to the plan version it started at."""

    node: str
    plan_version: int


class Plan(BaseModel):
    goal_version: int = 1
    plan_version: int = 0
    #: the goal's text per version (the brief, then each follow-up)
    goals: list[str] = Field(default_factory=list)
    history: list[GoalVersion] = Field(default_factory=list)
    nodes: dict[str, PlanNode] = Field(default_factory=dict)
    modifications: list[Modification] = Field(default_factory=list)

    # --- building -----------------------------------------------------------------------------------------------

    def add(self, node_id: str, kind: NodeKind, deps: list[str] | None = None, *, goal: str | None = None,
            inputs: list[NodeInput] | None = None, tools: list[str] | None = None,
            predicate: dict[str, Any] | None = None, on_fail: list[str] | None = None) -> PlanNode:
        """The node ``node_id`` (made when new); the given fields replace its declaration, never its status."""
        node = self.nodes.get(node_id)
        if node is None:
            node = self.nodes[node_id] = PlanNode(id=node_id, kind=kind, goal_version=self.goal_version,
                                                  plan_version=self.plan_version)
        node.kind = kind
        if deps is not None:
            node.deps = list(dict.fromkeys(deps))
        for name, value in (("goal", goal), ("inputs", inputs), ("tools", tools), ("predicate", predicate),
                            ("on_fail", on_fail)):
            if value is not None:
                setattr(node, name, value)
        if inputs is not None:  # an input produced by another node is a data dependency
            node.deps = list(dict.fromkeys([*node.deps, *(i.source for i in inputs if i.source in self.nodes)]))
        return node

    def remove(self, node_id: str) -> None:
        self.nodes.pop(node_id, None)
        for node in self.nodes.values():
            if node_id in node.deps:
                node.deps.remove(node_id)

    def begin_goal(self, text: str, author: Author, run_id: str = "") -> GoalVersion:
        """Goal version n+1 (its diff is filled in as the plan is revised)."""
        self.goal_version += 1
        if author == "user":  # the goal's words: what the user wrote, version by version
            self.goals.append(text)
        version = GoalVersion(version=self.goal_version, text=text, author=author, run_id=run_id)
        self.history.append(version)
        return version

    def current_goal(self) -> GoalVersion | None:
        return self.history[-1] if self.history else None

    # --- state changes ------------------------------------------------------------------------------------------

    def set(self, node_id: str, status: NodeStatus, **evidence: Any) -> PlanNode:
        node = self.nodes[node_id]
        node.status = status
        node.evidence = {k: v for k, v in evidence.items() if v is not None}
        node.goal_version = self.goal_version
        node.updated_at = time.time()
        if status not in ("verified", "invalidated"):  # an invalidated node keeps what it was verified with
            node.versions = {}
        return node

    def verify(self, node_id: str, versions: Mapping[str, str], **evidence: Any) -> PlanNode:
        """``verified``, with the versions of the inputs it used."""
        node = self.set(node_id, "verified", **evidence)
        node.versions = dict(versions)
        return node

    def start(self, node_id: str) -> Ticket:
        """Mark the node running; its result must come back with this ticket."""
        node = self.set(node_id, "running")
        node.runs += 1
        node.plan_version = self.plan_version
        return Ticket(node_id, self.plan_version)

    def finish(self, ticket: Ticket, status: NodeStatus, versions: Mapping[str, str] | None = None,
               **evidence: Any) -> bool:
        """Record a result; False (nothing changes) when the node was cancelled, invalidated or re-declared after
        the ticket was issued — a late result never revives a superseded branch."""
        node = self.nodes.get(ticket.node)
        if node is None or node.status != "running" or node.plan_version != ticket.plan_version:
            return False
        if status == "verified":
            self.verify(ticket.node, versions or {}, **evidence)
        else:
            self.set(ticket.node, status, **evidence)
        return True

    def downstream(self, roots: builtins.set[str]) -> builtins.set[str]:
        """``roots`` and every node that depends on one of them, transitively."""
        return set(self._reach(roots))

    def _reach(self, roots: builtins.set[str]) -> list[str]:
        """``roots`` (sorted) then their dependants, breadth first: each node after a node it depends on."""
        order = sorted(r for r in roots if r in self.nodes)
        seen = set(order)
        children: dict[str, list[str]] = {}
        for node in self.nodes.values():
            for dep in node.deps:
                children.setdefault(dep, []).append(node.id)
        i = 0
        while i < len(order):
            for child in sorted(children.get(order[i], [])):
                if child not in seen:
                    seen.add(child)
                    order.append(child)
            i += 1
        return order

    def invalidate(self, reasons: Mapping[str, str], author: Author = "user", cause: str = "",
                   follow: bool = True) -> dict[str, str]:
        """Invalidate each node of ``reasons`` (node -> why) and — with ``follow`` — its dependants (a dependant's
        reason names the node it depends on); a new plan version, recorded as one modification. Returns node ->
        reason, in order."""
        roots = {n: why for n, why in reasons.items() if n in self.nodes}
        if not roots:
            return {}
        self.plan_version += 1
        hit: dict[str, str] = {}
        for node_id in (self._reach(set(roots)) if follow else sorted(roots)):
            node = self.nodes[node_id]
            why = roots.get(node_id) or "depends on " + ", ".join(
                sorted(d for d in node.deps if d in roots or d in hit))
            was = node.status
            self.set(node_id, "invalidated", reason=why, was=was)
            node.plan_version = self.plan_version
            hit[node_id] = why
        self.modifications.append(Modification(plan_version=self.plan_version, goal_version=self.goal_version,
                                               author=author, reason=cause or "; ".join(roots.values())[:300],
                                               nodes=sorted(hit)))
        return hit

    def stale(self, node_id: str, current: Mapping[str, str]) -> list[str]:
        """The inputs of a verified node whose version is not the current one (a name missing from ``current``
        counts as changed); [] for a node that is not verified or records no versions."""
        node = self.nodes[node_id]
        if node.status != "verified" or not node.versions:
            return []
        return sorted(k for k, v in node.versions.items() if current.get(k) != v)

    def revalidate(self, current: Mapping[str, str], author: Author = "user", cause: str = "") -> dict[str, str]:
        """Re-check every verified node against the current versions; invalidate those whose inputs changed (and
        their dependants)."""
        reasons = {}
        for node_id in self.nodes:
            changed = self.stale(node_id, current)
            if changed:
                reasons[node_id] = "input changed: " + ", ".join(changed[:6])
        return self.invalidate(reasons, author, cause) if reasons else {}

    def restore(self, current: Mapping[str, str]) -> list[str]:
        """Re-check the nodes invalidated only because something upstream was (a cascade, not a change of their
        own): one whose recorded inputs all still have their versions is verified again, reused with no work
        (seed 002 §4.3: re-checked against the state versions before it is reused). Returns them in order."""
        out: list[str] = []
        for node in self.nodes.values():
            reason = str(node.evidence.get("reason", ""))
            if node.status != "invalidated" or not reason.startswith("depends on ") or not node.versions:
                continue
            if all(current.get(k) == v for k, v in node.versions.items()):
                versions = dict(node.versions)
                self.verify(node.id, versions, reused=True, rechecked=reason)
                out.append(node.id)
        return out

    def statuses(self) -> dict[str, str]:
        return {n.id: n.status for n in self.nodes.values()}

    def summary(self) -> dict[str, Any]:
        """Compact form for the run record and ``GET /v1/runs/{id}``."""
        counts = {s: 0 for s in STATUSES}
        for node in self.nodes.values():
            counts[node.status] += 1
        return {"goal_version": self.goal_version, "plan_version": self.plan_version,
                "counts": {k: v for k, v in counts.items() if v},
                "nodes": {n.id: {"kind": n.kind, "status": n.status, "deps": n.deps, "evidence": n.evidence}
                          for n in self.nodes.values()}}

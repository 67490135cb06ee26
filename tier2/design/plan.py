"""The run's plan as revisable state (seed 002 §1.2, §2.1, §4.3): nodes with a status, dependencies and the
evidence of their last change.

Nodes: the design work (``design.brief`` — the leader's split, ``design.<role>`` per designer, ``design.spec`` —
the leader's convergence), the run phases (``phase.implement``, ``phase.validate``) and one node per spec
requirement (``req.<id>``). A follow-up in the same thread makes a new goal version; `Plan.invalidate` marks the
nodes a change touches and everything downstream of them ``invalidated``; the rest keep their verified result and
are reused. A requirement is ``verified`` only by a gate that passed — never by a ticked task.
"""

from __future__ import annotations

import builtins
import time
from typing import Any, Literal

from pydantic import BaseModel, Field

__all__ = ["NodeStatus", "PlanNode", "Plan", "STATUSES"]

NodeStatus = Literal["pending", "running", "verified", "failed", "blocked", "invalidated"]
STATUSES: tuple[str, ...] = ("pending", "running", "verified", "failed", "blocked", "invalidated")


class PlanNode(BaseModel):
    id: str
    kind: Literal["design", "phase", "requirement"]
    status: NodeStatus = "pending"
    deps: list[str] = Field(default_factory=list)
    #: what the last change was based on (a hash, a gate id, the run that produced it, the reason)
    evidence: dict[str, Any] = Field(default_factory=dict)
    goal_version: int = 1
    updated_at: float = Field(default_factory=time.time)


class Plan(BaseModel):
    goal_version: int = 1
    #: the goal's text per version (the brief, then each follow-up)
    goals: list[str] = Field(default_factory=list)
    nodes: dict[str, PlanNode] = Field(default_factory=dict)

    def add(self, node_id: str, kind: Literal["design", "phase", "requirement"], deps: list[str] | None = None,
            ) -> PlanNode:
        node = self.nodes.get(node_id)
        if node is None:
            node = self.nodes[node_id] = PlanNode(id=node_id, kind=kind, deps=list(deps or []),
                                                  goal_version=self.goal_version)
        elif deps is not None:
            node.deps = list(deps)
        return node

    def set(self, node_id: str, status: NodeStatus, **evidence: Any) -> PlanNode:
        node = self.nodes[node_id]
        node.status = status
        node.evidence = {k: v for k, v in evidence.items() if v is not None}
        node.goal_version = self.goal_version
        node.updated_at = time.time()
        return node

    def downstream(self, roots: builtins.set[str]) -> builtins.set[str]:
        """``roots`` and every node that depends on one of them, transitively."""
        out = set(roots)
        changed = True
        while changed:
            changed = False
            for node in self.nodes.values():
                if node.id not in out and any(d in out for d in node.deps):
                    out.add(node.id)
                    changed = True
        return out

    def invalidate(self, roots: builtins.set[str], reason: str) -> list[str]:
        """Mark ``roots`` and their dependants ``invalidated`` (local invalidation); returns them in order."""
        hit: list[str] = sorted(self.downstream({r for r in roots if r in self.nodes}))
        for node_id in hit:
            previous = self.nodes[node_id].status
            self.set(node_id, "invalidated", reason=reason, was=previous)
        return hit

    def summary(self) -> dict[str, Any]:
        """Compact form for the run record and ``GET /v1/runs/{id}``."""
        counts = {s: 0 for s in STATUSES}
        for node in self.nodes.values():
            counts[node.status] += 1
        return {"goal_version": self.goal_version, "counts": {k: v for k, v in counts.items() if v},
                "nodes": {n.id: {"status": n.status, "deps": n.deps, "evidence": n.evidence}
                          for n in self.nodes.values()}}

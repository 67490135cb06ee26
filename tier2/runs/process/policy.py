"""A run's hot-policy snapshot: taken once, when its first attempt starts; every later attempt uses the same one.

The first attempt takes the current `Policy` from the process's `PolicyStore` (already validated against the
security config's ceilings); the run session stores it in Redis by its hash (`tier2.store.policies`) and records
the hash in the run record (``policy``) when it opens the run. A resumed attempt — after a worker died, on another
worker or machine — loads that snapshot by the recorded hash instead of reading the policy files again, so a policy
edit made while the run was in flight never changes it (its breakers, budgets, routes, gates and durability stay
those it started with).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from tier2.runs.process.runtime import Runtime
from tier2.settings.loader import Policy, PolicyRefusal
from tier2.store.policies import PolicySnapshots

__all__ = ["RunPolicy", "current_policy", "run_policy"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunPolicy:
    """The policy a run works under."""

    policy: Policy
    #: True: taken now from the policy files (the run's first attempt); False: the run's recorded snapshot
    fresh: bool
    #: a policy edit on disk that was refused when this snapshot was taken (only for a fresh snapshot)
    refused: PolicyRefusal | None = None


async def run_policy(rt: Runtime, run_id: str | None) -> RunPolicy:
    """The run's snapshot when it has one (an attempt after the first), else the current policy (``run_id`` None:
    a new foreground run)."""
    snapshots = PolicySnapshots(rt.store.r, rt.store.keys)
    record = await rt.store.get_record(run_id) if run_id else None
    recorded = record.policy if record is not None else None
    if recorded:
        stored = await snapshots.get(recorded)
        if stored is not None:
            return RunPolicy(stored, fresh=False)
        log.warning("run %s: its policy snapshot %s is not stored (a run started before snapshots were kept); "
                    "this attempt uses the current policy", run_id, recorded)
    return current_policy(rt)


def current_policy(rt: Runtime) -> RunPolicy:
    """A fresh snapshot of the policy files (and the edit refused meanwhile, if any)."""
    return RunPolicy(rt.policies.snapshot(), fresh=True, refused=rt.policies.refused)

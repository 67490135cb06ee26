"""Which process owns a run, and whether it is still alive (this host only; pid reuse guarded by start time).

This covers foreground runs (``tier2 generate``), which no worker can resume: if that process dies, the next
service start on the same host finds the run's owner gone and ends the run ``failed`` with a terminal event — the
service never keeps reporting "running" for something that died unseen, and the project's one-writer marker is
released in the same write (`tier2.store.finish.finish_run`). Dispatched runs are recovered by workers
(lease expiry → a new attempt resumes from the newest checkpoint), never by this sweep.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from tier2.store.finish import RunEnd, finish_run
from tier2.store.lifecycle import is_terminal
from tier2.store.replies import members
from tier2.store.run_store import RunStore

__all__ = ["process_owner", "owner_alive", "sweep_orphans"]


def _start_ticks(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[19]  # field 22: start time in clock ticks
    except (OSError, IndexError):
        return None


def process_owner() -> dict[str, Any]:
    pid = os.getpid()
    return {"host": socket.gethostname(), "pid": pid, "start": _start_ticks(pid)}


def owner_alive(owner: dict[str, Any]) -> bool | None:
    """True/False for an owner on this host; None when it lives elsewhere (cannot tell)."""
    if owner.get("host") != socket.gethostname():
        return None
    pid = owner.get("pid")
    return isinstance(pid, int) and _start_ticks(pid) is not None and _start_ticks(pid) == owner.get("start")


async def sweep_orphans(store: RunStore, recent: int = 2000) -> list[str]:
    """End every non-terminal recent run whose owning process on this host is gone; returns their ids."""
    ended: list[str] = []
    for run_id in members(await store.r.zrevrange(store.keys.runs_index(), 0, recent - 1)):
        record = await store.get_record(run_id)
        if record is None or is_terminal(record.status) or not record.owner:
            continue
        if record.dispatched:
            continue  # a worker run: its lease expires and another worker resumes it (tier2.runs.process.worker)
        if owner_alive(record.owner) is False:
            reason = (f"the process that ran it (pid {record.owner.get('pid')}) died before the run ended; "
                      "no attempt is resumed yet")
            done = await finish_run(store, run_id, RunEnd(status="failed", stop_reason=reason))
            if done.outcome == "finished":
                ended.append(run_id)
    return ended

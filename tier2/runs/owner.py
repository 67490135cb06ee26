"""Which process owns a run, and whether it is still alive (this host only; pid reuse guarded by start time).

This covers foreground runs (``tier2 generate``), which no worker can resume: if that process dies, the next
service start on the same host finds the run's owner gone and ends the run ``failed`` with a terminal event — the
service never keeps reporting "running" for something that died unseen. Dispatched runs are recovered by workers
(lease expiry → a new attempt resumes from the newest checkpoint), never by this sweep.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from tier2.events import TERMINAL_STATUSES, RunFinished
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
    for run_id in await store.r.zrevrange(store.keys.runs_index(), 0, recent - 1):
        record = await store.get_run(run_id)
        if not record or record.get("status") in TERMINAL_STATUSES or not record.get("owner"):
            continue
        if record.get("dispatched"):
            continue  # a worker run: its lease expires and another worker resumes it (tier2.runs.worker)
        if owner_alive(record["owner"]) is False:
            reason = (f"the process that ran it (pid {record['owner'].get('pid')}) died before the run ended; "
                      "no attempt is resumed yet")
            await store.update_run(run_id, status="failed", stop_reason=reason)
            await store.append_event(RunFinished(run_id=run_id, status="failed", stop_reason=reason))
            ended.append(run_id)
    return ended

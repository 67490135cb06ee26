"""The key layout of a store: keys written before the hash tags (``<p>:run:<id>:events``...) are renamed to the
tagged names of `tier2.store.keys` once, at start (`migrate_layout`, called by `open_runtime`).

Idempotent and safe to run from several processes at once: a key another process renamed first is simply gone
(``RENAME`` of a missing key is skipped); a target that exists already (a new process wrote it meanwhile) is merged
for sets, sorted sets and hashes, and otherwise kept with the old key left in place and logged. Once a pass found
nothing left to rename, `Keys.layout` records layout ``2`` and later starts skip the scan. A Redis Cluster never
held the old layout (tier2 refused one until the tags), so the scan is skipped there.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tier2.store.keys import Keys
from tier2.store.replies import text

__all__ = ["LAYOUT", "legacy_name", "migrate_layout"]

log = logging.getLogger(__name__)

#: the layout `Keys` writes: hash-tagged names
LAYOUT = "2"

_ID = r"(?P<a>[A-Za-z0-9][A-Za-z0-9_.:-]*?)"
_PART = r"(?P<b>[^:{}]+)"
_REST = r"(?P<b>.+)"
_SCOPE = r"(?P<a>[^{].*?)"  # a case scope or a policy digest (a tagged name starts with ``{``)
_TENANT = r"(?P<a>[^:{}]+)"

# (pattern after ``<prefix>:`` in the old layout, the `Keys` method and how its arguments come from the match)
_OLD: list[tuple[str, Callable[[Keys, re.Match[str]], str]]] = []


def _family(pattern: str, method: str, args: str = "a") -> None:
    def new(keys: Keys, m: re.Match[str]) -> str:
        return str(getattr(keys, method)(*(m.group(g) for g in args)))
    _OLD.append((pattern, new))


for _suffix, _method in (("", "run"), (":events", "run_events"), (":event_seq", "run_event_seq"),
                         (":event_tokens", "run_event_tokens"), (":trajectory", "run_trajectory"),
                         (":trajectory:order", "run_trajectory_order"), (":lease", "run_lease"),
                         (":fence", "run_fence"), (":attempts", "run_attempts"), (":cancel", "run_cancel"),
                         (":commands", "run_commands"), (":blocks", "run_blocks"),
                         (":checkpoints", "run_checkpoints"), (":checkpoint:latest", "run_latest"),
                         (":ops", "run_ops"), (":ops:began", "run_op_began"), (":ops:by", "run_op_by"),
                         (":ops:applied", "run_op_applied"), (":budget", "run_budget"),
                         (":budget:calls", "run_budget_calls"), (":snaps", "run_snapshots"),
                         (":snap_ops", "run_snap_ops")):
    _family(f"run:{_ID}{re.escape(_suffix)}", _method)
_family(f"run:{_ID}:checkpoints:{_PART}", "run_agent_checkpoints", "ab")
_family(f"run:{_ID}:checkpoint:latest:{_PART}", "run_agent_latest", "ab")


def _team(part: str) -> Callable[[Keys, re.Match[str]], str]:
    return lambda k, m: k.run_team(m.group("a"), m.group("b"), part)


for _part in ("inbox", "closed"):
    _OLD.append((f"run:{_ID}:team:{_PART}:{_part}", _team(_part)))
for _suffix, _method in (("", "thread"), (":runs", "thread_runs"), (":state", "thread_state")):
    _family(f"thread:{_ID}{re.escape(_suffix)}", _method)
for _suffix, _method in (("", "project"), (":active", "project_active"), (":plans", "project_plans"),
                         (":plans:index", "project_plans_index"), (":plans:seq", "project_plans_seq")):
    _family(f"project:{_ID}{re.escape(_suffix)}", _method)
for _suffix, _method in ((":active", "tenant_active"), (":running", "tenant_running"), (":queue", "tenant_queue"),
                         (":submissions", "tenant_submissions"), (":disk", "tenant_disk"),
                         (":snap:stamps", "snap_stamps"), (":snap:sizes", "snap_sizes"),
                         (":snap:bytes", "snap_bytes"), (":snap:clock", "snap_clock"), (":snap:runs", "snap_runs"),
                         (":runs", "tenant_runs")):
    _family(f"tenant:{_TENANT}{re.escape(_suffix)}", _method)
_family(f"tenant:{_TENANT}:uploads:{_PART}", "tenant_uploads", "ab")
_family(f"idem:{_TENANT}:{_REST}", "idempotency", "ab")
_family(f"snap:blob:{_TENANT}:{_PART}", "snap_blob", "ab")
_family(f"snap:tree:{_TENANT}:{_PART}", "snap_tree", "ab")
_family(f"policy:{_SCOPE}", "policy_snapshot")
_family(f"cases:{_SCOPE}:stats", "case_stats")
_family(f"cases:{_SCOPE}", "cases")
for _old, _method in (("runs", "runs_index"), ("dispatch", "dispatch"), ("dispatch:tenants", "dispatch_tenants"),
                      ("workers", "workers"), ("snap:tenants", "snap_tenants"),
                      ("tenant-runs:indexed", "tenant_runs_indexed")):
    _family(re.escape(_old), _method, "")
# the longest literal first: ``run:<id>:ops:began`` before ``run:<id>:ops`` before ``run:<id>``
_OLD.sort(key=lambda entry: -len(re.sub(r"\(\?P<\w>[^)]*\)", "", entry[0])))


def legacy_name(keys: Keys, name: str) -> str | None:
    """The tagged name of ``name`` when it is a key of the old layout under ``keys.prefix``, else None (a tagged
    key, a legacy snapshot blob or tree, anything not tier2's)."""
    head = keys.prefix + ":"
    if not name.startswith(head):
        return None
    rest = name[len(head):]
    for pattern, new in _OLD:
        m = re.fullmatch(pattern, rest)
        if m:
            return new(keys, m)
    return None


async def _move(r: aioredis.Redis, old: str, new: str) -> bool:
    """Rename ``old`` to ``new``; when ``new`` exists, merge a set, sorted set or hash into it. False: left alone."""
    try:
        if await r.renamenx(old, new):
            return True
    except ResponseError as exc:
        if "no such key" in str(exc).lower():
            return True  # another process moved it first
        raise
    kind = text(await r.type(old))
    if kind == "set":
        await r.sunionstore(new, [new, old])
    elif kind == "zset":
        await r.zunionstore(new, [new, old], aggregate="MIN")
    elif kind == "hash":
        fields = await r.hgetall(old)
        for field, value in fields.items():
            await r.hsetnx(new, field, value)
    else:
        log.warning("store layout: %s and %s both exist (%s): the old key is kept, not merged", old, new, kind)
        return False
    await r.delete(old)
    return True


async def migrate_layout(r: aioredis.Redis, keys: Keys, *, cluster: bool = False) -> int:
    """Rename every key of the old layout under ``keys.prefix`` (the module docstring); how many were moved."""
    if text(await r.get(keys.layout()) or "") == LAYOUT:
        return 0
    if cluster:
        await r.set(keys.layout(), LAYOUT)
        return 0
    moved = kept = 0
    async for raw in r.scan_iter(match=keys.prefix + ":*", count=1000):
        name = text(raw)
        new = legacy_name(keys, name)
        if new is None or new == name:
            continue
        if await _move(r, name, new):
            moved += 1
        else:
            kept += 1
    if moved:
        log.info("store layout: renamed %d key(s) of the old layout to hash-tagged names", moved)
    if not kept:
        await r.set(keys.layout(), LAYOUT)
    return moved

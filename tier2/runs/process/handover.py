"""Clean hand-over (seed 000 §2.6/§3.4): before a new attempt works on a project, the superseded attempt's
executors are stopped. The docker kind's containers outlive a killed worker (the daemon keeps them ``Up`` with the
project mounted read-write); the isolated kind's bubblewrap dies with its parent (``--die-with-parent``, and its
pid namespace with it); the local kind runs nothing outside the worker's own process tree.

Two places act: a new attempt's sandbox removes its run's earlier attempts' containers before it starts its own
(`tier2.sandbox.docker.DockerEngine.stop_superseded`), and every worker sweeps at its start the containers no live
attempt owns (`sweep_run_containers`): the run ended or is unknown, a newer attempt exists, or the attempt's lease
is gone.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

from redis.exceptions import RedisError

from tier2.errors import SetupError
from tier2.runs.process.runtime import Runtime
from tier2.sandbox.docker import DockerEngine, RunContainer, docker_client
from tier2.sandbox.docker_api import DockerSocket
from tier2.store.lifecycle import is_terminal

__all__ = ["sweep_run_containers"]

log = logging.getLogger(__name__)


async def _orphaned(rt: Runtime, c: RunContainer) -> str | None:
    """Why no live attempt owns ``c`` (None: its attempt holds the run's lease — leave it alone)."""
    store, k = rt.store, rt.store.keys
    record = await store.get_record(c.run_id)
    if record is None:
        return "its run is unknown"
    if is_terminal(record.status):
        return f"its run ended {record.status}"
    current = int(await store.r.get(k.run_fence(c.run_id)) or 0)
    if c.attempt < current:
        return f"attempt {current} superseded it"
    holder = await store.r.get(k.run_lease(c.run_id))  # "<worker>|<token>" (a client decoding responses)
    if holder is None or str(holder).rsplit("|", 1)[-1] != str(c.attempt):
        return "its attempt's lease is gone"
    return None


async def sweep_run_containers(rt: Runtime) -> list[str]:
    """Remove the run containers of this install's docker daemon that no live attempt owns; the ids removed. Only
    when the docker kind is allowed and its daemon already answers (a sweep never starts a daemon). A daemon on a
    unix socket — the private one, or a configured ``unix://`` host — is asked through its API (no process
    started: `tier2.sandbox.docker_api`); a remote one through the docker CLI."""
    sandbox = rt.security.sandbox
    if "docker" not in sandbox.allowed_kinds:
        return []
    engine = DockerEngine.shared(rt.settings.workspaces / ".docker", sandbox.docker)
    socket = DockerSocket(Path(engine.host.removeprefix("unix://"))) if engine.host.startswith("unix://") else None
    if socket is not None:
        if not await asyncio.to_thread(socket.answers):
            return []
        daemon: DockerSocket | DockerEngine = socket
    elif docker_client() is None or not await asyncio.to_thread(engine.answers):
        return []
    else:
        daemon = engine
    try:
        if isinstance(daemon, DockerSocket):
            containers = await asyncio.to_thread(daemon.run_containers, rt.store.keys.prefix)
        else:
            containers = await asyncio.to_thread(daemon.run_containers, None, rt.store.keys.prefix)
        doomed: list[str] = []
        for c in containers:
            why = await _orphaned(rt, c)
            if why is not None:
                log.warning("removing container %s of run %s attempt %d: %s", c.id[:12], c.run_id, c.attempt, why)
                doomed.append(c.id)
        await asyncio.to_thread(daemon.remove, doomed)
        return doomed
    except (SetupError, RedisError, OSError) as exc:
        log.warning("sweep of run containers failed (%s): the next worker start or attempt retries", exc)
        return []

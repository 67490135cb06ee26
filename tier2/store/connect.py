"""The one factory of Redis clients: every tier2 process builds its client from ``REDIS_URL`` here.

Accepted forms (docs/operations.md, "Redis Cluster and Sentinel"):

* ``redis://[user:password@]host:port[/db]``, ``rediss://...`` (TLS), ``unix:///path/to/socket[?db=N]`` — one
  server (redis-py's ``from_url``);
* ``redis+cluster://[user:password@]host:port[,host:port...]`` — a Redis Cluster, any of its nodes as seeds
  (`redis.asyncio.cluster.RedisCluster`, which follows MOVED/ASK and a failover's new slot map);
* ``redis+sentinel://[user:password@]host:port[,host:port...]/<master-name>[/db]`` — the master a set of
  Sentinels names (`redis.asyncio.sentinel.Sentinel.master_for`: after a failover the next connection goes to the
  promoted replica). The password is the data servers'; the Sentinels are reached without one.

``resilient=True`` (what the run store uses) retries commands on connection errors with backoff for about
``outage_s`` — every write tier2 makes is idempotent, so a retry after a lost reply is safe.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, cast
from urllib.parse import unquote

import redis
import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.asyncio.retry import Retry
from redis.asyncio.sentinel import Sentinel, SentinelManagedConnection
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError, TimeoutError

from tier2.errors import SetupError

__all__ = ["RedisTarget", "connect", "connect_sync", "get_each", "is_cluster", "parse_redis_url"]

Kind = Literal["single", "cluster", "sentinel"]
_CLUSTER, _SENTINEL = "redis+cluster://", "redis+sentinel://"


@dataclass(frozen=True)
class RedisTarget:
    """What a ``REDIS_URL`` names: one server (``url`` kept for ``from_url``), a cluster's seed nodes, or the
    Sentinels and master name of a replicated primary."""

    kind: Kind
    url: str = ""
    nodes: tuple[tuple[str, int], ...] = ()
    master: str = ""
    db: int = 0
    username: str | None = None
    password: str | None = None


def _hosts(text: str, url: str) -> tuple[tuple[str, int], ...]:
    out: list[tuple[str, int]] = []
    for part in text.split(","):
        host, sep, port = part.strip().rpartition(":")
        if not sep or not host or not port.isdigit():
            raise SetupError(f"REDIS_URL {_redact(url)!r}: {part!r} is not host:port")
        out.append((host.strip("[]"), int(port)))
    return tuple(out)


def _redact(url: str) -> str:
    scheme, sep, rest = url.partition("://")
    creds, at, hosts = rest.rpartition("@")
    return f"{scheme}{sep}***@{hosts}" if at and creds else url


def parse_redis_url(url: str) -> RedisTarget:
    """Parse ``url`` (the forms of the module docstring); `SetupError` for anything else."""
    for scheme in (_CLUSTER, _SENTINEL):
        if url.startswith(scheme):
            break
    else:
        if url.startswith(("redis://", "rediss://", "unix://")):
            return RedisTarget("single", url=url)
        raise SetupError(f"REDIS_URL {_redact(url)!r}: expected redis://, rediss://, unix://, redis+cluster:// or "
                         "redis+sentinel://")
    rest = url[len(scheme):]
    rest, _, _query = rest.partition("?")
    creds, at, rest = rest.rpartition("@")
    username = password = None
    if at:
        user, colon, secret = creds.partition(":")
        username, password = (unquote(user) or None), (unquote(secret) if colon else None)
    hosts, _, path = rest.partition("/")
    nodes = _hosts(hosts, url)
    parts = [p for p in path.split("/") if p]
    if scheme == _CLUSTER:
        if parts:
            raise SetupError(f"REDIS_URL {_redact(url)!r}: a cluster has no database or path")
        return RedisTarget("cluster", nodes=nodes, username=username, password=password)
    if not parts or len(parts) > 2 or (len(parts) == 2 and not parts[1].isdigit()):
        raise SetupError(f"REDIS_URL {_redact(url)!r}: expected redis+sentinel://host:port[,...]/<master-name>[/db]")
    return RedisTarget("sentinel", nodes=nodes, master=unquote(parts[0]), db=int(parts[1]) if len(parts) == 2 else 0,
                       username=username, password=password)


def is_cluster(url: str) -> bool:
    return parse_redis_url(url).kind == "cluster"


def _retry_opts(resilient: bool, outage_s: float) -> dict[str, Any]:
    if not resilient:
        return {}
    return {"retry": Retry(ExponentialBackoff(cap=1.0, base=0.05), retries=int(outage_s) + 5),
            "retry_on_error": [ConnectionError, TimeoutError, OSError]}


class _MasterConnection(SentinelManagedConnection):
    """A connection to the Sentinels' current master: every (re)connect asks the Sentinels for the master's
    address first. redis-py's own reconnects a retried command to the address it had, so after a failover the
    retries spin on the killed primary."""

    async def connect_check_health(self, check_health: bool = True, retry_socket_connect: bool = True) -> None:
        if not self.is_connected:
            self.host, self.port = await self.connection_pool.get_master_address()
        await super().connect_check_health(check_health=check_health, retry_socket_connect=retry_socket_connect)


class _SentinelMaster(aioredis.Redis):
    """The master's client; closing it closes the Sentinel connections it asked for the master too."""

    sentinel_clients: list[aioredis.Redis] = []  # noqa: RUF012 - set per instance by `connect`

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        await super().aclose(close_connection_pool)
        for client in self.sentinel_clients:
            await client.aclose()


class _SyncSentinelMaster(redis.Redis):
    """`_SentinelMaster`, blocking."""

    sentinel_clients: list[redis.Redis] = []  # noqa: RUF012 - set per instance by `connect_sync`

    def close(self) -> None:
        super().close()
        for client in self.sentinel_clients:
            client.close()


def _auth(target: RedisTarget) -> dict[str, Any]:
    return {k: v for k, v in (("username", target.username), ("password", target.password)) if v is not None}


def connect(url: str, *, decode_responses: bool = True, resilient: bool = False, outage_s: float = 20.0,
            **opts: Any) -> aioredis.Redis:
    """An asyncio client for ``url``. A cluster client (`RedisCluster`) is returned typed as `aioredis.Redis`:
    tier2 uses only the command surface the two share (commands, scripts, pipelines on one slot)."""
    target = parse_redis_url(url)
    kw: dict[str, Any] = {"decode_responses": decode_responses, **_retry_opts(resilient, outage_s), **opts}
    if target.kind == "single":
        return aioredis.Redis.from_url(target.url, **kw)
    auth = _auth(target)
    if target.kind == "cluster":
        nodes = [ClusterNode(h, p) for h, p in target.nodes]
        return cast(aioredis.Redis, RedisCluster(startup_nodes=nodes, **auth, **kw))
    sentinel_kw = {k: kw[k] for k in ("socket_timeout", "socket_connect_timeout") if k in kw}
    sentinel = Sentinel(list(target.nodes), sentinel_kwargs=sentinel_kw, **auth, **kw)  # type: ignore[no-untyped-call]
    master = sentinel.master_for(target.master, redis_class=_SentinelMaster, db=target.db,
                                 connection_class=_MasterConnection)
    master.sentinel_clients = list(sentinel.sentinels)
    return cast(aioredis.Redis, master)


def connect_sync(url: str, *, decode_responses: bool = True, **opts: Any) -> redis.Redis:
    """The blocking client for ``url`` (tools, test harnesses, the chaos drill), same forms as `connect`."""
    target = parse_redis_url(url)
    kw: dict[str, Any] = {"decode_responses": decode_responses, **opts}
    if target.kind == "single":
        return redis.Redis.from_url(target.url, **kw)
    auth = _auth(target)
    if target.kind == "cluster":
        from redis.cluster import ClusterNode as SyncNode
        from redis.cluster import RedisCluster as SyncCluster

        nodes = [SyncNode(h, p) for h, p in target.nodes]  # type: ignore[no-untyped-call]  # redis-py: unannotated
        return cast(redis.Redis, SyncCluster(startup_nodes=nodes, **auth, **kw))
    from redis.sentinel import Sentinel as SyncSentinel

    sentinel_kw = {k: kw[k] for k in ("socket_timeout", "socket_connect_timeout") if k in kw}
    sentinel = SyncSentinel(list(target.nodes), sentinel_kwargs=sentinel_kw, **auth, **kw)  # type: ignore[no-untyped-call]
    master = sentinel.master_for(target.master, redis_class=_SyncSentinelMaster, db=target.db)  # type: ignore[no-untyped-call]
    master.sentinel_clients = list(sentinel.sentinels)
    return cast(redis.Redis, master)


async def get_each(client: aioredis.Redis, names: list[str]) -> list[Any]:
    """``GET`` of every key in ``names``, in order, over one pipeline: keys of many slots (``MGET`` must stay in one
    slot on a Cluster; a non-transactional pipeline is split by node)."""
    if not names:
        return []
    async with client.pipeline(transaction=False) as p:
        for name in names:
            p.get(name)
        return list(await p.execute())

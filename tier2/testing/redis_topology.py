"""Real replicated Redis topologies on loopback for tests and benches: a Redis Cluster of N primaries
(`RedisShards`: ``redis-server --cluster-enabled yes`` ×N + ``redis-cli --cluster create``) and a primary with a
replica watched by three Sentinels (`SentinelSet`). Every process binds 127.0.0.1 on a free port, lives in a
directory of the caller's, and is stopped (SIGKILL if it does not exit) by `close`."""

from __future__ import annotations

import contextlib
import random
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from types import TracebackType
from typing import Any

import redis

from tier2.store.embedded_server import free_port

__all__ = ["RedisShards", "SentinelSet"]

_WAIT_S = 60.0


def _wait(check: object, what: str, timeout: float = _WAIT_S) -> None:
    """Poll ``check()`` (observable state) until true; `TimeoutError` naming ``what`` otherwise."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(redis.RedisError, OSError):
            if check():  # type: ignore[operator]
                return
        time.sleep(0.05)
    raise TimeoutError(f"{what} not reached in {timeout:.0f} s")


def _cmd(port: int, *args: str) -> Any:
    """One command to the server on ``port`` over a connection closed after it (decoded replies)."""
    client = redis.Redis(port=port, socket_timeout=2, socket_connect_timeout=2, decode_responses=True)
    try:
        return client.execute_command(*args)  # type: ignore[no-untyped-call]  # redis-py: unannotated
    finally:
        client.close()


def _cluster_port() -> int:
    """A free port whose cluster bus port (+10000) is free too (so at most 55535)."""
    for _ in range(200):
        port = random.randint(20_000, 55_535)
        with contextlib.ExitStack() as stack:
            try:
                for p in (port, port + 10_000):
                    sock = stack.enter_context(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
                    sock.bind(("127.0.0.1", p))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port pair for a cluster node")


class _Procs:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.procs: dict[int, subprocess.Popen[bytes]] = {}
        self.exe = shutil.which("redis-server") or "redis-server"

    def spawn(self, port: int, *args: str, config: str | None = None) -> None:
        d = self.root / str(port)
        d.mkdir(parents=True, exist_ok=True)
        argv = [self.exe]
        if config is not None:  # a sentinel: its config file must be writable (it rewrites it)
            (d / "sentinel.conf").write_text(config)
            argv += [str(d / "sentinel.conf"), "--sentinel"]
        argv += ["--port", str(port), "--bind", "127.0.0.1", "--dir", str(d), "--save", "", *args]
        log = (d / "log").open("ab")
        try:
            self.procs[port] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, cwd=d)
        finally:
            log.close()
        proc = self.procs[port]

        def up() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"redis-server on :{port} exited {proc.returncode}: see {d / 'log'}")
            return bool(_cmd(port, "PING"))
        _wait(up, f"redis on :{port} answering")

    def kill(self, port: int) -> None:
        proc = self.procs.pop(port)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)

    def close(self) -> None:
        for port in list(self.procs):
            proc = self.procs.pop(port)
            proc.terminate()
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(10)


class RedisShards:
    """A Redis Cluster of ``primaries`` nodes (no replicas), its slots spread by ``redis-cli --cluster create``;
    one primary holds every slot itself (``CLUSTER ADDSLOTSRANGE``): a plain client reaches all keys on it, and
    the server still refuses any script, ``MULTI`` or multi-key command over two slots (the key-slot test)."""

    def __init__(self, root: Path, primaries: int = 3) -> None:
        self._procs = _Procs(root)
        self.ports = [_cluster_port() for _ in range(primaries)]

    @property
    def url(self) -> str:
        return "redis+cluster://" + ",".join(f"127.0.0.1:{p}" for p in self.ports)

    def start(self) -> RedisShards:
        for port in self.ports:
            self._procs.spawn(port, "--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
                              "--cluster-node-timeout", "2000", "--appendonly", "yes", "--appendfsync", "always")
        if len(self.ports) == 1:
            _cmd(self.ports[0], "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
        else:
            subprocess.run(["redis-cli", "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
                            "--cluster-replicas", "0", "--cluster-yes"], check=True, capture_output=True, timeout=60)

        def ready() -> bool:
            return all("cluster_state:ok" in _cmd(p, "CLUSTER", "INFO") for p in self.ports)
        _wait(ready, "cluster_state:ok on every node")
        return self

    def close(self) -> None:
        self._procs.close()

    def __enter__(self) -> RedisShards:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class SentinelSet:
    """A primary, ``replicas`` replicas and three Sentinels monitoring them as ``master`` (quorum 2, down after
    1 s). `kill_primary` SIGKILLs the primary; `wait_failover` waits until the Sentinels name another one."""

    def __init__(self, root: Path, master: str = "tier2", replicas: int = 1) -> None:
        self._procs = _Procs(root)
        self.master = master
        self.primary = free_port()
        self.replicas = [free_port() for _ in range(replicas)]
        self.sentinels = [free_port() for _ in range(3)]
        self._sentinels_up = False

    @property
    def url(self) -> str:
        return "redis+sentinel://" + ",".join(f"127.0.0.1:{p}" for p in self.sentinels) + f"/{self.master}"

    def start(self) -> SentinelSet:
        durable = ("--appendonly", "yes", "--appendfsync", "always")
        self._procs.spawn(self.primary, *durable)
        for port in self.replicas:
            self._procs.spawn(port, *durable, "--replicaof", "127.0.0.1", str(self.primary))
        _wait(lambda: self.online_replicas() == len(self.replicas), "every replica online")
        conf = (f"sentinel monitor {self.master} 127.0.0.1 {self.primary} 2\n"
                f"sentinel down-after-milliseconds {self.master} 1000\n"
                f"sentinel failover-timeout {self.master} 5000\n"
                f"sentinel parallel-syncs {self.master} 1\n")
        for port in self.sentinels:
            self._procs.spawn(port, config=conf)

        def all_see_all() -> bool:
            for port in self.sentinels:
                info = _cmd(port, "SENTINEL", "MASTER", self.master)
                fields = dict(zip(info[::2], info[1::2], strict=True)) if isinstance(info, list) else info
                if int(fields["num-other-sentinels"]) < 2 or int(fields["num-slaves"]) < len(self.replicas):
                    return False
            return True
        _wait(all_see_all, "the Sentinels seeing each other and the replicas")
        self._sentinels_up = True
        return self

    def online_replicas(self) -> int:
        """Replicas of the current primary that are in sync (``state=online``, their link up)."""
        info = _cmd(self.master_port() if self._sentinels_up else self.primary, "INFO", "replication")
        ports = [v["port"] for k, v in info.items() if k.startswith("slave") and isinstance(v, dict)
                 and v.get("state") == "online"]
        return sum(1 for p in ports if _cmd(int(p), "INFO", "replication").get("master_link_status") == "up")

    def master_port(self) -> int:
        """The primary's port as the first Sentinel that answers names it."""
        for port in self.sentinels:
            with contextlib.suppress(redis.RedisError, OSError):
                addr = _cmd(port, "SENTINEL", "GET-MASTER-ADDR-BY-NAME", self.master)
                return int(addr[1])
        raise redis.ConnectionError("no Sentinel answers")

    def kill(self, port: int) -> None:
        """SIGKILL the server (or Sentinel) on ``port``."""
        self._procs.kill(port)

    def kill_primary(self) -> int:
        """SIGKILL the current primary; its port."""
        port = self.master_port()
        self._procs.kill(port)
        return port

    def wait_failover(self, old: int) -> int:
        """Wait until a replica is promoted in place of ``old`` and answers as a master; its port."""
        def promoted() -> bool:
            port = self.master_port()
            return port != old and _cmd(port, "ROLE")[0] == "master"
        _wait(promoted, "a promoted replica")
        return self.master_port()

    def close(self) -> None:
        self._procs.close()

    def __enter__(self) -> SentinelSet:
        return self.start()

    def __exit__(self, t: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

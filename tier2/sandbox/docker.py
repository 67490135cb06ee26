"""``docker``: one container per run's workspace, on a daemon tier2 starts itself (or one the config names).

**The daemon.** Without ``[sandbox.docker] host``, tier2 starts a private ``dockerd`` with its own data root, exec
root, pidfile and unix socket under ``<workspaces>/.docker/`` and the flags that leave the host's network alone:
``--bridge=none --iptables=false --ip-forward=false --ip-masq=false`` (the defaults add a bridge, NAT rules and
turn on forwarding). It is supervised by pid and stopped when the process that started it exits.

**The image** is built locally, never pulled: a skeleton root filesystem (directory layout, a ``passwd`` without
secrets) tarred in memory and ``docker import``-ed; ``/usr`` is bind-mounted read-only from the host at run time,
so commands, esbuild and Chromium are the host's exact binaries (same bundle bytes as ``local``).

**The container**: ``--user`` the unprivileged sandbox uid:gid (`tier2.sandbox.identity`: nothing it creates is
root-owned on the host), ``--network none``, ``--read-only`` root, ``--cap-drop ALL``, ``no-new-privileges`` (a
set-id program gains nothing: docker's binds cannot be mounted ``nosuid``, this is what stops them), memory / cpu /
pids limits, a private ``nosuid,nodev`` ``/tmp``; the project is the only writable volume, at its host path.
Commands run with ``docker exec``; a container that disappeared (the sandbox was lost) is recreated on the next
command. Chromium runs in its own ``docker run -i`` with Playwright's pipe carried over stdin/stdout.

**Hand-over.** A run attempt's containers (workspace and browser) carry the labels ``tier2.run`` and
``tier2.attempt``. Before a new attempt's sandbox starts its container, every container of an earlier attempt of
the same run is removed (a worker killed mid-command leaves its container ``Up`` with the project mounted
read-write: it must not write while the new attempt works), and a worker sweeps, when it starts, the containers of
runs that ended or of attempts whose lease is gone (`sweep_run_containers`).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import io
import json
import logging
import os
import shutil
import signal
import subprocess
import tarfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from tier2.errors import SetupError
from tier2.sandbox.base import BASE_ENV, Sandbox, SandboxOwner, SandboxSpec
from tier2.sandbox.bwrap import ETC_ALLOW
from tier2.settings.identity import sandbox_identity
from tier2.settings.sandbox import DockerConfig

__all__ = ["DockerEngine", "DockerSandbox", "RunContainer", "docker_available", "SAFE_DAEMON_FLAGS"]

#: the labels of a run attempt's containers
RUN_LABEL, ATTEMPT_LABEL, STORE_LABEL = "tier2.run", "tier2.attempt", "tier2.store"

log = logging.getLogger(__name__)

#: Never start dockerd without these: its defaults rewrite the host's network (bridge, NAT, ip_forward).
SAFE_DAEMON_FLAGS = ("--bridge=none", "--iptables=false", "--ip-forward=false", "--ip-masq=false")
_SKELETON_PASSWD = "root:x:0:0:root:/nonexistent:/usr/sbin/nologin\nnobody:x:65534:65534::/nonexistent:/bin/false\n"


def docker_client() -> str | None:
    return shutil.which("docker")


def docker_available() -> str | None:
    """Why ``docker`` cannot run here (no client, no daemon binary), or None."""
    if docker_client() is None:
        return "the docker client is not installed (apt-get install -y docker.io)"
    if shutil.which("dockerd") is None and not os.environ.get("TIER2_DOCKER_HOST"):
        return "dockerd is not installed (apt-get install -y docker.io) and no daemon is configured"
    return None


class DockerEngine:
    """A daemon to talk to: the configured ``host``, or a private dockerd this process starts (and stops)."""

    _shared: dict[str, DockerEngine] = {}

    def __init__(self, root: Path, config: DockerConfig) -> None:
        self.root, self.config = root, config
        self.host = config.host or os.environ.get("TIER2_DOCKER_HOST") or f"unix://{root / 'run' / 'docker.sock'}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._image_ok = False

    @classmethod
    def shared(cls, root: Path, config: DockerConfig) -> DockerEngine:
        key = str(root.resolve())
        if key not in cls._shared:
            cls._shared[key] = cls(root, config)
        return cls._shared[key]

    def cli(self, *args: str) -> list[str]:
        return [docker_client() or "docker", "-H", self.host, *args]

    def _run(self, *args: str, input: bytes | None = None, timeout: float = 60) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(self.cli(*args), input=input, capture_output=True, timeout=timeout,
                              env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")}, check=False)

    def answers(self) -> bool:
        try:
            return self._run("version", "--format", "{{.Server.Version}}", timeout=10).returncode == 0
        except (OSError, subprocess.TimeoutExpired):
            return False

    def ensure(self) -> None:
        """A daemon that answers (started here if needed) and the sandbox image (imported if missing)."""
        if not self.answers():
            if self.config.host or os.environ.get("TIER2_DOCKER_HOST"):
                raise SetupError(f"the docker daemon at {self.host} does not answer")
            self._start_daemon()
        if not self._image_ok:
            if self._run("image", "inspect", self.config.image).returncode != 0:
                self._import_image()
            # stopped workspace containers a crashed process left (running ones belong to someone: untouched)
            self._run("container", "prune", "-f", "--filter", "label=tier2.sandbox")
            self._image_ok = True

    def run_containers(self, run_id: str | None = None, store: str | None = None) -> list[RunContainer]:
        """Every container (running or not) labelled with a run attempt — of ``run_id`` / of ``store`` only, when
        given."""
        filters = ["--filter", f"label={RUN_LABEL}={run_id}" if run_id else f"label={RUN_LABEL}"]
        if store is not None:
            filters += ["--filter", f"label={STORE_LABEL}={store}"]
        done = self._run("ps", "-a", "--no-trunc", *filters, "--format",
                         f'{{{{.ID}}}} {{{{.Label "{RUN_LABEL}"}}}} {{{{.Label "{ATTEMPT_LABEL}"}}}}')
        if done.returncode != 0:
            raise SetupError(f"docker ps failed: {done.stderr.decode(errors='replace')[-300:]}")
        out: list[RunContainer] = []
        for line in done.stdout.decode().splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                out.append(RunContainer(parts[0], parts[1], int(parts[2])))
        return out

    def remove(self, ids: list[str]) -> None:
        """Stop and remove containers (``rm -f``: SIGKILL to everything in them, then the container is gone)."""
        if ids:
            self._run("rm", "-f", *ids, timeout=120)

    def stop_superseded(self, owner: SandboxOwner) -> list[str]:
        """Remove every container of an earlier attempt of ``owner``'s run; the ids removed."""
        old = [c.id for c in self.run_containers(owner.run_id, owner.store) if c.attempt < owner.attempt]
        self.remove(old)
        return old

    def _start_daemon(self) -> None:
        dockerd = shutil.which("dockerd")
        if dockerd is None:
            raise SetupError("dockerd is not installed (apt-get install -y docker.io)")
        for sub in ("data", "exec", "run"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        pidfile = self.root / "run" / "dockerd.pid"
        with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError, PermissionError):
            old = int(pidfile.read_text())  # a daemon left by a crashed process of ours: stop it by its pid
            os.kill(old, signal.SIGTERM)
            time.sleep(1)
        (self.root / "run" / "docker.sock").unlink(missing_ok=True)
        with open(self.root / "dockerd.log", "ab") as log:  # the daemon keeps its own copy of the descriptor
            self.proc = subprocess.Popen(
                [dockerd, "--data-root", str(self.root / "data"), "--exec-root", str(self.root / "exec"),
                 "--pidfile", str(pidfile), "-H", self.host, *SAFE_DAEMON_FLAGS],
                stdout=log, stderr=log, stdin=subprocess.DEVNULL, start_new_session=True,
                env={"PATH": os.environ.get("PATH", "/usr/sbin:/usr/bin:/sbin:/bin")})
        atexit.register(self.stop)
        deadline = time.monotonic() + self.config.start_timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SetupError(f"dockerd exited with {self.proc.returncode}; see {self.root / 'dockerd.log'}")
            if self.answers():
                return
            time.sleep(0.2)
        self.stop()
        raise SetupError(f"dockerd did not answer within {self.config.start_timeout_s:g}s")

    def _import_image(self) -> None:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            def add(name: str, kind: bytes = tarfile.DIRTYPE, data: bytes = b"", link: str = "",
                    mode: int = 0o755) -> None:
                info = tarfile.TarInfo(name)
                info.type, info.mode, info.mtime = kind, mode, 0
                if kind == tarfile.SYMTYPE:
                    info.linkname = link
                info.size = len(data) if kind == tarfile.REGTYPE else 0
                tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
            for d in ("etc", "usr", "tmp", "proc", "dev", "sys", "work", "run"):
                add(d, mode=0o1777 if d == "tmp" else 0o755)
            for link, target in (("lib", "usr/lib"), ("lib64", "usr/lib64"), ("bin", "usr/bin"), ("sbin", "usr/sbin")):
                add(link, tarfile.SYMTYPE, link=target)
            add("etc/passwd", tarfile.REGTYPE, _SKELETON_PASSWD.encode(), mode=0o644)
            add("etc/group", tarfile.REGTYPE, b"root:x:0:\nnogroup:x:65534:\n", mode=0o644)
            add("etc/hostname", tarfile.REGTYPE, b"sandbox\n", mode=0o644)
        done = self._run("import", "-m", "tier2 sandbox skeleton (host /usr bound read-only)", "-", self.config.image,
                         input=buf.getvalue(), timeout=120)
        if done.returncode != 0:
            raise SetupError(f"docker import of the sandbox image failed: {done.stderr.decode()[-400:]}")

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None or proc.poll() is not None:
            return
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)


@dataclass(frozen=True)
class RunContainer:
    id: str
    run_id: str
    attempt: int


class DockerSandbox(Sandbox):
    kind = "docker"

    def __init__(self, spec: SandboxSpec, engine: DockerEngine) -> None:
        super().__init__(spec)
        self.engine = engine
        self.user = self.ident = sandbox_identity(spec.isolation)
        self.name = f"{spec.label}-{uuid.uuid4().hex[:12]}"
        self._lock = asyncio.Lock()
        self._dirty = False  # a command ran since the last settle()
        self._handed_over = False  # earlier attempts' containers removed (once, before the first container)

    def _mounts(self, project: bool = True) -> list[str]:
        args = ["-v", "/usr:/usr:ro"]
        for name in ETC_ALLOW:
            path = Path("/etc") / name
            if path.exists():
                args += ["-v", f"{path.resolve()}:{path}:ro"]
        for path in self.spec.read_only:
            if path.exists():
                args += ["-v", f"{path.resolve()}:{path}:ro"]
        if project:
            args += ["-v", f"{self.project}:{self.project}"]
        return args

    def _limits(self, pids: int | None = None) -> list[str]:
        lim = self.spec.limits
        return ["--user", f"{self.user.uid}:{self.user.gid}", "--network", "none", "--read-only",
                "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
                "--memory", f"{lim.memory_mb}m", "--memory-swap", f"{lim.memory_mb}m", "--cpus", f"{lim.cpus:g}",
                "--pids-limit", str(pids or lim.pids), "--ulimit", f"nofile={lim.nofile}:{lim.nofile}",
                "--ulimit", f"fsize={lim.file_mb * 1024 * 1024}", "--ulimit", f"cpu={lim.cpu_s}",
                "--ulimit", "core=0", "--tmpfs", "/tmp:rw,exec,nosuid,nodev,size=512m", "--shm-size", "256m",
                "--hostname", "sandbox", "--label", f"tier2.sandbox={self.spec.label}", *self._owner_labels()]

    def _owner_labels(self) -> list[str]:
        owner = self.spec.owner
        if owner is None:
            return []
        return ["--label", f"{RUN_LABEL}={owner.run_id}", "--label", f"{ATTEMPT_LABEL}={owner.attempt}",
                "--label", f"{STORE_LABEL}={owner.store}"]

    async def _alive(self) -> bool:
        proc = await asyncio.create_subprocess_exec(
            *self.engine.cli("inspect", "-f", "{{.State.Running}}", self.name), stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env=self.host_env())
        out, _ = await proc.communicate()
        return proc.returncode == 0 and out.strip() == b"true"

    async def start(self) -> None:
        async with self._lock:
            await asyncio.to_thread(self.engine.ensure)
            if self.spec.owner is not None and not self._handed_over:
                removed = await asyncio.to_thread(self.engine.stop_superseded, self.spec.owner)
                if removed:
                    log.warning("run %s attempt %d: removed %d container(s) of earlier attempts",
                                self.spec.owner.run_id, self.spec.owner.attempt, len(removed))
                self._handed_over = True
            if await self._alive():
                return
            await self._docker("rm", "-f", self.name)  # a stopped leftover of a lost sandbox
            done = await self._docker("run", "-d", "--name", self.name, *self._limits(), *self._mounts(),
                                      "-w", str(self.project), self.engine.config.image, "/bin/sleep", "infinity")
            if done[0] != 0:
                raise SetupError(f"docker run of the workspace container failed: {done[1][-400:]}")

    async def close(self) -> None:
        await self._docker("rm", "-f", self.name)

    async def settle(self) -> None:
        """A command's background processes outlive it in a container (they are reparented to its init): kill every
        process but init — `kill -9 -1` from inside — so nothing changes the project while a host tool works."""
        if not self._dirty:
            return
        try:
            code, _ = await asyncio.wait_for(self._docker("exec", self.name, "/bin/sh", "-c", "kill -9 -1; true"), 15)
        except TimeoutError:
            code = -1
        if code not in (0, 137):  # 137: the shell itself got the signal, after it was sent to everyone else
            await self._docker("rm", "-f", self.name)
            await self.start()
        self._dirty = False
        await self.reclaim()  # what a background process did until it was killed

    async def spawn(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
                    stdin: bool = True) -> asyncio.subprocess.Process:
        self._dirty = True
        return await super().spawn(argv, env=env, cwd=cwd, stdin=stdin)

    def launcher(self, argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
        self._dirty = True  # a build killed at its timeout may leave node running in the container
        return super().launcher(argv, env, cwd)

    async def _docker(self, *args: str) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(*self.engine.cli(*args), stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT, env=self.host_env())
        out, _ = await proc.communicate()
        return proc.returncode or 0, out.decode(errors="replace")

    def wrap(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
             interactive: bool = False) -> list[str]:
        full = {**BASE_ENV, "HOME": "/tmp", **(env or {})}
        envs = [a for k, v in full.items() for a in ("-e", f"{k}={v}")]
        return self.engine.cli("exec", *(["-i"] if interactive else []), "-w", str(cwd or self.project), *envs,
                               self.name, *argv)

    async def kill(self, proc: asyncio.subprocess.Process) -> None:
        """Killing the docker client does not stop the command in the container: kill it there (by the marker
        the command session put in its environment), then the client. A container too busy to run the kill (a
        fork bomb holding every pid) is replaced: the project is on the host, the container is disposable."""
        await super().kill(proc)
        marker = getattr(proc, "tier2_marker", None)
        if not marker:
            return
        script = (f"for i in 1 2 3; do for p in /proc/[0-9]*; do grep -qz 'TIER2_CMD={marker}' $p/environ "
                  "2>/dev/null && kill -9 ${p#/proc/}; done; done; true")
        try:
            code, _ = await asyncio.wait_for(self._docker("exec", self.name, "/bin/sh", "-c", script), 15)
        except TimeoutError:
            code = -1
        if code != 0:
            await self._docker("rm", "-f", self.name)
            await self.start()

    async def interrupt(self, proc: asyncio.subprocess.Process) -> None:
        marker = getattr(proc, "tier2_marker", None)
        if marker:
            await self._docker("exec", self.name, "/bin/sh", "-c",
                               f"for p in /proc/[0-9]*; do grep -qz 'TIER2_CMD={marker}' $p/environ 2>/dev/null "
                               "&& kill -INT ${p#/proc/}; done; true")
        else:
            await super().interrupt(proc)

    def wrap_browser(self, argv: list[str]) -> list[str]:
        # a container of its own for the browser (its own pid limit: Chromium is many processes), no project mount:
        # pages come through Playwright's interception. Playwright's pipe fds 3/4 ride on stdin/stdout.
        return self.engine.cli("run", "--rm", "-i", *self._limits(), *self._mounts(project=False),
                               "-e", "HOME=/tmp", "-w", "/tmp", self.engine.config.image, "/bin/sh", "-c",
                               'exec "$@" 3<&0 4>&1 1>&2 0</dev/null', "sh", *argv)

    def browser_redirects(self) -> str:
        return " <&3 >&4"


def container_state(engine: DockerEngine, name: str) -> dict[str, object] | None:
    done = engine._run("inspect", name)
    return json.loads(done.stdout)[0] if done.returncode == 0 else None

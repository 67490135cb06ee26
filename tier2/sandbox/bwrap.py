"""``isolated``: every command in a bubblewrap sandbox.

* the system read-only (``/usr`` and a short list of harmless ``/etc`` entries — never ``/etc/shadow``, never a
  home directory), a private ``/tmp`` and ``/dev/shm``, the project the only writable bind;
* no network (``--unshare-net``: only a loopback nobody listens on), user/pid/ipc/uts/cgroup namespaces, **all
  capabilities dropped** (``--cap-drop ALL``: as root without it a sandbox can remount ``/usr`` read-write and
  mknod), ``--die-with-parent``, ``--new-session``, a cleared environment;
* limits: ``prlimit`` (processes — counted per user namespace, so a fork bomb stops at the limit —, open files,
  file size, CPU seconds, no core dumps) and, when the host's cgroup v1 hierarchies are writable, a pids and a
  memory cgroup per sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shutil
from pathlib import Path

from tier2.errors import SetupError
from tier2.sandbox.base import BASE_ENV, Sandbox, SandboxSpec

__all__ = ["BwrapSandbox", "bwrap_available", "ETC_ALLOW"]

#: /etc entries visible in the sandbox (read-only): libraries, certificates, fonts — nothing that holds secrets.
ETC_ALLOW = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates", "fonts",
             "chromium", "chromium.d", "mime.types", "localtime", "nsswitch.conf", "host.conf", "os-release")
_CGROUP_ROOT = Path("/sys/fs/cgroup")
SANDBOX_UID = 1000


def bwrap_available() -> str | None:
    """Why ``isolated`` cannot run here, or None when it can."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install -y bubblewrap)"
    if shutil.which("prlimit") is None:
        return "prlimit (util-linux) is not installed"
    return None


def _sweep_cgroups() -> None:
    """Remove empty sandbox cgroups left by processes that died without closing their sandbox."""
    for ctrl in ("pids", "memory"):
        base = _CGROUP_ROOT / ctrl / "tier2"
        if not base.is_dir():
            continue
        for cg in base.iterdir():
            pid = cg.name.rsplit("-", 1)[-1]
            if cg.is_dir() and pid.isdigit() and not Path(f"/proc/{pid}").exists():
                with contextlib.suppress(OSError):
                    cg.rmdir()


class BwrapSandbox(Sandbox):
    kind = "isolated"

    def __init__(self, spec: SandboxSpec) -> None:
        super().__init__(spec)
        why = bwrap_available()
        if why:
            raise SetupError(f"workspace kind 'isolated' is unavailable: {why}")
        self.bwrap = shutil.which("bwrap") or "bwrap"
        self.prlimit = shutil.which("prlimit") or "prlimit"
        self._cgroups: list[Path] = []
        self._passwd = spec.home / "sandbox-etc" / "passwd"
        self._started = False

    async def start(self) -> None:
        if self._started:
            return
        self._started = True
        self._passwd.parent.mkdir(parents=True, exist_ok=True)
        self._passwd.write_text(f"sandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:/tmp:/bin/sh\n")
        (self._passwd.parent / "group").write_text(f"sandbox:x:{SANDBOX_UID}:\n")
        self._cgroups = self._make_cgroups()

    async def close(self) -> None:
        for cg in self._cgroups:
            for _ in range(20):  # empty once every process of the sandbox has ended (they die with their parent)
                try:
                    cg.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    await asyncio.sleep(0.05)
        self._cgroups = []
        self._started = False

    def _make_cgroups(self) -> list[Path]:
        """A pids and a memory cgroup (v1) for this sandbox when the host lets us make them; else none."""
        name = f"{self.spec.label}-{hashlib.sha256(str(self.project).encode()).hexdigest()[:8]}-{os.getpid()}"
        made: list[Path] = []
        limits = self.spec.limits
        _sweep_cgroups()
        for ctrl, knob, value in (("pids", "pids.max", str(limits.pids)),
                                  ("memory", "memory.limit_in_bytes", str(limits.memory_mb * 1024 * 1024))):
            base = _CGROUP_ROOT / ctrl
            if not (base / "cgroup.procs").exists():
                continue
            cg = base / "tier2" / name
            try:
                cg.mkdir(parents=True, exist_ok=True)
                (cg / knob).write_text(value)
                made.append(cg)
            except OSError:
                with contextlib.suppress(OSError):
                    cg.rmdir()
        return made

    def _etc(self) -> list[str]:
        args: list[str] = []
        for name in ETC_ALLOW:
            path = Path("/etc") / name
            if path.exists():
                args += ["--ro-bind", str(path), str(path)]
        args += ["--ro-bind", str(self._passwd), "/etc/passwd",
                 "--ro-bind", str(self._passwd.parent / "group"), "/etc/group"]
        return args

    def _binds(self) -> list[str]:
        args: list[str] = []
        for path in self.spec.read_only:
            if path.exists():
                args += ["--ro-bind", str(path.resolve()), str(path)]
        args += ["--bind", str(self.project), str(self.project)]
        return args

    def wrap(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
             interactive: bool = False) -> list[str]:
        if not self._started:  # wrap() may be used before start() (sync callers): set up what it needs
            self._passwd.parent.mkdir(parents=True, exist_ok=True)
            if not self._passwd.exists():
                self._passwd.write_text(f"sandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:/tmp:/bin/sh\n")
                (self._passwd.parent / "group").write_text(f"sandbox:x:{SANDBOX_UID}:\n")
        lim = self.spec.limits
        full = {**BASE_ENV, "HOME": "/tmp", **(env or {})}
        cmd = [self.prlimit, f"--nproc={lim.pids}", f"--nofile={lim.nofile}",
               f"--fsize={lim.file_mb * 1024 * 1024}", f"--cpu={lim.cpu_s}", "--core=0", "--",
               self.bwrap,
               "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
               "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
               *self._etc(),
               "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm",
               *self._binds(),
               "--remount-ro", "/",  # the sandbox's own root (the parents bwrap made for binds) is read-only too
               "--chdir", str(cwd or self.project),
               "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID),
               "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
               "--hostname", "sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--clearenv"]
        for k, v in full.items():
            cmd += ["--setenv", k, v]
        cmd += ["--", *argv]
        if self._cgroups:  # enter the sandbox's cgroups, then become prlimit → bwrap
            procs = " ".join(f"{cg}/cgroup.procs" for cg in self._cgroups)
            cmd = ["/bin/sh", "-c", f'for f in {procs}; do echo $$ > "$f" || exit 125; done; exec "$@"', "sh", *cmd]
        return cmd

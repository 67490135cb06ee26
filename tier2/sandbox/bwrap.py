"""``isolated``: every command in a bubblewrap sandbox.

* the system read-only (``/usr`` and a short list of harmless ``/etc`` entries — never ``/etc/shadow``, never a
  home directory), a private ``/tmp`` and ``/dev/shm``, the project the only writable bind (bubblewrap's binds are
  ``nosuid,nodev``);
* **never root on the host**: started as the unprivileged sandbox uid (`tier2.sandbox.identity`; the user namespace
  maps the sandbox's uid 1000 to it), so nothing it creates is root-owned and no set-id program gains anything; the
  project is handed over to that uid before each command and set-id bits are stripped before and after;
* no network (``--unshare-net``: only a loopback nobody listens on), user/pid/ipc/uts/cgroup namespaces, **all
  capabilities dropped** (``--cap-drop ALL``), no nested user namespace (``--disable-userns``), a seccomp filter
  (`tier2.sandbox.seccomp`: mount, namespaces, ptrace, bpf, keyrings, kernel modules... denied),
  ``--die-with-parent``, ``--new-session``, a cleared environment;
* limits: a pids and a memory cgroup per sandbox (v2 or v1: `tier2.sandbox.cgroups`; refused where none can be made,
  unless the operator accepts prlimit-only limits) and ``prlimit`` (open files, file size, CPU seconds, no core
  dumps; processes only in prlimit-only mode).

The unprivileged uid needs no access to the workspaces root (0700) or to tier2's files: the wrapper's shell, as
root, opens the files bubblewrap reads (``--ro-bind-data``, ``--seccomp``: bubblewrap closes them once read) and
stages every bound directory in a private mount namespace (`BwrapSandbox._stage`).
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import shlex
import shutil
import uuid
from pathlib import Path

from tier2.errors import SetupError
from tier2.sandbox.base import BASE_ENV, Sandbox, SandboxSpec
from tier2.sandbox.cgroups import SandboxCgroups, make_cgroups, remove_cgroups
from tier2.sandbox.seccomp import seccomp_program
from tier2.settings.identity import drop_privileges, sandbox_identity

__all__ = ["BwrapSandbox", "bwrap_available", "ETC_ALLOW", "SANDBOX_UID"]

#: /etc entries visible in the sandbox (read-only): libraries, certificates, fonts — nothing that holds secrets.
ETC_ALLOW = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "ssl", "ca-certificates", "fonts",
             "chromium", "chromium.d", "mime.types", "localtime", "nsswitch.conf", "host.conf", "os-release")
#: the uid (and gid) commands have inside the sandbox (mapped to the unprivileged host uid outside)
SANDBOX_UID = 1000
_FD0 = 10  # the first descriptor the wrapper opens (3 and 4 are Playwright's pipe)
_STAGE = "/mnt"  # where the wrapper's private mount namespace stages the binds (a private tmpfs over it)


def bwrap_available() -> str | None:
    """Why ``isolated`` cannot run here, or None when it can."""
    if shutil.which("bwrap") is None:
        return "bubblewrap is not installed (apt-get install -y bubblewrap)"
    if shutil.which("prlimit") is None:
        return "prlimit (util-linux) is not installed"
    if os.geteuid() == 0 and shutil.which("setpriv") is None:
        return "setpriv (util-linux) is not installed: bubblewrap would run as root"
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return "unshare/mount (util-linux) are not installed"
    if not os.path.isdir(_STAGE):
        return f"{_STAGE} does not exist (the sandbox wrapper stages its binds there, in a private mount namespace)"
    if not os.path.exists("/bin/bash"):
        return "/bin/bash is missing"
    return None


def _public(path: Path) -> bool:
    """True when any user may reach ``path`` (a directory): every ancestor searchable by others, the directory
    readable and searchable by others — the toolchain and pack packages usually; a project never (0700 root)."""
    try:
        if os.stat(path).st_mode & 0o005 != 0o005:
            return False
        return all(os.stat(parent).st_mode & 0o001 for parent in path.parents)
    except OSError:
        return False


class BwrapSandbox(Sandbox):
    kind = "isolated"

    def __init__(self, spec: SandboxSpec) -> None:
        super().__init__(spec)
        why = bwrap_available()
        if why:
            raise SetupError(f"workspace kind 'isolated' is unavailable: {why}")
        self.bwrap = shutil.which("bwrap") or "bwrap"
        self.prlimit = shutil.which("prlimit") or "prlimit"
        self.unshare = shutil.which("unshare") or "unshare"
        self.user = self.ident = sandbox_identity(spec.isolation)
        self._cgroups: SandboxCgroups | None = None
        self._etc_dir = spec.home / "sandbox-etc"

    def _prepare(self) -> None:
        """What every command needs, made once (sync: `wrap` may be called before `start`): the sandbox's
        passwd/group, the seccomp program and the cgroups (or `SetupError` where none can be made)."""
        if self._cgroups is not None:
            return
        self._etc_dir.mkdir(parents=True, exist_ok=True)
        (self._etc_dir / "passwd").write_text(f"sandbox:x:{SANDBOX_UID}:{SANDBOX_UID}:sandbox:/tmp:/bin/sh\n")
        (self._etc_dir / "group").write_text(f"sandbox:x:{SANDBOX_UID}:\n")
        (self._etc_dir / "seccomp.bpf").write_bytes(seccomp_program())
        digest = hashlib.sha256(str(self.project).encode()).hexdigest()[:8]  # one cgroup per sandbox instance:
        name = f"{self.spec.label}-{digest}-{uuid.uuid4().hex[:6]}-{os.getpid()}"  # two on a project never share
        self._cgroups = make_cgroups(self.spec.cgroups, name, self.spec.limits)

    async def start(self) -> None:
        await asyncio.to_thread(self._prepare)

    async def close(self) -> None:
        cgroups, self._cgroups = self._cgroups, None
        if cgroups is not None:  # empty once every process of the sandbox has ended (they die with their parent)
            await asyncio.to_thread(remove_cgroups, cgroups)

    def wrap(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
             interactive: bool = False) -> list[str]:
        self._prepare()
        assert self._cgroups is not None
        data: list[Path] = []  # files bwrap reads from descriptors (_FD0, _FD0+1...): passwd, group, seccomp
        staged: list[Path] = []  # host directories bound into the sandbox, staged at /mnt/<i> (see `_stage`)

        def fd(path: Path) -> str:
            data.append(path)
            return str(_FD0 + len(data) - 1)

        def stage(path: Path) -> str:
            if not self.user.switch or _public(path):  # bwrap (as the sandbox uid) can reach it by path itself
                return str(path)
            staged.append(path)
            return f"{_STAGE}/{len(staged) - 1}"

        lim = self.spec.limits
        full = {**BASE_ENV, "HOME": "/tmp", **(env or {})}
        nproc = [] if self._cgroups.version else [f"--nproc={lim.pids}"]  # the pids cgroup is the process limit
        cmd = [*drop_privileges(self.user),
               self.prlimit, *nproc, f"--nofile={lim.nofile}", f"--fsize={lim.file_mb * 1024 * 1024}",
               f"--cpu={lim.cpu_s}", "--core=0", "--",
               self.bwrap,
               "--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
               "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin"]
        for name in ETC_ALLOW:
            path = Path("/etc") / name
            if path.exists():
                cmd += ["--ro-bind", str(path), str(path)]
        cmd += ["--ro-bind-data", fd(self._etc_dir / "passwd"), "/etc/passwd",
                "--ro-bind-data", fd(self._etc_dir / "group"), "/etc/group",
                "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", "/dev/shm"]
        for path in self.spec.read_only:
            if path.exists():
                cmd += ["--ro-bind", stage(path.resolve()), str(path)]
        cmd += ["--bind", stage(self.project), str(self.project),
                "--remount-ro", "/",  # the sandbox's own root (the parents bwrap made for binds) is read-only too
                "--chdir", str(cwd or self.project),
                "--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--disable-userns",
                "--unshare-net", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
                "--hostname", "sandbox", "--die-with-parent", "--new-session", "--cap-drop", "ALL",
                "--seccomp", fd(self._etc_dir / "seccomp.bpf"), "--clearenv"]
        for k, v in full.items():
            cmd += ["--setenv", k, v]
        cmd += ["--", *argv]
        return self._stage(cmd, data, staged)

    def _stage(self, cmd: list[str], data: list[Path], staged: list[Path]) -> list[str]:
        """The root prologue before ``cmd`` (setpriv → prlimit → bwrap): enter the cgroups, open the files bwrap
        reads from descriptors, and — in a private mount namespace, as bubblewrap resolves a bind's source by
        path and the sandbox uid may not traverse the workspaces root (0700) — bind each staged directory (opened
        first, by descriptor) at ``/mnt/<i>`` on a private tmpfs; the staging descriptors are closed before
        ``exec``: nothing of the host's tree is left open in the sandbox."""
        enter = "".join(f"echo $$ > {shlex.quote(str(p))} || exit 125; " for p in self._cgroups.procs) \
            if self._cgroups else ""
        first = _FD0 + len(data)
        opens = " ".join(f"{_FD0 + i}<{shlex.quote(str(p))}" for i, p in enumerate(data))
        if not staged:
            return ["/bin/bash", "-c", f'{enter}exec "$@" {opens}', "bash", *cmd]
        # opened inside the new mount namespace (a bind's source must be a mount of the caller's namespace)
        sources = " ".join(f"{first + i}<{shlex.quote(str(p))}" for i, p in enumerate(staged))
        dirs = " ".join(f"{_STAGE}/{i}" for i in range(len(staged)))
        binds = f"mkdir {dirs} && " + "".join(f"mount --no-canonicalize --bind /proc/self/fd/{first + i} "
                                              f"{_STAGE}/{i} && " for i in range(len(staged)))
        closes = " ".join(f"{first + i}<&-" for i in range(len(staged)))
        inner = (f"exec {sources} && mount -t tmpfs -o mode=0755,size=64k,nosuid,nodev tier2-stage {_STAGE} && "
                 f'{binds}exec "$@" {closes}')
        return ["/bin/bash", "-c", f'{enter}exec {self.unshare} --mount --propagation private -- /bin/bash -c '
                f'{shlex.quote(inner)} bash "$@" {opens}', "bash", *cmd]

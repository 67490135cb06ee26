"""A pids and a memory cgroup per ``isolated`` sandbox: cgroup v2 (a delegated subtree) or v1, or a clear refusal.

* **v2** (``<mount>/cgroup.controllers`` — pure v2 —, or ``<mount>/unified`` on a hybrid host): the sandboxes'
  parent is ``[sandbox.cgroups] v2_root`` (a subtree delegated to tier2) or ``<v2 mount>/tier2``; tier2 enables
  ``+pids +memory`` in the parent's ``cgroup.subtree_control`` (in the mount's root too for the default parent) and
  makes ``<parent>/<sandbox>`` with ``pids.max``, ``memory.max`` and ``memory.swap.max = 0``;
* **v1**: ``<mount>/pids/tier2/<sandbox>`` (``pids.max``) and ``<mount>/memory/tier2/<sandbox>``
  (``memory.limit_in_bytes``), when both hierarchies are mounted and writable;
* **neither**: `SetupError` naming what is missing, unless the operator set ``accept_rlimit_only = true`` (then the
  limits are prlimit's only: ``RLIMIT_NPROC`` is shared by every sandbox of the uid, and there is no memory limit).

The sandbox's wrapper (running as root, before it drops to the sandbox uid) writes its pid into every
``cgroup.procs`` returned here, so bubblewrap and everything under it are inside.
"""

from __future__ import annotations

import contextlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from tier2.errors import SetupError
from tier2.settings.sandbox import CgroupConfig, SandboxLimits

__all__ = ["SandboxCgroups", "make_cgroups", "remove_cgroups"]

log = logging.getLogger(__name__)
_CONTROLLERS = ("pids", "memory")


@dataclass
class SandboxCgroups:
    version: int  # 1, 2, or 0: none (prlimit-only, accepted by the operator)
    dirs: list[Path] = field(default_factory=list)

    @property
    def procs(self) -> list[Path]:
        return [d / "cgroup.procs" for d in self.dirs]


def _v2_mount(mount: Path) -> Path | None:
    for cand in (mount, mount / "unified"):
        if (cand / "cgroup.controllers").is_file() and (cand / "cgroup.procs").exists():
            return cand
    return None


def _controllers(path: Path) -> set[str]:
    try:
        return set((path / "cgroup.controllers").read_text().split())
    except OSError:
        return set()


def _enable(parent: Path) -> None:
    """Make sure ``parent``'s children get the pids and memory controllers."""
    have = set((parent / "cgroup.subtree_control").read_text().split())
    missing = [c for c in _CONTROLLERS if c not in have]
    if missing:
        (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in missing))


def _sweep(base: Path) -> None:
    """Remove empty sandbox cgroups left by processes that died without closing their sandbox."""
    if not base.is_dir():
        return
    for cg in base.iterdir():
        pid = cg.name.rsplit("-", 1)[-1]
        if cg.is_dir() and pid.isdigit() and not Path(f"/proc/{pid}").exists():
            with contextlib.suppress(OSError):
                cg.rmdir()


def _make_v2(cfg: CgroupConfig, name: str, limits: SandboxLimits) -> Path:
    mount = _v2_mount(Path(cfg.mount))
    if cfg.v2_root:
        base = Path(cfg.v2_root)
        if not base.is_dir():
            raise OSError(f"the configured v2_root {base} is not a directory")
    else:
        if mount is None:
            raise OSError(f"no cgroup v2 file system at {cfg.mount} or {cfg.mount}/unified")
        if not {"pids", "memory"} <= _controllers(mount):
            raise OSError(f"the cgroup v2 hierarchy at {mount} has no pids/memory controllers (they are "
                          f"bound to v1 here: {' '.join(sorted(_controllers(mount))) or 'none'} available)")
        _enable(mount)
        base = mount / "tier2"
        base.mkdir(exist_ok=True)
    if not {"pids", "memory"} <= _controllers(base):
        raise OSError(f"{base}/cgroup.controllers lacks pids or memory (delegate them to tier2's subtree)")
    _enable(base)
    _sweep(base)
    cg = base / name
    cg.mkdir(exist_ok=True)
    try:
        (cg / "pids.max").write_text(str(limits.pids))
        (cg / "memory.max").write_text(str(limits.memory_mb * 1024 * 1024))
        if (cg / "memory.swap.max").exists():
            (cg / "memory.swap.max").write_text("0")
    except OSError:
        with contextlib.suppress(OSError):
            cg.rmdir()
        raise
    return cg


def _make_v1(cfg: CgroupConfig, name: str, limits: SandboxLimits) -> list[Path]:
    made: list[Path] = []
    try:
        for ctrl, knob, value in (("pids", "pids.max", str(limits.pids)),
                                  ("memory", "memory.limit_in_bytes", str(limits.memory_mb * 1024 * 1024))):
            root = Path(cfg.mount) / ctrl
            if not (root / "cgroup.procs").exists():
                raise OSError(f"no cgroup v1 {ctrl} hierarchy at {root}")
            _sweep(root / "tier2")
            cg = root / "tier2" / name
            cg.mkdir(parents=True, exist_ok=True)
            made.append(cg)
            (cg / knob).write_text(value)
    except OSError:
        remove_cgroups(SandboxCgroups(1, made), wait_s=0)
        raise
    return made


def make_cgroups(cfg: CgroupConfig, name: str, limits: SandboxLimits) -> SandboxCgroups:
    """The sandbox's cgroups (v2 preferred), or `SetupError` — or none when the operator accepts prlimit only.
    ``name`` ends with ``-<pid>`` of this process (a later process's sweep removes the cgroups of a dead one)."""
    try:
        return SandboxCgroups(2, [_make_v2(cfg, name, limits)])
    except OSError as exc:
        why_v2 = str(exc)
    try:
        return SandboxCgroups(1, _make_v1(cfg, name, limits))
    except OSError as exc:
        why_v1 = str(exc)
    if cfg.accept_rlimit_only:
        log.warning("isolated: no cgroup for %s (v2: %s; v1: %s): prlimit-only limits, as configured "
                    "([sandbox.cgroups] accept_rlimit_only)", name, why_v2, why_v1)
        return SandboxCgroups(0)
    raise SetupError(
        "workspace kind 'isolated' is unavailable: it needs a pids and a memory cgroup per sandbox and none could "
        f"be made (cgroup v2: {why_v2}; cgroup v1: {why_v1}). Delegate a cgroup v2 subtree to tier2 "
        "([sandbox.cgroups] v2_root), or set [sandbox.cgroups] accept_rlimit_only = true to run with prlimit-only "
        "limits (docs/operations.md)")


def remove_cgroups(cgroups: SandboxCgroups, wait_s: float = 1.0) -> None:
    """Remove the sandbox's cgroups (busy until its last process has gone: retried for ``wait_s``)."""
    for cg in reversed(cgroups.dirs):
        deadline = time.monotonic() + wait_s
        while True:
            try:
                cg.rmdir()
                break
            except FileNotFoundError:
                break
            except OSError as exc:
                if exc.errno != 16 or time.monotonic() >= deadline:  # EBUSY: processes still inside
                    break
                time.sleep(0.05)
    cgroups.dirs = []

"""``isolated``'s limits hold on every host (issue #21 H5): a pids and a memory cgroup per sandbox — the host's real
hierarchy (v1 on this machine: its v2 ``unified`` mount has no controllers), the cgroup v2 code path on a
configurable cgroup root standing in for a v2 host, a delegated v2 subtree — and a clear refusal where no cgroup can
be made, unless the operator accepts prlimit-only limits (then RLIMIT_NPROC still stops a fork bomb)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sandbox.conftest import skip_unless_kind
from tier2.errors import SetupError
from tier2.packs import Pack
from tier2.sandbox import make_sandbox
from tier2.sandbox.bwrap import BwrapSandbox
from tier2.settings.sandbox import CgroupConfig, SandboxLimits

pytestmark = [pytest.mark.slow]

# the bomb's own shell waits with builtins only (it may not get a process any more)
BOMB = "bomb() { bomb | bomb & }; bomb; SECONDS=0; while [ $SECONDS -lt 3 ]; do :; done; echo host-still-fine"


def _box(project: Path, pack: Pack, tmp_path: Path, cgroups: CgroupConfig | None = None, **limits: int) -> BwrapSandbox:
    box = make_sandbox("isolated", project, tmp_path / "home", read_only=[pack.node_modules],
                       limits=SandboxLimits(**{"pids": 96, "memory_mb": 256, **limits}), cgroups=cgroups)
    assert isinstance(box, BwrapSandbox)
    return box


def _fake_v2(root: Path, controllers: str = "cpuset cpu io memory pids") -> Path:
    """A directory laid out like a cgroup v2 mount (cgroupfs fills a new cgroup's interface files itself; this one
    cannot, so tier2's parent cgroup is pre-made with what the kernel would show there)."""
    root.mkdir(parents=True)
    (root / "cgroup.controllers").write_text(controllers + "\n")
    (root / "cgroup.procs").write_text("")
    (root / "cgroup.subtree_control").write_text("")
    (root / "tier2").mkdir()
    (root / "tier2" / "cgroup.controllers").write_text("memory pids\n")
    (root / "tier2" / "cgroup.subtree_control").write_text("")
    return root


async def test_the_hosts_cgroups_stop_a_fork_bomb_and_an_oom(project: Path, pack: Pack, tmp_path: Path) -> None:
    skip_unless_kind("isolated", None)
    box = _box(project, pack, tmp_path)
    try:
        await box.start()
    except SetupError as exc:
        pytest.skip(f"this host gives tier2 no cgroup: {exc}")
    try:
        assert box._cgroups is not None and box._cgroups.version in (1, 2)
        assert not any(a.startswith("--nproc") for a in box.wrap(["true"]))  # the cgroup is the process limit
        bomb = await box.exec(["/bin/bash", "-c", BOMB], timeout_s=60)
        assert not bomb.timed_out  # (the bomb's shell itself may die of a refused fork: bash gives up after retries)
        assert "fork" in bomb.output.lower() or "resource temporarily unavailable" in bomb.output.lower()
        oom = await box.exec(["python3", "-c", "a = bytearray(600 * 1024 * 1024); a[::4096] = b'x' * len(a[::4096])"
                              "; print('allocated')"], timeout_s=60)
        assert oom.code != 0 and "allocated" not in oom.output, oom
        after = await box.exec(["/bin/sh", "-c", "echo alive"])
        assert after.code == 0 and "alive" in after.output
    finally:
        await box.close()


@pytest.mark.parametrize("layout", ["mount", "delegated"])
async def test_the_cgroup_v2_path_makes_a_limited_cgroup_per_sandbox(layout: str, project: Path, pack: Pack,
                                                                    tmp_path: Path) -> None:
    skip_unless_kind("isolated", None)
    if layout == "mount":
        root = _fake_v2(tmp_path / "cg")
        cfg, parent = CgroupConfig(mount=str(root)), root / "tier2"
    else:  # an operator-delegated subtree; the mount itself is not ours
        parent = _fake_v2(tmp_path / "deleg") / "tier2"
        cfg = CgroupConfig(mount=str(tmp_path / "no-mount-here"), v2_root=str(parent))
    box = _box(project, pack, tmp_path, cfg, pids=80, memory_mb=300)
    await box.start()
    try:
        assert box._cgroups is not None and box._cgroups.version == 2
        [cg] = box._cgroups.dirs
        assert cg.parent == parent
        assert (cg / "pids.max").read_text() == "80"
        assert (cg / "memory.max").read_text() == str(300 * 1024 * 1024)
        assert (parent / "cgroup.subtree_control").read_text().split() == ["+pids", "+memory"]
        if layout == "mount":
            assert (tmp_path / "cg" / "cgroup.subtree_control").read_text().split() == ["+pids", "+memory"]
        argv = box.wrap(["true"])
        assert not any(a.startswith("--nproc") for a in argv)
        done = await box.exec(["/bin/sh", "-c", "echo inside"])
        assert done.code == 0 and "inside" in done.output, done.output
        entered = (cg / "cgroup.procs").read_text().split()
        assert len(entered) == 1 and entered[0].isdigit()  # the wrapper put itself (then bwrap) into the cgroup
    finally:
        await box.close()


async def test_a_cgroup_the_wrapper_cannot_enter_stops_the_command(project: Path, pack: Pack,
                                                                   tmp_path: Path) -> None:
    skip_unless_kind("isolated", None)
    root = _fake_v2(tmp_path / "cg")
    box = _box(project, pack, tmp_path, CgroupConfig(mount=str(root)))
    await box.start()
    try:
        [cg] = box._cgroups.dirs if box._cgroups else []
        (cg / "cgroup.procs").mkdir()  # writing the pid now fails: the command must not run unlimited
        done = await box.exec(["/bin/sh", "-c", "echo ran-anyway"])
        assert done.code == 125 and "ran-anyway" not in done.output
    finally:
        await box.close()


@pytest.mark.parametrize("controllers", ["", "cpu io"])
async def test_isolated_is_refused_where_no_cgroup_can_be_made(controllers: str, project: Path, pack: Pack,
                                                               tmp_path: Path) -> None:
    skip_unless_kind("isolated", None)
    mount = tmp_path / "cg"
    if controllers:
        _fake_v2(mount, controllers)  # a v2 mount whose pids/memory controllers are not available
    box = _box(project, pack, tmp_path, CgroupConfig(mount=str(mount)))
    with pytest.raises(SetupError) as refused:
        await box.start()
    text = str(refused.value)
    assert "pids and a memory cgroup" in text and "cgroup v2:" in text and "cgroup v1:" in text
    assert "accept_rlimit_only" in text
    if controllers:
        assert "no pids/memory controllers" in text
    with pytest.raises(SetupError):  # nor does any command run without its limits
        box.wrap(["true"])


async def test_prlimit_only_limits_when_the_operator_accepts_them(project: Path, pack: Pack, tmp_path: Path) -> None:
    skip_unless_kind("isolated", None)
    box = _box(project, pack, tmp_path, CgroupConfig(mount=str(tmp_path / "none"), accept_rlimit_only=True), pids=64)
    await box.start()
    try:
        assert box._cgroups is not None and box._cgroups.version == 0
        assert "--nproc=64" in box.wrap(["true"])
        bomb = await box.exec(["/bin/bash", "-c", BOMB], timeout_s=60)
        assert not bomb.timed_out  # (the bomb's shell itself may die of a refused fork: bash gives up after retries)
        assert "fork" in bomb.output.lower() or "resource temporarily unavailable" in bomb.output.lower()
        after = await box.exec(["/bin/sh", "-c", "echo alive"])
        assert after.code == 0 and "alive" in after.output
    finally:
        await box.close()

"""Privilege separation, hostile (issue #21 H4, low "no seccomp / nested user namespaces"): nothing a sandboxed
command does leaves a set-id or root-owned file on the host, a set-id program gains nothing inside, nested user
namespaces and kernel-facing syscalls are refused — real bubblewrap, a real private dockerd, the real command-session
layer."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from tests.sandbox.conftest import SANDBOXED, skip_unless_kind
from tier2.packs import Pack
from tier2.sandbox import CommandSessions, Sandbox, make_sandbox
from tier2.settings.sandbox import CommandConfig, IsolationConfig, SandboxLimits

pytestmark = [pytest.mark.slow]

ISO = IsolationConfig()


def _host_uid() -> int:
    return ISO.uid if os.geteuid() == 0 else os.geteuid()


def _entries(root: Path) -> list[tuple[Path, os.stat_result]]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in (*dirnames, *filenames):
            path = Path(dirpath) / name
            out.append((path, os.lstat(path)))
    return out


async def _open(kind: str, project: Path, pack: Pack, tmp_path: Path, **limits: int) -> Sandbox:
    box = make_sandbox(kind, project, tmp_path / "home", read_only=[pack.node_modules],
                       limits=SandboxLimits(**{"pids": 256, "memory_mb": 2048, **limits}), workspaces=tmp_path / "ws")
    await box.start()
    return box


@pytest.mark.parametrize("kind", SANDBOXED)
async def test_a_setuid_copy_leaves_no_set_id_and_no_root_file_on_the_host(
        kind: str, project: Path, pack: Pack, tmp_path: Path, docker_host: str | None) -> None:
    """H4: ``cp /usr/bin/bash ./s && chmod 4755 ./s`` through the writer's command sessions."""
    skip_unless_kind(kind, docker_host)
    box = await _open(kind, project, pack, tmp_path)
    sessions = CommandSessions(box, tmp_path / "logs", CommandConfig(slice_s=20))
    try:
        report = await sessions.start("cp /usr/bin/bash ./s && chmod 4755 ./s && cp /usr/bin/id ./g && "
                                      "chmod 2755 ./g && mkdir -p d && chmod 6777 d && cp ./s d/deep && "
                                      "chmod u+s,g+s d/deep && ls -ln s g d/deep", wait_s=20)
        assert report.exit_code == 0, report.output
        assert "rws" in report.output  # the bits were set inside...
    finally:
        await sessions.close()
        await box.close()
    # ...and none is left on the host, and nothing the sandbox made is root's
    for path in (project / "s", project / "g", project / "d" / "deep"):
        st = os.lstat(path)
        assert not st.st_mode & (stat.S_ISUID | stat.S_ISGID), (path, oct(st.st_mode))
        assert st.st_uid == _host_uid() and st.st_uid != 0, (path, st.st_uid)
    for path, st in _entries(project):
        assert not st.st_mode & (stat.S_ISUID | stat.S_ISGID), (path, oct(st.st_mode))
        assert not (st.st_uid == 0 and st.st_mode & stat.S_ISUID), path


@pytest.mark.parametrize("kind", SANDBOXED)
async def test_tier2s_own_root_writes_stay_editable_by_the_sandbox(
        kind: str, project: Path, pack: Pack, tmp_path: Path, docker_host: str | None) -> None:
    """tier2's host-side writes run as root; the next command can still edit (and replace) what they wrote."""
    skip_unless_kind(kind, docker_host)
    box = await _open(kind, project, pack, tmp_path)
    try:
        (project / "src" / "host-written").mkdir(parents=True)
        (project / "src" / "host-written" / "a.js").write_text("// by the host\n")
        done = await box.exec(["/bin/sh", "-c", "echo '// edited' >> src/host-written/a.js && "
                               "touch src/host-written/b.js && cat src/host-written/a.js"])
        assert done.code == 0, done.output
        assert (project / "src" / "host-written" / "a.js").read_text() == "// by the host\n// edited\n"
    finally:
        await box.close()


@pytest.mark.parametrize("kind", SANDBOXED)
async def test_a_set_id_binary_gains_nothing_inside(kind: str, project: Path, pack: Pack, tmp_path: Path,
                                                    docker_host: str | None) -> None:
    """A root-owned set-uid copy of ``id`` in the project (planted on the host, run without the hand-over that
    would strip it): the sandbox's effective uid stays its own — the bind is nosuid (bubblewrap), no_new_privs
    holds (both), and root is not even mapped."""
    skip_unless_kind(kind, docker_host)
    box = await _open(kind, project, pack, tmp_path)
    try:
        planted = project / "suid-id"
        planted.write_bytes(Path("/usr/bin/id").read_bytes())
        os.chown(planted, 0, 0)
        planted.chmod(0o4755)
        script = f"{planted} -u; grep NoNewPrivs /proc/self/status; grep ' {project} ' /proc/self/mountinfo"
        done = subprocess.run(box.wrap(["/bin/sh", "-c", script]), cwd=project, env=box.host_env(),
                              capture_output=True, text=True, timeout=60, check=False)
        lines = done.stdout.splitlines()
        assert done.returncode in (0, 1), done.stderr  # grep of mountinfo finds nothing in docker's format
        assert lines[0] == ("1000" if kind == "isolated" else str(_host_uid())), done.stdout
        assert lines[0] != "0"
        assert lines[1].split() == ["NoNewPrivs:", "1"]
        if kind == "isolated":
            options = lines[2].split()[5].split(",")
            assert "nosuid" in options and "nodev" in options, lines[2]
        await box.reclaim()
        assert not os.lstat(planted).st_mode & stat.S_ISUID  # and the next walk strips it on the host
    finally:
        await box.close()


@pytest.mark.parametrize("kind", SANDBOXED)
async def test_nested_user_namespaces_are_refused(kind: str, project: Path, pack: Pack, tmp_path: Path,
                                                  docker_host: str | None) -> None:
    skip_unless_kind(kind, docker_host)
    box = await _open(kind, project, pack, tmp_path)
    try:
        for cmd in ("unshare -U true", "unshare -Ur id -u", "unshare -Urm true"):
            done = await box.exec(["/bin/sh", "-c", cmd])
            assert done.code != 0, (cmd, done.output)
            assert "unshare failed" in done.output, done.output
    finally:
        await box.close()


_SYSCALLS = r"""
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def call(nr, *args):
    r = libc.syscall(nr, *[ctypes.c_long(a) for a in args])
    return "ok" if r >= 0 else errno.errorcode[ctypes.get_errno()]
print("getpid", call(39))
print("keyctl", call(250, 0, -3, 0))           # KEYCTL_GET_KEYRING_ID of the session keyring
print("ptrace", call(101, 0, 0, 0, 0))          # PTRACE_TRACEME
print("bpf", call(321, 0, 0, 0))
print("perf_event_open", call(298, 0, 0, -1, -1, 0))
print("userfaultfd", call(323, 0))
print("add_key", call(248, 0, 0, 0, 0, 0))
print("unshare", call(272, 0x10000000))
print("setns", call(308, 0, 0))
print("mount", call(165, 0, 0, 0, 0, 0))
print("clone_newuser", call(56, 0x10000000 | 17, 0, 0, 0, 0))   # CLONE_NEWUSER | SIGCHLD
print("clone_newnet", call(56, 0x40000000 | 17, 0, 0, 0, 0))
print("clone3", call(435, 0, 0))
pid = os.fork()                                   # plain clone (threads and processes) still works
if pid == 0:
    os._exit(7)
print("fork", "ok" if os.waitpid(pid, 0)[1] >> 8 == 7 else "broken")
"""


async def test_the_seccomp_filter_denies_kernel_facing_syscalls(project: Path, pack: Pack, tmp_path: Path) -> None:
    skip_unless_kind("isolated", None)
    if os.uname().machine != "x86_64":
        pytest.skip("the probe uses x86_64 syscall numbers")
    box = await _open("isolated", project, pack, tmp_path)
    try:
        done = await box.exec(["python3", "-c", _SYSCALLS])
    finally:
        await box.close()
    assert done.code == 0, done.output
    got = dict(line.split() for line in done.output.splitlines() if len(line.split()) == 2)
    assert got["getpid"] == "ok" and got["fork"] == "ok", got
    for name in ("keyctl", "ptrace", "bpf", "perf_event_open", "userfaultfd", "add_key", "unshare", "setns", "mount",
                 "clone_newuser", "clone_newnet"):
        assert got[name] == "EPERM", (name, got)
    assert got["clone3"] == "ENOSYS"  # libc falls back to clone, whose flags the filter reads


async def test_node_esbuild_and_bash_still_work_under_the_filter(project: Path, pack: Pack, tmp_path: Path) -> None:
    skip_unless_kind("isolated", None)
    from tier2.toolchain import run_build

    box = await _open("isolated", project, pack, tmp_path)
    try:
        node = await box.exec(["node", "-e", "require('worker_threads'); console.log('node-ok')"])
        assert node.code == 0 and "node-ok" in node.output, node.output
        built = await run_build(pack, project, launcher=box.launcher)
        assert built.ok, built.errors
        shell = await box.exec(["/bin/bash", "-c", "for i in 1 2 3; do (echo sub$i) & done; wait"])
        assert shell.code == 0 and shell.output.count("sub") == 3
    finally:
        await box.close()


async def test_no_host_directory_stays_open_inside(project: Path, pack: Pack, tmp_path: Path) -> None:
    """The wrapper opens what it binds as root: none of those descriptors reaches the sandbox (a directory fd of
    the host tree would let ``openat(fd, "..")`` walk out of the mount namespace)."""
    skip_unless_kind("isolated", None)
    box = await _open("isolated", project, pack, tmp_path)
    try:
        done = await box.exec(["/bin/sh", "-c", "ls -l /proc/self/fd/ | tail -n +2"])
    finally:
        await box.close()
    assert done.code == 0
    fds = {line.split()[-3]: line.split()[-1] for line in done.output.splitlines() if "->" in line}
    assert set(fds) <= {"0", "1", "2", "3"}, fds  # stdin/stdout/stderr and ls's own /proc/self/fd


def test_workspaces_root_is_private(tmp_path: Path) -> None:
    from tier2.workspace import secure_workspaces_root

    loose = tmp_path / "ws"
    loose.mkdir(mode=0o755)
    assert stat.S_IMODE(secure_workspaces_root(loose).stat().st_mode) == 0o700
    fresh = secure_workspaces_root(tmp_path / "new" / "ws")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o700


async def test_a_background_setuid_in_a_container_is_stripped_when_it_settles(
        project: Path, pack: Pack, tmp_path: Path, docker_host: str | None) -> None:
    """docker: a command's background process outlives it (until `settle`) and sets the bit after the command's
    own strip ran; settling (before any host-side tool) strips it again."""
    import asyncio

    skip_unless_kind("docker", docker_host)
    box = await _open("docker", project, pack, tmp_path)
    sessions = CommandSessions(box, tmp_path / "logs", CommandConfig(slice_s=10))
    late = project / "late"
    try:
        report = await sessions.start("(while [ ! -e go ]; do sleep 0.1; done; cp /usr/bin/id late; "
                                      "chmod 4755 late) >/dev/null 2>&1 & echo started", wait_s=10)
        assert report.exit_code == 0 and "started" in report.output
        (project / "go").write_text("")  # the command has ended (and been stripped); now the background acts
        for _ in range(200):
            if late.exists() and os.lstat(late).st_mode & stat.S_ISUID:
                break
            await asyncio.sleep(0.1)
        assert os.lstat(late).st_mode & stat.S_ISUID  # the attack happened on the host...
        await sessions.stop_all()  # what runs before every host-side tool
        assert not os.lstat(late).st_mode & stat.S_ISUID  # ...and is undone
        assert os.lstat(late).st_uid == _host_uid() != 0
    finally:
        await sessions.close()
        await box.close()


@pytest.mark.parametrize("kind", SANDBOXED)
async def test_the_strip_and_hand_over_never_follow_a_planted_link(
        kind: str, project: Path, pack: Pack, tmp_path: Path, docker_host: str | None) -> None:
    """Links planted in the project to a host set-uid file and to a host directory: the walk before and after the
    command changes the links themselves, never their targets (no chown, no chmod outside the project)."""
    skip_unless_kind(kind, docker_host)
    outside = tmp_path / "host-side"
    outside.mkdir()
    target = outside / "suid-tool"
    target.write_bytes(b"#!/bin/sh\n")
    target.chmod(0o4755)
    (outside / "inner").write_text("x")
    box = await _open(kind, project, pack, tmp_path)
    try:
        (project / "to-file").symlink_to(target)
        (project / "to-dir").symlink_to(outside)
        done = await box.exec(["/bin/sh", "-c", f"ln -s {target} made-inside; ln -s {outside} dir-inside; echo ok"])
        assert done.code == 0 and "ok" in done.output, done.output
    finally:
        await box.close()
    for path in (target, outside, outside / "inner"):
        st = os.lstat(path)
        assert st.st_uid == 0 or os.geteuid() != 0, (path, st.st_uid)  # never given to the sandbox uid
    assert stat.S_IMODE(os.lstat(target).st_mode) == 0o4755  # never stripped through the link
    assert os.lstat(project / "to-file").st_uid == _host_uid()  # the link itself was handed over

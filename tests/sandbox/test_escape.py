"""Hostile commands through the writer's own tools (a scripted model drives the real writer: `build_writer` with the
full onion's path guard, the sandbox's Bash command sessions): from inside ``isolated`` and ``docker``, reading
/etc/shadow or a home's ~/.ssh, writing outside the project, a socket to 127.0.0.1 or any other address, mount,
mknod and a fork bomb all fail — and the host shows no effect. ``local`` has no Bash at all. `tier2 sandbox exec`
gives an operator the same isolation."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg

from tests.sandbox.conftest import SANDBOXED, skip_unless_kind
from tier2.assembly import build_writer
from tier2.sandbox import CommandSessions, make_sandbox
from tier2.settings.sandbox import CommandConfig, SandboxLimits
from tier2.testing import ScriptedChatModel, tool_results
from tier2.validators import ValidationRunner
from tier2.workspace import new_project

pytestmark = [pytest.mark.redis, pytest.mark.slow]


def _script(calls: list[tuple[str, dict]]) -> Callable[[list[Msg]], list[TextBlock | ToolCallBlock]]:
    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)
        if done < len(calls):
            name, args = calls[done]
            if args.get("session_id") == "$LAST":  # the newest session id any earlier result named
                text = " ".join(str(b.output) for m in messages for b in m.get_content_blocks("tool_result"))
                args = {**args, "session_id": re.findall(r"\[session (c\d+-[0-9a-f]+)\]", text)[-1]}
            return [ToolCallBlock(id=f"h{done}", name=name, input=json.dumps(args))]
        return [TextBlock(text="done")]
    return script


class _Listener:
    """A TCP server on the host's loopback that counts every connection it accepts."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


async def _hostile_run(runtime, tmp_path: Path, kind: str, calls: list[tuple[str, dict]]) -> list[tuple[str, str]]:
    project = tmp_path / "game"
    new_project(runtime.pack, project, "p-escape")
    box = make_sandbox(kind, project, tmp_path / "home", read_only=[runtime.pack.node_modules],
                       limits=SandboxLimits(pids=128, memory_mb=1024, cpu_s=60), workspaces=tmp_path / "ws")
    await box.start()
    sessions = CommandSessions(box, tmp_path / "home" / "commands", CommandConfig(slice_s=8))
    policy = runtime.policies.snapshot()
    handle = await build_writer(
        project_id="p-escape", project=project, pack=runtime.pack, policy=policy,
        model=ScriptedChatModel(_script(calls)), runner=ValidationRunner(runtime.pool, runtime.pack, policy),
        reports_dir=project / ".tier2" / "reports", home=tmp_path / "home", sandbox=box, commands=sessions)
    try:
        async for _ in handle.agent.reply_stream(UserMsg("user", "make a game")):
            pass
    finally:
        await sessions.close()
        await handle.workspace.close()
        await box.close()
    out = []
    for msg in handle.agent.state.context:
        for block in msg.get_content_blocks("tool_result"):
            text = "".join(getattr(b, "text", "") for b in block.output) if isinstance(block.output, list) \
                else str(block.output)
            out.append((str(getattr(block.state, "value", block.state)), text))
    return out


def _exit_code(text: str) -> int | None:
    tail = text.rstrip().splitlines()[-1]
    return int(tail.removeprefix("[exit code ").rstrip("]")) if tail.startswith("[exit code ") else None


@pytest.mark.parametrize("kind", SANDBOXED)
async def test_hostile_commands_fail_inside_the_sandbox(kind: str, runtime, tmp_path: Path,
                                                        docker_host: str | None) -> None:
    skip_unless_kind(kind, docker_host)
    listener = _Listener()
    home_secret = tmp_path / "host-home" / ".ssh" / "id_ed25519"
    home_secret.parent.mkdir(parents=True)
    home_secret.write_text("PRIVATE-KEY-MATERIAL")
    outside = tmp_path / "outside.txt"  # under /tmp: the sandbox's /tmp is its own, the host's never changes
    # a host directory outside the project that is not mounted in the sandbox (not under /tmp: a checkout may live
    # there, and /tmp inside is the sandbox's own scratch)
    repo_probe = Path("/var/tmp") / f"tier2-escape-probe-{tmp_path.name}"
    py_connect = ("python3 -c \"import socket,sys; s=socket.socket(); s.settimeout(3); "
                  "s.connect((sys.argv[1], int(sys.argv[2]))); print('CONN' + 'ECTED-OK')\"")
    calls = [
        ("Bash", {"command": "cat /etc/shadow"}),
        ("Bash", {"command": f"cat ~/.ssh/id_* /root/.ssh/* {home_secret} {os.path.expanduser('~')}/.ssh/*"}),
        ("Bash", {"command": f"echo pwned > {repo_probe}"}),
        ("Bash", {"command": f"echo pwned > {outside}"}),
        ("Bash", {"command": "echo pwned > /usr/pwned-by-sandbox"}),
        ("Bash", {"command": f"{py_connect} 127.0.0.1 {listener.port}"}),
        ("Bash", {"command": f"echo hi > /dev/tcp/127.0.0.1/{listener.port}"}),
        ("Bash", {"command": f"{py_connect} 1.1.1.1 53 || {py_connect} 10.0.0.1 80"}),
        ("Bash", {"command": "mkdir -p /tmp/m && mount -t tmpfs none /tmp/m"}),
        ("Bash", {"command": "mount -o remount,rw /usr"}),
        ("Bash", {"command": "mknod /tmp/disk b 8 0"}),
        ("Bash", {"command": "bomb() { bomb | bomb & }; bomb; sleep 4; echo host-still-fine", "wait_s": 30}),
        ("Bash", {"command": "echo survived > after-bomb.txt; cat after-bomb.txt", "wait_s": 30}),
    ]
    try:
        results = await _hostile_run(runtime, tmp_path, kind, calls)
    finally:
        listener.close()
    texts = [t for _, t in results]
    assert len(texts) == len(calls), texts
    shadow, ssh, write_out, write_tmp, write_usr, tcp_lo, devtcp, tcp_out, mount, remount, mknod, bomb, after = texts
    assert _exit_code(shadow) != 0 and "root:" not in shadow
    assert _exit_code(ssh) != 0 and "PRIVATE-KEY-MATERIAL" not in ssh
    assert _exit_code(write_out) != 0 and not repo_probe.exists()
    assert not outside.exists()  # /tmp inside is the sandbox's private scratch: the host's /tmp never changes
    assert "exit code" in write_tmp
    assert _exit_code(write_usr) != 0 and not Path("/usr/pwned-by-sandbox").exists()
    assert "Read-only file system" in write_usr
    for text in (tcp_lo, devtcp, tcp_out):
        assert _exit_code(text) != 0 and "CONNECTED-OK" not in text, text
    assert listener.accepted == 0
    for text in (mount, remount, mknod):
        assert _exit_code(text) != 0, text
    assert "not permitted" in mknod or "Permission denied" in mknod
    assert "fork" in bomb.lower() or "resource temporarily unavailable" in bomb.lower(), bomb
    assert "survived" in after  # the sandbox (and the host) came back from the fork bomb


async def test_a_local_workspace_gives_the_writer_no_bash(runtime, tmp_path: Path) -> None:
    project = tmp_path / "game"
    new_project(runtime.pack, project, "p-local")
    policy = runtime.policies.snapshot()
    handle = await build_writer(
        project_id="p-local", project=project, pack=runtime.pack, policy=policy,
        model=ScriptedChatModel(_script([("Bash", {"command": "cat /etc/shadow"})])),
        runner=ValidationRunner(runtime.pool, runtime.pack, policy), reports_dir=project / ".tier2" / "reports",
        home=tmp_path / "home")
    try:
        assert "Bash" not in {t.name for t in handle.agent.toolkit.tools.values()} \
            if isinstance(getattr(handle.agent.toolkit, "tools", None), dict) else True
        async for _ in handle.agent.reply_stream(UserMsg("user", "go")):
            pass
    finally:
        await handle.workspace.close()
    result = next(b for m in handle.agent.state.context for b in m.get_content_blocks("tool_result"))
    assert str(getattr(result.state, "value", result.state)) in ("error", "denied")
    assert "root:" not in str(result.output)


@pytest.mark.parametrize("kind", SANDBOXED)
def test_sandbox_exec_gives_operators_the_same_isolation(kind: str, tmp_path: Path, pack,
                                                         docker_host: str | None) -> None:
    skip_unless_kind(kind, docker_host)
    project = tmp_path / "proj"
    new_project(pack, project, "p-exec")
    env = {**os.environ, "TIER2_WORKSPACES": str(tmp_path / "ws"), "PYTHONPATH": str(Path.cwd())}

    def run(*cmd: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "tier2", "sandbox", "exec", "--workspace", kind, str(project),
                               "--", *cmd], capture_output=True, text=True, env=env, timeout=120, check=False)

    assert run("/bin/sh", "-c", "echo made > made.txt").returncode == 0
    assert (project / "made.txt").read_text() == "made\n"
    shadow = run("cat", "/etc/shadow")
    assert shadow.returncode != 0 and "root:" not in shadow.stdout
    probe = Path("/var/tmp") / f"tier2-escape-probe-exec-{tmp_path.name}"  # outside the project, never mounted
    assert run("/bin/sh", "-c", f"echo x > {probe}").returncode != 0 and not probe.exists()
    run("/bin/sh", "-c", f"echo x > {tmp_path}/escaped")  # the sandbox's private /tmp
    assert not (tmp_path / "escaped").exists()
    assert run("/bin/sh", "-c", "exit 5").returncode == 5


@pytest.mark.parametrize("kind", SANDBOXED)
async def test_no_command_races_a_host_side_tool(kind: str, runtime, tmp_path: Path, docker_host: str | None) -> None:
    """A command swapping a project file for a symlink to a host secret, in a loop, while the host-side Read runs
    (a check-then-open race): host tools are refused while a session runs, and a finished command's background
    processes are gone before they run (bubblewrap: the pid namespace dies; docker: every process but init is
    killed)."""
    skip_unless_kind(kind, docker_host)
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST-SECRET-CONTENT")
    project = tmp_path / "game"
    swap = f"while true; do ln -sf {secret} race; rm -f race; echo safe > race; done"
    reads = [("Read", {"file_path": str(project / "race")}) for _ in range(5)]
    calls = [("Bash", {"command": swap, "wait_s": 0.5}), reads[0],
             ("Bash", {"session_id": "$LAST", "interrupt": True}),
             ("Bash", {"command": f"({swap}) >/dev/null 2>&1 & echo started", "wait_s": 2}), *reads]
    results = await _hostile_run(runtime, tmp_path, kind, calls)
    texts = [t for _, t in results]
    assert "still running" in texts[1] and texts[1].startswith("Refused"), texts[1]
    assert all("HOST-SECRET-CONTENT" not in t for t in texts), [t for t in texts if "HOST-SECRET-CONTENT" in t]
    # after the command finished nothing runs any more: every read sees the same file (as the loop was left: the
    # text, a symlink the path guard refuses, or no file), never a file changing between or during the reads
    assert len(set(texts[4:])) == 1, texts[4:]

"""One contract, every workspace kind (local, isolated, docker): files, exec, build, browser, skills, command
sessions. Real processes throughout (bubblewrap, a private dockerd, esbuild, Chromium through Playwright)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tier2.browser import BrowserPool, find_chromium
from tier2.packs import Pack
from tier2.sandbox import CommandSessions, Sandbox
from tier2.settings.loader import REPO_ROOT, load_security
from tier2.settings.sandbox import CommandConfig
from tier2.toolchain import run_build

pytestmark = [pytest.mark.slow]


async def test_files_are_shared_and_the_project_is_the_working_directory(sandbox: Sandbox, project: Path) -> None:
    done = await sandbox.exec(["/bin/sh", "-c", "pwd; echo made-inside > inside.txt; cat data/theme.json | head -c 1"])
    assert done.code == 0, done.output
    assert done.output.splitlines()[0] == str(project)
    assert (project / "inside.txt").read_text() == "made-inside\n"
    (project / "from-host.txt").write_text("host")
    assert (await sandbox.exec(["cat", str(project / "from-host.txt")])).output == "host"


async def test_exec_reports_exit_codes_timeouts_and_a_clean_environment(sandbox: Sandbox,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIER2_TEST_PROVIDER_KEY", "sk-never-visible-0123456789")
    assert (await sandbox.exec(["/bin/sh", "-c", "exit 7"])).code == 7
    env = (await sandbox.exec(["env"])).output
    assert "sk-never-visible" not in env and "TIER2_TEST_PROVIDER_KEY" not in env
    slow = await sandbox.exec(["sleep", "30"], timeout_s=1.0)
    assert slow.timed_out and slow.code is None


async def test_the_pack_build_runs_inside_and_gives_the_host_build_bytes(sandbox: Sandbox, project: Path,
                                                                         pack: Pack, tmp_path: Path) -> None:
    inside = await run_build(pack, project, launcher=sandbox.launcher)
    assert inside.ok, inside.errors
    host_copy = tmp_path / "host-copy"
    os.system(f"cp -a {project} {host_copy} && rm -rf {host_copy}/dist")  # noqa: S605 - test fixture copy
    on_host = await run_build(pack, host_copy)
    assert on_host.ok and on_host.bundle_sha256 == inside.bundle_sha256


@pytest.mark.browser  # launches Chromium inside the sandbox
async def test_chromium_runs_inside_over_playwrights_pipe(sandbox: Sandbox) -> None:
    security = load_security(REPO_ROOT / "config")
    chromium = find_chromium(None, security.browser.executables)
    async with BrowserPool(sandbox.chromium(chromium)) as pool:
        context = await pool.new_context()
        try:
            page = await context.new_page()
            await page.set_content("<canvas id=c></canvas><script>document.title='ok'</script>")
            assert await page.title() == "ok"
            if sandbox.kind != "local":  # no network at all inside, not even the host's loopback
                probe = await page.evaluate(
                    "fetch('http://127.0.0.1:9/').then(() => 'reached', e => 'blocked: ' + e)")
                assert probe.startswith("blocked")
        finally:
            await context.close()


async def test_skills_and_packages_are_readable_and_read_only(sandbox: Sandbox, pack: Pack) -> None:
    skill = next(p for d in pack.skill_dirs for p in d.rglob("SKILL.md"))
    done = await sandbox.exec(["head", "-c", "20", str(skill)])
    assert done.code == 0 and done.output == skill.read_text()[:20]
    if sandbox.kind != "local":
        denied = await sandbox.exec(["/bin/sh", "-c", f"echo x >> {skill}"])
        assert denied.code != 0
        denied = await sandbox.exec(["/bin/sh", "-c", f"touch {pack.node_modules}/planted"])
        assert denied.code != 0 and not (pack.node_modules / "planted").exists()


async def test_command_sessions_slice_stdin_interrupt_exit_and_full_log(sandbox: Sandbox, tmp_path: Path) -> None:
    sessions = CommandSessions(sandbox, tmp_path / "logs", CommandConfig(slice_s=1.0, output_chars=400))
    try:
        quick = await sessions.start("echo hello; exit 3")
        assert not quick.running and quick.exit_code == 3 and "hello" in quick.output
        # a command that outlives its slice returns a session id; stdin reaches it; it exits with its code
        reader = await sessions.start("read line; echo got:$line; exit 0", wait_s=0.5)
        assert reader.running and reader.exit_code is None and "session" in reader.text()
        answered = await sessions.poll(reader.session_id, stdin="abc\n", wait_s=5)
        assert not answered.running and answered.exit_code == 0 and "got:abc" in answered.output
        # interrupt a long command
        sleeper = await sessions.start("sleep 120", wait_s=0.3)
        assert sleeper.running
        stopped = await sessions.poll(sleeper.session_id, interrupt=True, wait_s=5)
        assert not stopped.running
        # big output: truncated with a marker, the full log pages
        big = await sessions.start("seq 1 5000", wait_s=10)
        assert big.truncated > 0 and "truncated" in big.output and "BashLog" in big.output
        page = sessions.page(big.session_id, offset=2500, limit=3)
        assert page.splitlines()[:3] == ["2501", "2502", "2503"]
        # only new output on each read
        ticker = await sessions.start("for i in 1 2 3; do echo tick$i; sleep 0.4; done", wait_s=0.2)
        rest = await sessions.poll(ticker.session_id, wait_s=30)  # returns once the ticker has ended
        assert not rest.running and "tick3" in rest.output
        assert rest.output.count("tick1") + ticker.output.count("tick1") == 1
    finally:
        await sessions.close()


def test_the_private_docker_daemon_never_touches_the_host_network(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """dockerd's defaults add a bridge, NAT rules and ip_forward: tier2 always passes the flags that turn them off,
    with its own data root, exec root, pidfile and socket."""
    import subprocess as sp

    from tier2.sandbox.docker import SAFE_DAEMON_FLAGS, DockerEngine
    from tier2.settings.sandbox import DockerConfig

    seen: list[list[str]] = []

    class FakePopen:
        def __init__(self, argv: list[str], **_: object) -> None:
            seen.append(argv)
            self.returncode = 1

        def poll(self) -> int:
            return 1

    monkeypatch.setattr(sp, "Popen", FakePopen)
    monkeypatch.delenv("TIER2_DOCKER_HOST", raising=False)
    engine = DockerEngine(tmp_path / "d", DockerConfig())
    monkeypatch.setattr(engine, "answers", lambda: False)
    with pytest.raises(Exception, match="dockerd exited"):
        engine.ensure()
    argv = seen[0]
    assert all(flag in argv for flag in SAFE_DAEMON_FLAGS)
    assert set(SAFE_DAEMON_FLAGS) == {"--bridge=none", "--iptables=false", "--ip-forward=false", "--ip-masq=false"}
    for opt, path in (("--data-root", "data"), ("--exec-root", "exec"), ("--pidfile", "run/dockerd.pid")):
        assert argv[argv.index(opt) + 1] == str(tmp_path / "d" / path)
    assert argv[argv.index("-H") + 1] == f"unix://{tmp_path / 'd' / 'run' / 'docker.sock'}"


def test_docker_left_no_bridge_and_no_forwarding(docker_host: str | None) -> None:
    from tests.sandbox.conftest import HOST_NET

    if docker_host is None or not HOST_NET:
        pytest.skip("docker: no daemon started in this session")
    assert str(Path("/sys/class/net/docker0").exists()) == HOST_NET["docker0"]
    assert Path("/proc/sys/net/ipv4/ip_forward").read_text().strip() == HOST_NET["ip_forward"]

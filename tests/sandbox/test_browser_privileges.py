"""Chromium never runs as root (issue #21 H6): the local kind's shared browser runs as the unprivileged browser uid
with Chromium's own sandbox on (renderers in their own user namespace, under seccomp-bpf); the sandboxed kinds'
browser runs as the sandbox uid inside its sandbox. Real Chromium through Playwright; the browser process is found
on the host by a marker switch and checked in ``/proc/<pid>/status``."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from tests.sandbox.conftest import KINDS, skip_unless_kind
from tier2.browser import BrowserPool, find_chromium
from tier2.packs import Pack
from tier2.sandbox import make_sandbox
from tier2.settings.loader import REPO_ROOT, load_security
from tier2.settings.sandbox import IsolationConfig, SandboxLimits

pytestmark = [pytest.mark.slow]

ISO = IsolationConfig()
WEBGL = ("(() => { const g = document.createElement('canvas').getContext('webgl');"
         " return g ? g.getParameter(g.VERSION) : null; })()")


def _procs() -> dict[int, tuple[int, str]]:
    """pid → (ppid, cmdline) of every process on the host."""
    out: dict[int, tuple[int, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        out[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmdline)
    return out


def _status(pid: int, field: str) -> list[str]:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return line.split()[1:]
    raise AssertionError(f"no {field} in /proc/{pid}/status")


def _descendants(root: int, procs: dict[int, tuple[int, str]]) -> list[int]:
    found, todo = [], [root]
    while todo:
        parent = todo.pop()
        kids = [pid for pid, (ppid, _) in procs.items() if ppid == parent]
        found += kids
        todo += kids
    return found


@pytest.mark.parametrize("kind", KINDS)
async def test_chromium_is_never_root_and_webgl_still_works(kind: str, project: Path, pack: Pack, tmp_path: Path,
                                                            docker_host: str | None) -> None:
    skip_unless_kind(kind, docker_host)
    executable = find_chromium(None, load_security(REPO_ROOT / "config").browser.executables)
    box = make_sandbox(kind, project, tmp_path / "home", read_only=[pack.node_modules],
                       limits=SandboxLimits(pids=512, memory_mb=2048), workspaces=tmp_path / "ws")
    await box.start()
    marker = f"--tier2-probe={uuid.uuid4().hex}"
    try:
        async with BrowserPool(box.chromium(executable), [marker]) as pool:
            context, page = await pool.new_page()
            try:
                await page.set_content("<p>game</p>")
                assert "WebGL" in str(await page.evaluate(WEBGL))
                procs = _procs()
                browsers = [pid for pid, (_, cmd) in procs.items()
                            if marker in cmd and "--type=" not in cmd and "chromium" in cmd.split()[0]]
                assert len(browsers) == 1, [procs[p][1][:200] for p in browsers]
                [browser] = browsers
                root = os.geteuid() == 0
                want = (ISO.browser_uid if kind == "local" else ISO.uid) if root else os.geteuid()
                assert _status(browser, "Uid") == [str(want)] * 4
                assert _status(browser, "Gid")[0] != "0" or not root
                assert want != 0
                if kind == "local":  # Chromium's own sandbox is on: no --no-sandbox, confined renderers
                    assert "--no-sandbox" not in procs[browser][1]
                    renderers = [pid for pid in _descendants(browser, procs) if "--type=renderer" in procs[pid][1]]
                    assert renderers
                    for pid in renderers:
                        assert _status(pid, "Seccomp") == ["2"], pid
                        assert os.readlink(f"/proc/{pid}/ns/user") != os.readlink(f"/proc/{browser}/ns/user")
            finally:
                await context.close()
    finally:
        await box.close()


async def test_a_confined_launcher_is_never_wrapped_again(project: Path, pack: Pack, tmp_path: Path) -> None:
    from tier2.browser.launcher import confined_launcher, unprivileged_launcher
    from tier2.settings.identity import browser_identity

    skip_unless_kind("isolated", None)
    executable = find_chromium(None, load_security(REPO_ROOT / "config").browser.executables)
    box = make_sandbox("isolated", project, tmp_path / "home", workspaces=tmp_path / "ws")
    wrapper = box.chromium(executable)
    assert confined_launcher(wrapper) and not confined_launcher(executable)
    assert unprivileged_launcher(wrapper, browser_identity()) == wrapper
    if os.geteuid() == 0:
        local = unprivileged_launcher(executable, browser_identity(), tmp_path / "launchers")
        assert local != executable and confined_launcher(local)
        assert f"--reuid={ISO.browser_uid}" in Path(local).read_text()

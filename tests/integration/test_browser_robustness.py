"""The browser side never hangs and never leaks: a crashed renderer is a verdict, closed pools leave no process."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tier2.browser import BrowserPool, find_chromium
from tier2.browser.session import SERVED_ORIGIN
from tier2.settings.loader import REPO_ROOT, load_security
from tier2.validators import probe as probe_module
from tier2.validators.l1.runtime_gates import no_errors
from tier2.validators.probe import probe_contract_game

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _ppid_and_state(pid: int) -> tuple[int, str] | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return int(fields[1]), fields[0]


def _children(pid: int) -> set[int]:
    return {int(p) for p in os.listdir("/proc") if p.isdigit() and (i := _ppid_and_state(int(p))) and i[0] == pid}


def _descendants(root: int) -> set[int]:
    parents = {int(p): info[0] for p in os.listdir("/proc") if p.isdigit() and (info := _ppid_and_state(int(p)))}
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


async def _built_template(pack, tmp_path: Path) -> Path:
    import shutil

    from tier2.toolchain import run_build

    game = tmp_path / "game"
    shutil.copytree(pack.template_dir, game)
    assert (await run_build(pack, game)).ok
    return game


async def test_crashed_renderer_is_a_failing_verdict(pack, tmp_path: Path, monkeypatch) -> None:
    game = await _built_template(pack, tmp_path)
    real_boot = probe_module._boot

    async def boot_then_crash(s, trace, boot_budget_ms):
        await real_boot(s, trace, boot_budget_ms)
        cdp = await s.p.context.new_cdp_session(s.p)
        try:
            await cdp.send("Page.crash")
        except Exception:  # noqa: BLE001 - the crash also kills the CDP call
            pass

    monkeypatch.setattr(probe_module, "_boot", boot_then_crash)
    security = load_security(REPO_ROOT / "config")
    async with BrowserPool(find_chromium(None, security.browser.executables)) as pool:
        trace = await probe_contract_game(pool, SERVED_ORIGIN + "dist/index.html", tmp_path / "out",
                                          serve_root=game, total_timeout_s=20)
    assert trace.timed_out and not no_errors(trace).passed


async def test_closed_pool_leaves_no_browser_processes(pack, tmp_path: Path) -> None:
    game = await _built_template(pack, tmp_path)
    drivers_before = _children(os.getpid())  # the session-wide pool of other tests has its own driver
    security = load_security(REPO_ROOT / "config")
    pool = BrowserPool(find_chromium(None, security.browser.executables))
    await probe_contract_game(pool, SERVED_ORIGIN + "dist/index.html", tmp_path / "out", serve_root=game)
    new_drivers = _children(os.getpid()) - drivers_before  # this pool's Playwright driver
    ours = set(new_drivers).union(*(_descendants(d) for d in new_drivers))  # ... and its Chromium processes
    assert len(ours) >= 2, "the pool should have started a driver and Chromium"
    await pool.close()
    alive = {p: info[1] for p in ours if (info := _ppid_and_state(p)) and info[1] != "Z"}
    assert not alive, alive

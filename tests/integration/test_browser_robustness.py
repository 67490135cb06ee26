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


def _chromium_pids() -> set[int]:
    pids = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmd = open(f"/proc/{entry}/cmdline", "rb").read()
            except OSError:
                continue
            if b"chromium" in cmd.split(b"\0")[0]:
                pids.add(int(entry))
    return pids


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
    before = _chromium_pids()
    security = load_security(REPO_ROOT / "config")
    pool = BrowserPool(find_chromium(None, security.browser.executables))
    await probe_contract_game(pool, SERVED_ORIGIN + "dist/index.html", tmp_path / "out", serve_root=game)
    assert _chromium_pids() - before, "the pool should have started Chromium"
    await pool.close()
    leaked = {p for p in _chromium_pids() - before if os.path.exists(f"/proc/{p}")}
    stat = {p: open(f"/proc/{p}/stat").read().split()[2] for p in leaked if os.path.exists(f"/proc/{p}/stat")}
    assert not [p for p, state in stat.items() if state != "Z"], stat

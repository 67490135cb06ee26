"""Load-independent verdicts: the same files give the same verdict on an idle machine and under synthetic CPU load.

Busy-loop child processes (started by pid, niced so the rest of the machine keeps most of its share, stopped by
pid) push the load average to about 15 while the same games are validated again: a working game that plays
(blocked outside requests, a web font) and a page that truly hangs. Every L1/L2 verdict must be the same; a
loaded machine may only make the validation take longer (`GameSession.evaluate`'s second look, `run_bounded`'s
budget scaled by the load).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.fixture_games import install_game
from tier2.settings.loader import Policy
from tier2.validators import ValidationRunner
from tier2.validators.report import ValidationReport

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LOAD = 15
_BUSY = "import os\nos.nice(10)\nwhile True:\n    pass\n"
GAMES = ("outside-fetch", "hung")


def _verdicts(report: ValidationReport) -> dict[str, bool]:
    return {g.id: g.passed for g in report.gates if g.layer != "L3"}


async def _validate_all(pool, pack, games: dict[str, Path], out: Path) -> dict[str, ValidationReport]:
    runner = ValidationRunner(pool, pack, Policy(timeouts={"validation_s": 30, "boot_s": 10}))
    return {name: await runner.validate_target(str(game), out / name, mode="generic") for name, game in games.items()}


@pytest.fixture
def busy_load() -> Iterator[list[subprocess.Popen[bytes]]]:
    """``LOAD`` busy-loop children; each stopped by its own pid when the test ends."""
    procs: list[subprocess.Popen[bytes]] = []
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait(timeout=10)


async def test_same_files_same_verdict_at_load_1_and_load_15(pool, pack, tmp_path: Path, busy_load) -> None:
    games = {name: install_game(name, tmp_path / name) for name in GAMES}
    idle_load = os.getloadavg()[0]
    idle = await _validate_all(pool, pack, games, tmp_path / "idle")
    busy_load += [subprocess.Popen([sys.executable, "-c", _BUSY]) for _ in range(LOAD)]
    deadline = time.monotonic() + 120
    while os.getloadavg()[0] < 0.6 * LOAD and time.monotonic() < deadline:  # the 1-minute average catches up
        time.sleep(2)
    loaded_at = os.getloadavg()[0]
    loaded = await _validate_all(pool, pack, games, tmp_path / "loaded")
    for p in busy_load:
        assert p.poll() is None, "a busy loop ended early: the load was not held for the whole validation"
    loads = f"load {idle_load:.1f} idle, {loaded_at:.1f} at the loaded start, {os.getloadavg()[0]:.1f} at its end"
    assert loaded_at >= 0.5 * LOAD, loads
    for name in GAMES:
        assert _verdicts(loaded[name]) == _verdicts(idle[name]), (name, loads, loaded[name].feedback())
        assert loaded[name].passed == idle[name].passed
    assert idle["outside-fetch"].passed and not idle["hung"].passed
    assert "stopped answering" in " ".join(next(g for g in loaded["hung"].gates if g.id == "l1.no_errors")
                                           .evidence["errors"])
    assert loaded["outside-fetch"].probe["budget"]["machine_load"] > 1.0, loads

"""A small chaos drill (the full one is ``bench/chaos.py``): worker SIGKILLs, a hard Redis restart and SSE clients
that drop and resume — every run ends, no event is lost or duplicated, no side effect runs twice, and every
delivery is identical to an undisturbed run of the same brief."""

from __future__ import annotations

from pathlib import Path

import pytest

from tier2.testing.chaos import ChaosConfig, run_chaos

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]

BRIEFS = ["a potion shop tycoon where I brew potions from herbs and sell them to adventurers",
          "a bakery idle game: bake bread from flour and sell it to villagers"]


def test_chaos_small(tmp_path: Path) -> None:
    # chaos every 1.5-4.5 s (step 1 restarts Redis, later steps kill workers): 4 runs on 2 workers take ~15 s on an
    # idle machine, so a kill lands while runs are in flight (every 4-12 s let them all finish first: 0 kills)
    cfg = ChaosConfig(briefs=BRIEFS, runs=4, workers=2, kill_every_s=3.0, redis_restarts=1, max_kills=3,
                      timeout_s=600)
    rep = run_chaos(tmp_path, cfg, log=lambda *_: None)
    assert rep.worker_kills >= 1 and rep.redis_restarts == 1, rep
    assert rep.terminal == rep.runs and rep.delivered == rep.runs, rep.problems
    assert rep.lost_events == 0 and rep.duplicate_events == 0, rep
    assert rep.duplicate_side_effects == 0 and rep.side_effects > 0, rep
    assert rep.identical_deliveries == rep.runs, rep.problems
    assert rep.reconnects > rep.runs  # the clients really were cut off and resumed

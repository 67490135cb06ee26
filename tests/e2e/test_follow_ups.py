"""The follow-up suite (the pack's ``follow_ups.yaml``, `tier2.testing.follow_ups`): three base games, fifteen
follow-ups, real runs (real Redis, esbuild, Chromium; the offline model). Each follow-up makes the next goal version
with its plan diff, re-runs exactly the designers its change touches (the rest are reused, no model call), gives the
writer only the invalidated tasks, ends as expected (delivered; blocked with options; not delivered when it cannot
be read), and costs fewer model calls than the base game from scratch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tier2.packs import load_pack
from tier2.settings.loader import REPO_ROOT
from tier2.store.plans import PlanVersions
from tier2.testing.follow_ups import Chain, FollowUp, Result, load_chains, run_chain

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]
CHAINS = load_chains(load_pack(REPO_ROOT / "capability_packs", "phaser"))


def _at(table: Any, path: str) -> Any:
    for part in path.split("."):
        table = table[part]
    return table


def _check(res: Result, table: str, path: str, test: str) -> None:
    now, base = _at(res.tables[table], path), _at(res.base_tables[table], path)
    if test.startswith("len="):
        assert len(now) == int(test[4:]), (res.text, path, len(now))
    elif test == ">base":
        assert now > base, (res.text, path, now, base)
    elif test == "<base":
        assert now < base, (res.text, path, now, base)
    else:
        assert now == float(test[1:]), (res.text, path, now)


def _expect(fu: FollowUp, res: Result, version: int) -> None:
    assert res.goal_version == version, (fu.text, res.goal_version)
    assert res.status == fu.status, (fu.text, res.status, res.reason)
    if fu.status != "delivered":
        assert res.reason.startswith(fu.reason), (fu.text, res.reason)
    assert sorted(res.rerun) == sorted(fu.rerun), (fu.text, res.rerun)  # exactly the touched designers
    assert not set(res.rerun) & set(res.reused) and len(res.rerun) + len(res.reused) == 7
    assert res.calls < res.scratch_calls, (fu.text, res.calls, res.scratch_calls)  # cheaper than from scratch
    for table, path, test in fu.checks:
        _check(res, table, path, test)
    added = res.diff.get("requirements", {}).get("added", [])
    if fu.added:
        assert any(a["text"].startswith(fu.added) for a in added), (fu.text, added)
    if fu.what == "uninterpreted":  # nothing the user wrote is dropped: it is a requirement, unverified
        assert any(r["text"].startswith("unverified: the offline model cannot interpret this change")
                   and fu.text in r["text"] for r in res.requirements), res.requirements
    if fu.status == "stopped":  # nothing was built: what the last build verified still holds, the ask does not
        assert 0 < res.verified < res.total, (fu.text, res.verified, res.total)
    if fu.status == "stopped" and fu.reason.startswith("blocked"):
        assert "; options: " in res.reason or fu.what == "contradiction", res.reason
    assert set(fu.reused) <= set(res.diff.get("reused", [])), (fu.text, res.diff.get("reused"))
    assert not res.edited_by_person  # re-converged by the studio, not edited by a person
    m = res.metrics
    assert m["reused"] > 0 and 0 < m["local_replan_ratio"] < 1 and m["goal_coverage"] == 1.0, (fu.text, m)


@pytest.mark.parametrize("chain", CHAINS, ids=[c.genre for c in CHAINS])
async def test_follow_ups_make_goal_versions_and_replan_locally(runtime, tmp_path: Path, chain: Chain) -> None:
    base, results = await run_chain(runtime, chain, tmp_path / "game")
    assert base.status == "delivered", base.reason
    assert base.goal_version == 1 and sorted(base.rerun) == sorted(
        ["gameplay", "level", "economy", "ui", "audio", "vfx", "assets"])
    for n, (fu, res) in enumerate(zip(chain.follow_ups, results, strict=True), start=2):
        _expect(fu, res, n)
    # every goal version is stored, append-only, and readable with its diff and end
    project_id = base.project_id
    versions = await PlanVersions(runtime.store.r, runtime.store.keys).list(project_id)
    assert [v.goal_version for v in versions] == list(range(1, len(chain.follow_ups) + 2)), versions
    first = await PlanVersions(runtime.store.r, runtime.store.keys).get(project_id, 1)
    assert first is not None and first.goal.text == chain.brief and first.end is not None
    assert first.end.kind == "delivered"

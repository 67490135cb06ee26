"""`tier2 eval` through the real CLI: the smoke suite with the offline model and a scripted OpenAI-compatible route
(a fake server on loopback behind a configured route, priced), real Redis, esbuild and Chromium. The results'
shape is checked, and every figure is compared with the run's own delivery.json read independently; an eval
killed with SIGKILL mid-suite resumes on the same OUT: every brief ends exactly once, no run is duplicated."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import TIER2, run_cli
from tier2.evals.results import EvalResults, load_results
from tier2.settings.loader import REPO_ROOT
from tier2.testing import FakeOpenAIServer, Reply

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.browser, pytest.mark.redis]

SMOKE = str(REPO_ROOT / "evals" / "smoke")


def _scripted(body: dict[str, Any]) -> Reply:
    """The writer of the scripted route: retitle the game's theme, build, run, done (the design team is offline)."""
    system = body["messages"][0]["content"]
    system = system if isinstance(system, str) else " ".join(p.get("text", "") for p in system)
    project = Path(re.search(r"game project at (\S+?) \(the project directory\)", system).group(1))
    done = sum(1 for m in body["messages"] if m["role"] == "tool")
    theme = json.loads((project / "data" / "theme.json").read_text())
    theme["title"] = "Scripted Eval"
    steps = [Reply(tool_calls=[("Read", {"file_path": f"{project}/data/theme.json"})]),
             Reply(tool_calls=[("Write", {"file_path": f"{project}/data/theme.json",
                                          "content": json.dumps(theme, indent=2)})]),
             Reply(tool_calls=[("Build", {})]), Reply(tool_calls=[("RunGame", {})])]
    return steps[done] if done < len(steps) else Reply(text="The game is done.")


def _delivery(row: Any) -> dict[str, Any]:
    return json.loads(Path(row.delivery_path).read_text())


def _check_against_deliveries(res: EvalResults, out: Path) -> None:
    for row in res.runs:
        d = _delivery(row)
        assert d["run_id"] == row.run_id and d["status"] == row.status and d["stop_reason"] == row.stop_reason
        assert row.cost_usd == pytest.approx(d["usage"]["cost_usd"])
        assert (row.model_calls, row.tokens.in_, row.tokens.out) == (
            d["usage"]["model_calls"], d["usage"]["input_tokens"], d["usage"]["output_tokens"])
        assert row.wall_s == pytest.approx(d["timings_ms"]["total"] / 1000, abs=1e-3)
        l1 = [g for g in d["verification"]["gates"] if g["layer"] == "L1"]
        assert row.l1_passed == (bool(l1) and all(g["passed"] for g in l1))
        done = d.get("completion") or {}
        assert (row.structural.verified, row.structural.total) == (
            done["structural"]["verified"], done["structural"]["total"])
        if row.status == "delivered":
            assert row.genre_built == done["genre"]
            assert (out / row.screenshot).read_bytes() == Path(d["screenshot"]).read_bytes()
        else:
            assert row.screenshot is None
    for model, s in res.summary.items():
        mine = [r for r in res.runs if r.model == model]
        delivered = [_delivery(r) for r in mine if r.status == "delivered"]
        assert s.runs == len(mine) and s.delivered == len(delivered)
        assert s.cost_per_delivered.p50 == pytest.approx(
            statistics.median(x["usage"]["cost_usd"] for x in delivered), abs=1e-6)
        assert s.cost_usd == pytest.approx(sum(_delivery(r)["usage"]["cost_usd"] for r in mine), abs=1e-6)
        assert s.pass_rate.n == len(mine) and s.pass_rate.lo <= s.pass_rate.rate <= s.pass_rate.hi


def test_smoke_suite_offline_and_scripted_route(tmp_path: Path) -> None:
    config = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    out = tmp_path / "out"
    with FakeOpenAIServer(_scripted) as srv:
        (config / "policy" / "zz-scripted.yaml").write_text(
            "models:\n"
            f"  scripted:\n    kind: openai\n    model: scripted-model\n    base_url: {srv.base_url}\n"
            "    max_retries: 0\n"
            "prices:\n  scripted-model: {input_per_mtok: 2.0, output_per_mtok: 8.0}\n")
        proc = run_cli("eval", SMOKE, "--model", "offline", "--model", "scripted", "--concurrency", "2",
                       "--out", str(out), env={"TIER2_WORKSPACES": str(tmp_path / "ws"),
                                               "TIER2_CONFIG_DIR": str(config)}, timeout=600)
        scripted_calls = len(srv.requests)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = load_results(out)
    assert res.models == ["offline", "scripted"] and res.suite.id == "smoke" and len(res.suite.hash) == 64
    assert sorted((r.model, r.brief_id) for r in res.runs) == sorted(
        (m, b) for m in ("offline", "scripted") for b in ("fox-platformer", "mouse-maze-zh", "kart-racing"))
    assert len({r.run_id for r in res.runs}) == 6
    _check_against_deliveries(res, out)
    by = {(r.model, r.brief_id): r for r in res.runs}
    for model in ("offline", "scripted"):
        assert by[(model, "kart-racing")].outcome == "refused" and by[(model, "kart-racing")].honest is True
        assert by[(model, "fox-platformer")].genre_verdict == "match"
        assert res.summary[model].honest_rate == 1.0
        assert set(res.summary[model].per_genre) == {"platformer", "maze", "racing"}
    # the scripted route wrote the games it delivered: its calls reached the fake server and are priced
    shot = by[("scripted", "fox-platformer")]
    if shot.status == "delivered":
        theme = json.loads((Path(shot.project_dir) / "data" / "theme.json").read_text())
        assert theme["title"] == "Scripted Eval"
    assert scripted_calls >= 4 and _delivery(shot)["usage"]["calls_by_model"].get("scripted-model", 0) >= 4
    assert "model offline:" in proc.stdout and "model scripted:" in proc.stdout and "platformer" in proc.stdout
    # started again on the same OUT: nothing re-runs, the same results
    again = run_cli("eval", SMOKE, "--model", "offline", "--model", "scripted", "--out", str(out),
                    env={"TIER2_WORKSPACES": str(tmp_path / "ws"), "TIER2_CONFIG_DIR": str(config)}, timeout=300)
    assert again.returncode == 0, again.stderr[-3000:]
    assert [r.run_id for r in load_results(out).runs] == [r.run_id for r in res.runs]


def _scripted_config(tmp_path: Path, srv: FakeOpenAIServer) -> Path:
    config = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    (config / "policy" / "zz-scripted.yaml").write_text(
        "models:\n"
        f"  scripted:\n    kind: openai\n    model: scripted-model\n    base_url: {srv.base_url}\n"
        "    max_retries: 0\n"
        "prices:\n  scripted-model: {input_per_mtok: 2.0, output_per_mtok: 8.0}\n")
    return config


@pytest.mark.parametrize("suite", ["mixed", "tycoon"])
def test_every_suite_in_ci_size_offline_and_scripted(tmp_path: Path, suite: str) -> None:
    """The CI-sized form of a shipped suite (its first brief, ``--briefs``), with the offline model and the scripted
    route; the figures match the deliveries (the follow-ups suite's CI size is the threaded chain test below, the
    hostile suite's the refusals test)."""
    import yaml

    first = yaml.safe_load((REPO_ROOT / "evals" / suite / "suite.yaml").read_text(encoding="utf-8"))["briefs"][0]
    out = tmp_path / "out"
    with FakeOpenAIServer(_scripted) as srv:
        config = _scripted_config(tmp_path, srv)
        proc = run_cli("eval", str(REPO_ROOT / "evals" / suite), "--briefs", first["id"], "--model", "offline",
                       "--model", "scripted", "--concurrency", "2", "--out", str(out),
                       env={"TIER2_WORKSPACES": str(tmp_path / "ws"), "TIER2_CONFIG_DIR": str(config)}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = load_results(out)
    assert sorted((r.model, r.brief_id) for r in res.runs) == [("offline", first["id"]), ("scripted", first["id"])]
    _check_against_deliveries(res, out)
    assert all(r.honest is True for r in res.runs), [(r.model, r.stop_reason) for r in res.runs]
    assert {r.genre_built for r in res.runs if r.status == "delivered"} <= {first["expect"]["genre"]}
    bad = run_cli("eval", str(REPO_ROOT / "evals" / suite), "--briefs", "no-such-brief", "--out",
                  str(tmp_path / "o2"), env={"TIER2_WORKSPACES": str(tmp_path / "ws")})
    assert bad.returncode == 2 and "no-such-brief" in bad.stderr


def test_bad_input_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "suite.yaml"
    bad.write_text("schema: tier2.eval.suite/1\nid: x\nversion: 1\nbriefs:\n  - {id: a, brief: b, "
                   "expect: {genre: kart}}\n")
    proc = run_cli("eval", str(bad), "--out", str(tmp_path / "o"), env={"TIER2_WORKSPACES": str(tmp_path / "ws")})
    assert proc.returncode == 2 and "unknown genre 'kart'" in proc.stderr
    proc = run_cli("eval", SMOKE, "--model", "no-such-route", "--out", str(tmp_path / "o"),
                   env={"TIER2_WORKSPACES": str(tmp_path / "ws")})
    assert proc.returncode == 2 and "no-such-route" in proc.stderr


def _state(out: Path) -> dict[str, Any]:
    try:
        return json.loads((out / "state.json").read_text())
    except (OSError, ValueError):
        return {}


def test_an_eval_killed_mid_suite_resumes(tmp_path: Path) -> None:
    out, ws = tmp_path / "out", tmp_path / "ws"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIER2_", "REDIS_URL"))}
    env["TIER2_WORKSPACES"] = str(ws)
    log = (tmp_path / "first.log").open("w")
    first = subprocess.Popen([*TIER2, "eval", SMOKE, "--out", str(out)], cwd=REPO_ROOT, env=env, stdout=log,  # noqa: S603
                             stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while True:  # one brief ended, the next one accepted and running: kill the eval and all it started
            jobs = _state(out).get("jobs", {})
            if sum(j["row"] is not None for j in jobs.values()) >= 1 and any(
                    j["row"] is None for j in jobs.values()):
                break
            assert first.poll() is None, (tmp_path / "first.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the first brief never ended"
            time.sleep(0.2)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait(timeout=60)
        log.close()
    before = {k: j for k, j in _state(out)["jobs"].items()}
    interrupted = [j["run_id"] for j in before.values() if j["row"] is None]
    assert len(interrupted) == 1
    proc = run_cli("eval", SMOKE, "--out", str(out), env={"TIER2_WORKSPACES": str(ws)}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = load_results(out)
    assert sorted(r.brief_id for r in res.runs) == ["fox-platformer", "kart-racing", "mouse-maze-zh"]
    after = _state(out)["jobs"]
    for key, job in before.items():  # the same runs: the finished one kept, the interrupted one waited for
        assert after[key]["run_id"] == job["run_id"]
    resumed = next(r for r in res.runs if r.run_id == interrupted[0])
    assert resumed.status in ("delivered", "failed", "stopped") and resumed.honest is True
    assert len({r.run_id for r in res.runs}) == 3
    projects = [p for p in (ws / "projects").iterdir() if (p / "delivery.json").is_file()]
    assert sorted(json.loads((p / "delivery.json").read_text())["run_id"] for p in projects) == sorted(
        r.run_id for r in res.runs)  # no other run was made
    _check_against_deliveries(res, out)


def test_through_a_running_service(tmp_path: Path) -> None:
    """``--url``: the same steps through ``POST /v1/runs`` of a live service (its own worker), rows from the API's
    run, delivery and events; a brief the service refuses at the door is an honest refusal row."""
    from tier2.testing.cluster import LocalCluster

    suite = tmp_path / "suite.yaml"
    suite.write_text("schema: tier2.eval.suite/1\nid: remote\nversion: 1\nbriefs:\n"
                     "  - {id: kart, brief: 'a kart racing game with three laps on a desert track', "
                     "expect: {outcome: refused, genre: racing}}\n"
                     "  - {id: tiny, brief: 'fun', expect: {outcome: refused}}\n"
                     "  - {id: rpg, brief: 'an RPG with quests, a sword and monsters to fight for loot', "
                     "expect: {outcome: delivered, genre: rpg}}\n", encoding="utf-8")
    with LocalCluster(tmp_path / "cluster") as cluster:
        cluster.start_service(workers=1)
        proc = run_cli("eval", str(suite), "--url", cluster.base, "--out", str(tmp_path / "out"),
                       env={"TIER2_WORKSPACES": str(tmp_path / "ws")}, timeout=300)
        assert proc.returncode == 0, proc.stderr[-3000:] + cluster.log("serve.log")[-2000:]
        res = load_results(tmp_path / "out")
        by = {r.brief_id: r for r in res.runs}
        assert res.where == cluster.base
        assert (by["kart"].outcome, by["kart"].passed, by["kart"].honest) == ("refused", True, True)
        assert by["kart"].run_id and by["kart"].model_calls > 0 and by["kart"].cost_usd > 0
        assert (by["tiny"].status, by["tiny"].run_id, by["tiny"].honest) == ("rejected", None, True)
        assert "brief" in by["tiny"].stop_reason
        # an unbuildable genre expected delivered: not delivered with the reason is honest, and not a pass
        assert (by["rpg"].outcome, by["rpg"].passed, by["rpg"].honest) == ("refused", False, True)
        import httpx

        run = httpx.get(f"{cluster.base}/v1/runs/{by['kart'].run_id}", timeout=10).json()
        assert run["status"] == by["kart"].status and run["stop_reason"] == by["kart"].stop_reason


def test_the_hostile_suites_refusals_and_partials_are_honest(tmp_path: Path) -> None:
    """CI-sized hostile suite: every brief of evals/hostile the offline reader ends at the design or at the door
    (refusals and partials: no build, seconds each), run as its own suite; every outcome honest, exit 0."""
    import yaml

    data = yaml.safe_load((REPO_ROOT / "evals" / "hostile" / "suite.yaml").read_text(encoding="utf-8"))
    data["briefs"] = [b for b in data["briefs"] if b["expect"]["outcome"] in ("refused", "partial")]
    data["id"] = "hostile-ci"
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump(data, allow_unicode=True), encoding="utf-8")
    proc = run_cli("eval", str(tmp_path), "--concurrency", "2", "--out", str(tmp_path / "out"),
                   env={"TIER2_WORKSPACES": str(tmp_path / "ws")}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = load_results(tmp_path / "out")
    assert len(res.runs) == len(data["briefs"]) >= 15
    assert [r.brief_id for r in res.runs if r.honest is not True] == []
    assert res.summary["default"].honest_rate == 1.0
    assert {r.status for r in res.runs} >= {"rejected", "failed"}  # at the door and at the design
    assert "Copied skill" not in proc.stderr  # the progress lines stay readable


def test_a_threaded_theme_follow_up_keeps_the_earlier_follow_ups_numbers(tmp_path: Path) -> None:
    """Follow-ups sent in one thread (the submit path game-cloud uses): two knob changes answered by the level
    designer, then a theme change that re-runs no table designer. The theme run writes the designers' tables again:
    the newest answer's (goal v3: 5 lives, enemies at 400 ms) must win over the base game's answers that the
    gameplay and economy designers made for goal v1 — it used to put 3 lives and 560 ms back and fail its own
    held requirements."""
    chain = [c for c in yaml_chains() if c["genre"] == "maze"][0]
    delivered = {"outcome": "delivered", "genre": "maze"}
    suite = {"schema": "tier2.eval.suite/1", "id": "thread-chain", "version": "1", "pack": "phaser",
             "briefs": [{"id": "maze-chain", "brief": chain["brief"], "expect": delivered,
                         "follow_ups": [{"text": f["text"], "expect": delivered} for f in chain["follow_ups"][:3]]}]}
    (tmp_path / "suite.yaml").write_text(json.dumps(suite, ensure_ascii=False), encoding="utf-8")
    proc = run_cli("eval", str(tmp_path), "--model", "offline", "--out", str(tmp_path / "out"),
                   env={"TIER2_WORKSPACES": str(tmp_path / "ws")}, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = load_results(tmp_path / "out")
    assert [(r.follow_up, r.status) for r in res.runs] == [(i, "delivered") for i in range(4)], \
        [r.stop_reason for r in res.runs]
    rules = json.loads((Path(res.runs[-1].project_dir or "") / "data" / "rules.json").read_text())
    assert rules["lives"] == 5 and rules["enemy_step_ms"] == 400


def yaml_chains() -> list[dict[str, Any]]:
    import yaml

    return list(yaml.safe_load((REPO_ROOT / "capability_packs" / "phaser" / "follow_ups.yaml")
                               .read_text(encoding="utf-8"))["chains"])

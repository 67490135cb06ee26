"""``tier2 submit`` and ``tier2 runs ...`` against a running service of real processes (``tier2 serve`` + a
``tier2 worker`` + redis-server, API keys, offline model): submit → live events → delivery; list, show, cancel;
a wrong key, an unknown or another tenant's id, an unreachable service; a stream dropped again and again (a proxy
resets it mid-frame) resumes with no gap and no duplicate; plain lines when stdout is not a terminal, the live
display on one; ``--json`` is valid JSON."""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.e2e.helpers import TIER2, run_cli
from tier2.settings.loader import REPO_ROOT
from tier2.testing.cluster import LocalCluster, free_port
from tier2.testing.proxy import CuttingProxy

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
ALICE, BOB = "key-of-alice-0123456789", "key-of-bob-9876543210"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> Iterator[LocalCluster]:
    root = tmp_path_factory.mktemp("service-cli")
    with LocalCluster(root, redis_url=redis_url, key_prefix=f"cli-{uuid.uuid4().hex[:8]}",
                      env={"TIER2_API_KEYS": f"alice:{ALICE},bob:{BOB}"}) as c:
        c.start_service(workers=0)
        c.start_worker()
        yield c


def cli(c: LocalCluster, *args: str, key: str = ALICE, url: str | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, env={"TIER2_URL": url or c.base, "TIER2_API_KEY": key})


def _ndjson(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def _accepted_id(proc: subprocess.CompletedProcess[str]) -> str:
    assert proc.returncode == 0, proc.stderr[-2000:]
    return str(json.loads(proc.stdout)["run_id"])


def test_submit_follows_the_run_to_its_delivery(cluster: LocalCluster) -> None:
    proc = cli(cluster, "submit", POTION)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    out = proc.stdout
    assert "\x1b" not in out and "\r" not in out                            # not a terminal: plain lines
    assert out.startswith("run r-") and "phase implement" in out and "Build → success" in out
    assert "RunGame → success" in out and "validate · PASS l1.boots" in out
    assert "run finished: delivered" in out
    run_id = out.split()[1]
    assert f"play:       {cluster.base}/v1/runs/{run_id}/artifacts/dist/index.html" in out
    game = httpx.get(f"{cluster.base}/v1/runs/{run_id}/artifacts/dist/index.html",
                     headers={"Authorization": f"Bearer {ALICE}"}, timeout=30)
    assert game.status_code == 200 and "bundle.js" in game.text

    delivery = json.loads(cli(cluster, "runs", "delivery", run_id, "--json").stdout)
    assert delivery["status"] == "delivered" and delivery["policy_hash"] and delivery["security_hash"]
    shown = cli(cluster, "runs", "show", run_id)
    assert shown.returncode == 0 and "status:     delivered" in shown.stdout
    assert f"policy:     {delivery['policy_hash']} · security/build {delivery['security_hash']}" in shown.stdout
    run = json.loads(cli(cluster, "runs", "show", run_id, "--json").stdout)
    assert run["run_id"] == run_id and run["policy_hash"] == delivery["policy_hash"]

    events = cli(cluster, "runs", "events", run_id, "--json")                 # a replay of the ended run
    assert events.returncode == 0, events.stderr
    frames = _ndjson(events.stdout)
    assert [f["id"] for f in frames] == list(range(1, len(frames) + 1))
    assert frames[0]["event"] == "run_started" and frames[-1]["event"] == "run_finished"
    assert all(f["event"] == f["data"]["type"] for f in frames)
    after = _ndjson(cli(cluster, "runs", "events", run_id, "--json", "--after", str(len(frames) - 3)).stdout)
    assert [f["id"] for f in after] == [len(frames) - 2, len(frames) - 1, len(frames)]
    past = cli(cluster, "runs", "events", run_id, "--json", "--after", str(len(frames)))  # nothing left to follow
    assert past.returncode == 0 and past.stdout == "", past.stderr              # the run itself says: delivered

    traj = cli(cluster, "runs", "trajectory", run_id)                         # totals per agent of the run
    assert traj.returncode == 0, traj.stderr
    assert traj.stdout.startswith(f"run {run_id}: ") and "AGENT " in traj.stdout and "\nwriter " in traj.stdout
    whole = json.loads(cli(cluster, "runs", "trajectory", run_id, "--json").stdout)
    writer = whole["agents"]["writer"]
    models = [c for c in whole["calls"] if c["kind"] == "model" and c["agent"] == "writer"]
    assert writer["model_calls"] == len(models) == whole["summary"]["model_calls"] - sum(
        t["model_calls"] for a, t in whole["agents"].items() if a != "writer") and writer["model_calls"] > 0
    assert writer["tool_calls"] == sum(c["kind"] == "tool" and c["agent"] == "writer" for c in whole["calls"]) > 0
    assert len(whole["calls"]) == whole["total"]
    listed_calls = cli(cluster, "runs", "trajectory", run_id, "--kind", "tool", "--calls")
    assert "RunGame(" in listed_calls.stdout and " model " not in listed_calls.stdout
    assert cli(cluster, "runs", "trajectory", "r-nope").returncode != 0

    listed = json.loads(cli(cluster, "runs", "list", "--json").stdout)
    assert run_id in [r["run_id"] for r in listed["runs"]]
    table = cli(cluster, "runs", "list", "--status", "delivered")
    assert table.returncode == 0 and run_id in table.stdout and table.stdout.startswith("RUN ")


def test_cancel_list_filters_and_exit_codes(cluster: LocalCluster) -> None:
    run_id = _accepted_id(cli(cluster, "submit", POTION, "--detach", "--json"))
    cancel = cli(cluster, "runs", "cancel", run_id)
    assert cancel.returncode == 0 and "cancel requested" in cancel.stdout, cancel.stderr
    followed = cli(cluster, "runs", "events", run_id)
    assert followed.returncode == 1, followed.stdout[-2000:]                 # stopped: not delivered
    assert "cancel requested by alice" in followed.stdout
    assert "run finished: stopped — cancelled by request" in followed.stdout
    again = cli(cluster, "runs", "cancel", run_id)
    assert again.returncode == 2 and f"conflict (409): run {run_id} already ended: stopped" in again.stderr
    early = cli(cluster, "runs", "list", "--status", "stopped", "--json")
    assert run_id in [r["run_id"] for r in json.loads(early.stdout)["runs"]]
    delivered = json.loads(cli(cluster, "runs", "list", "--status", "delivered", "--json").stdout)
    assert run_id not in [r["run_id"] for r in delivered["runs"]]
    searched = json.loads(cli(cluster, "runs", "list", "--search", run_id, "--json").stdout)
    assert [r["run_id"] for r in searched["runs"]] == [run_id]
    show = cli(cluster, "runs", "show", run_id)
    assert "status:     stopped (cancelled by request)" in show.stdout and "cancel requested" in show.stdout


def test_errors_are_clear_with_a_nonzero_exit(cluster: LocalCluster) -> None:
    wrong = cli(cluster, "runs", "list", key="not-a-key-of-anyone")
    assert wrong.returncode == 2 and "tier2: error: unauthorized (401)" in wrong.stderr and wrong.stdout == ""
    unknown = cli(cluster, "runs", "show", "r-0000000000000000")
    assert unknown.returncode == 2 and "tier2: error: not_found (404): unknown run" in unknown.stderr
    mine = _accepted_id(cli(cluster, "submit", POTION, "--detach", "--json"))
    assert cli(cluster, "runs", "cancel", mine).returncode == 0                # at once: the run is still in flight
    theirs = cli(cluster, "runs", "events", mine, key=BOB)                    # another tenant's run does not exist
    assert theirs.returncode == 2 and "not_found (404)" in theirs.stderr
    too_much = cli(cluster, "submit", POTION, "--budget-usd", "999")
    assert too_much.returncode == 2 and "invalid_request (422)" in too_much.stderr and "max_usd" in too_much.stderr
    down = cli(cluster, "runs", "list", url=f"http://127.0.0.1:{free_port()}")
    assert down.returncode == 2 and "cannot reach the tier2 service at http://127.0.0.1:" in down.stderr
    usage = cli(cluster, "submit")
    assert usage.returncode == 2 and "submit needs a BRIEF" in usage.stderr


def test_a_dropped_stream_resumes_with_no_gap_and_no_duplicate(cluster: LocalCluster) -> None:
    run_id = _accepted_id(cli(cluster, "submit", POTION, "--detach", "--json"))
    with CuttingProxy(cluster.port, cuts=[1500, 2600, 900, 3800]) as proxy:
        followed = cli(cluster, "runs", "events", run_id, "--json", url=proxy.url)  # live from the start
        assert followed.returncode == 0, followed.stderr[-2000:]
        cut = proxy.cut
    frames = _ndjson(followed.stdout)
    assert cut >= 3, cut                                                      # it really was dropped, repeatedly
    ids = [f["id"] for f in frames]
    assert ids == list(range(1, len(ids) + 1)), ids                          # no gap, no duplicate
    direct = _ndjson(cli(cluster, "runs", "events", run_id, "--json").stdout)
    assert frames == direct                                                   # the same events, byte for byte
    assert frames[-1]["data"]["status"] == "delivered"


def test_the_live_display_on_a_terminal(cluster: LocalCluster) -> None:
    run_id = _accepted_id(cli(cluster, "submit", POTION, "--detach", "--json"))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIER2_", "REDIS_URL"))}
    env.update(TIER2_URL=cluster.base, TIER2_API_KEY=ALICE, COLUMNS="160")
    master, slave = pty.openpty()
    proc = subprocess.Popen([*TIER2, "runs", "events", run_id], cwd=REPO_ROOT, env=env, stdout=slave,
                            stderr=subprocess.PIPE, text=False)
    os.close(slave)
    seen = b""
    try:
        while True:
            ready, _, _ = select.select([master], [], [], 300)
            assert ready, "no output from the CLI for 300 s"
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed: the process ended
                break
            if not chunk:
                break
            seen += chunk
    finally:
        os.close(master)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()[-2000:]
    text = seen.decode()
    assert "\r\x1b[2K" in text                                               # the status line is redrawn in place
    assert " · step " in text and "plan" in text and "$0." in text           # phase, step, cost, the plan bar
    assert "run finished: delivered" in text

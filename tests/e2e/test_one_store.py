"""Issue #27 item 1 on real processes: every ``tier2`` process on a workspaces root uses the one embedded store.
A ``tier2 generate`` next to a ``tier2 serve`` shows in its ``GET /v1/runs``; two ``tier2 serve`` share one store;
``kill -9`` of the store's owner loses none of the runs the other accepted, which keeps accepting new ones (the
lock/url/take-over logic itself: tests/integration/store/test_one_store.py)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.e2e.helpers import TIER2
from tier2.settings.loader import REPO_ROOT
from tier2.store.embedded_home import process_start, read_owner
from tier2.testing.cluster import free_port, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


def _env(root: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TIER2_", "REDIS_URL", "OTEL_"))}
    env.update(TIER2_WORKSPACES=str(root / "ws"), PYTHONUNBUFFERED="1")  # no REDIS_URL: the embedded store
    return env


class Serve:
    """One ``tier2 serve --workers 0`` process on ``root`` (local mode: no API keys), stopped by its pid."""

    def __init__(self, root: Path, name: str) -> None:
        self.log = root / f"{name}.log"
        with self.log.open("ab") as log:
            self.port = free_port()
            self.proc = subprocess.Popen([*TIER2, "serve", "--port", str(self.port), "--workers", "0"],  # noqa: S603
                                         cwd=REPO_ROOT, env=_env(root), stdout=log, stderr=log,
                                         start_new_session=True)
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=60)
        wait_until(self._up, 120, f"tier2 serve {name} to answer")

    def _up(self) -> bool:
        assert self.proc.poll() is None, self.log.read_text()[-3000:]
        try:
            return self.http.get("/healthz").status_code in (200, 503)
        except httpx.HTTPError:
            return False

    def submit(self) -> str:
        resp = self.http.post("/v1/runs", json={"brief": POTION})
        assert resp.status_code == 202, resp.text
        return str(resp.json()["run_id"])

    def listed(self) -> list[str]:
        return [r["run_id"] for r in self.http.get("/v1/runs", params={"limit": 100}).json()["runs"]]

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> None:
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)
        self.proc.wait(timeout=120)
        self.http.close()


@pytest.fixture
def serves(tmp_path: Path) -> Iterator[list[Serve]]:
    started: list[Serve] = []
    yield started
    for s in started:
        if s.proc.poll() is None:
            s.stop(signal.SIGKILL)
        s.http.close()


def test_a_generate_next_to_a_serve_shows_in_its_runs(tmp_path: Path, serves: list[Serve]) -> None:
    serves.append(serve := Serve(tmp_path, "serve"))
    gen = subprocess.run([*TIER2, "generate", POTION, "--design-only", "--json", "--out", str(tmp_path / "game")],
                         cwd=REPO_ROOT, env=_env(tmp_path), capture_output=True, text=True, timeout=600)
    assert gen.returncode == 0, gen.stderr[-3000:]
    run_id = json.loads(gen.stdout)["run_id"]
    assert run_id in serve.listed()  # after the generate process exited: its run is in the serve's store
    assert serve.http.get(f"/v1/runs/{run_id}").json()["status"] == "stopped"  # paused after the design
    assert [p.name for p in (tmp_path / "ws" / ".redis").iterdir()] == ["default"]  # no private store
    owner = read_owner(tmp_path / "ws" / ".redis" / "default")
    assert owner is not None and owner.pid == serve.proc.pid and owner.server_alive()  # still the serve's child
    log = tmp_path / "worker.log"  # a `tier2 worker` without REDIS_URL joins the same store too
    with log.open("wb") as out:
        worker = subprocess.Popen([*TIER2, "worker", "--name", "w1"], cwd=REPO_ROOT, env=_env(tmp_path),  # noqa: S603
                                  stdout=out, stderr=out, start_new_session=True)
    try:
        wait_until(lambda: worker.poll() is not None or "tier2 worker w1" in log.read_text(), 120, "the worker")
        assert f"on redis://127.0.0.1:{owner.port}/0?password=[redacted]" in log.read_text(), log.read_text()
    finally:
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=120) == 0, log.read_text()[-3000:]


def test_two_serves_on_one_root_share_one_store(tmp_path: Path, serves: list[Serve]) -> None:
    serves.append(first := Serve(tmp_path, "first"))
    serves.append(second := Serve(tmp_path, "second"))
    run_id = second.submit()
    assert first.http.get(f"/v1/runs/{run_id}").status_code == 200
    assert run_id in first.listed()
    owner = read_owner(tmp_path / "ws" / ".redis" / "default")
    assert owner is not None and owner.pid == first.proc.pid  # one redis-server, the first serve's


def test_kill_9_of_the_owner_loses_no_run_the_other_serve_accepted(tmp_path: Path, serves: list[Serve]) -> None:
    home = tmp_path / "ws" / ".redis" / "default"
    serves.append(owner := Serve(tmp_path, "owner"))
    serves.append(other := Serve(tmp_path, "other"))
    accepted = [other.submit() for _ in range(5)]
    before = read_owner(home)
    assert before is not None and before.pid == owner.proc.pid
    owner.stop(signal.SIGKILL)
    wait_until(lambda: (r := read_owner(home)) is not None and r.pid == other.proc.pid and r.server_alive(), 60,
               "the other serve to take the store over")
    assert process_start(before.server_pid) is None  # the dead owner's redis-server is gone
    for run_id in accepted:
        assert other.http.get(f"/v1/runs/{run_id}").status_code == 200, run_id
    accepted.append(other.submit())  # and it still accepts
    assert set(accepted) <= set(other.listed())
    other.stop()
    serves.append(fresh := Serve(tmp_path, "fresh"))  # nobody left: a fresh owner, on the same data dir
    assert set(accepted) <= set(fresh.listed())

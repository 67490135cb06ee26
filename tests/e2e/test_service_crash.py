"""No silent failures across a crash: a service killed mid-run leaves no run "running" after the next start."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tier2.settings.loader import REPO_ROOT
from tier2.store.keys import Keys
from tier2.testing import FakeOpenAIServer, Reply

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(env: dict[str, str], port: int) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "tier2", "serve", "--port", str(port), "--log-level", "warning"],
                            cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(300):
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=5).status_code in (200, 503):
                return proc
        except httpx.HTTPError:
            time.sleep(0.1)
    proc.kill()
    raise AssertionError("service did not start: " + (proc.stderr.read().decode()[-2000:] if proc.stderr else ""))


def test_foreground_run_of_a_killed_cli_ends_failed_at_the_next_service_start(tmp_path: Path,
                                                                             redis_url: str) -> None:
    """``tier2 generate`` runs in its own process (no worker can resume it): when that process dies, the next
    service start ends the run failed with a terminal event instead of reporting it running forever."""
    config = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    release = threading.Event()  # the model call lasts until the test is over (the CLI is killed during it)
    with FakeOpenAIServer(lambda body: (release.wait(60), Reply(text="thinking"))[1]) as slow:
        (config / "policy" / "zz-test.yaml").write_text(
            f"models:\n  slow:\n    kind: openai\n    model: slow\n    base_url: {slow.base_url}\n    max_retries: 0\n"
            "prices:\n  slow: {input_per_mtok: 0.0, output_per_mtok: 0.0}\n")  # unpriced = refused by the budget
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TIER2_", "REDIS_URL"))}
        env.update(REDIS_URL=redis_url, TIER2_WORKSPACES=str(tmp_path / "ws"), TIER2_CONFIG_DIR=str(config),
                   TIER2_KEY_PREFIX=f"crash-{tmp_path.name}")
        cli = subprocess.Popen([sys.executable, "-m", "tier2", "generate", POTION, "--model", "slow", "--json"],
                               cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for _ in range(300):
                line = cli.stderr.readline().decode() if cli.stderr else ""
                if "writer slow" in line or "implement" in line:
                    break
        finally:
            cli.send_signal(signal.SIGKILL)
            cli.wait()
            if cli.stderr:
                cli.stderr.close()
        service = _serve(env, port := _port())
        try:
            runs = httpx.get(f"http://127.0.0.1:{port}/healthz").json()
            assert runs is not None
            import redis

            r = redis.Redis.from_url(redis_url, decode_responses=True)
            k = Keys(prefix=f"crash-{tmp_path.name}")
            run_id = r.zrange(k.runs_index(), 0, -1)[0]
            record = json.loads(r.get(k.run(run_id)))
            events = [json.loads(f["e"]) for _, f in r.xrange(k.run_events(run_id))]
        finally:
            release.set()
            service.terminate()
            service.wait(timeout=30)
            if service.stderr:
                service.stderr.close()
    assert record["status"] == "failed" and "died" in record["stop_reason"]
    assert events[-1]["type"] == "run_finished" and events[-1]["status"] == "failed"


def test_a_killed_foreground_run_does_not_lock_its_loaded_project(tmp_path: Path, redis_url: str) -> None:
    """The one-writer marker never locks a project forever: a foreground ``tier2 generate`` on a loaded project is
    SIGKILLed mid-run; the next service start ends the run (orphan sweep → `finish_run`, which releases the
    marker with the terminal write) and ``POST /v1/runs {project_id}`` on that project is accepted, not 409."""
    import redis

    config = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    prefix = f"lock-{tmp_path.name}"
    r = redis.Redis.from_url(redis_url, decode_responses=True)
    with FakeOpenAIServer(lambda body: (time.sleep(2), Reply(text="thinking"))[1]) as slow:
        (config / "policy" / "zz-test.yaml").write_text(
            f"models:\n  slow:\n    kind: openai\n    model: slow\n    base_url: {slow.base_url}\n    max_retries: 0\n"
            "prices:\n  slow: {input_per_mtok: 0.0, output_per_mtok: 0.0}\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("TIER2_", "REDIS_URL"))}
        env.update(REDIS_URL=redis_url, TIER2_WORKSPACES=str(tmp_path / "ws"), TIER2_CONFIG_DIR=str(config),
                   TIER2_KEY_PREFIX=prefix)
        cli = subprocess.Popen([sys.executable, "-m", "tier2", "generate", POTION, "--model", "slow", "--json"],
                               cwd=REPO_ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            for _ in range(300):
                line = cli.stderr.readline().decode() if cli.stderr else ""
                if "writer slow" in line or "implement" in line:
                    break
        finally:
            cli.send_signal(signal.SIGKILL)
            cli.wait()
            if cli.stderr:
                cli.stderr.close()
        k = Keys(prefix=prefix)
        run_id = r.zrange(k.runs_index(), 0, -1)[0]
        killed = json.loads(r.get(k.run(run_id)))
        project_id = killed["project_id"]
        assert killed["status"] == "running" and r.get(k.project_active(project_id)) == run_id
        # the project is a loaded one (what POST /v1/projects records), owned by the local tenant
        r.set(k.project(project_id), json.dumps({"schema_version": 1, "project_id": project_id,
                                                            "tenant": "local", "path": killed["project_dir"],
                                                            "pack": "phaser@0.1.0", "created_at": time.time()}))
        service = _serve(env, port := _port())
        try:
            record = json.loads(r.get(k.run(run_id)))
            assert record["status"] == "failed" and "died" in record["stop_reason"]
            assert r.get(k.project_active(project_id)) is None       # released with the terminal write
            events = [json.loads(f["e"]) for _, f in r.xrange(k.run_events(run_id))]
            assert sum(e["type"] == "run_finished" for e in events) == 1 and events[-1]["type"] == "run_finished"
            resp = httpx.post(f"http://127.0.0.1:{port}/v1/runs", json={"brief": POTION, "project_id": project_id},
                              timeout=30)
            assert resp.status_code == 202, resp.text
            new_run = resp.json()["run_id"]
            assert resp.json()["project_id"] == project_id and new_run != run_id
            httpx.post(f"http://127.0.0.1:{port}/v1/runs/{new_run}/cancel", timeout=30)  # no need to finish it
        finally:
            service.terminate()
            service.wait(timeout=30)
            if service.stderr:
                service.stderr.close()

"""No silent failures across a crash: a service killed mid-run leaves no run "running" after the next start."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from tier2.settings.loader import REPO_ROOT
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


def test_runs_of_a_killed_service_end_failed_with_a_terminal_event(tmp_path: Path, redis_url: str) -> None:
    config = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", config)
    with FakeOpenAIServer(lambda body: (time.sleep(2), Reply(text="thinking"))[1]) as slow:
        (config / "policy" / "zz-test.yaml").write_text(
            f"models:\n  slow:\n    kind: openai\n    model: slow\n    base_url: {slow.base_url}\n    max_retries: 0\n")
        env = {k: v for k, v in os.environ.items() if not k.startswith("TIER2_")}
        env.update(REDIS_URL=redis_url, TIER2_WORKSPACES=str(tmp_path / "ws"), TIER2_CONFIG_DIR=str(config))
        first = _serve(env, port := _port())
        try:
            run_id = httpx.post(f"http://127.0.0.1:{port}/v1/runs", json={"brief": POTION, "model": "slow"},
                                timeout=30).json()["run_id"]
            for _ in range(200):
                if httpx.get(f"http://127.0.0.1:{port}/v1/runs/{run_id}").json().get("phase") == "implement":
                    break
                time.sleep(0.05)
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait()
        second = _serve(env, port2 := _port())
        try:
            run = httpx.get(f"http://127.0.0.1:{port2}/v1/runs/{run_id}").json()
            events = httpx.get(f"http://127.0.0.1:{port2}/v1/runs/{run_id}/events", timeout=30).text
        finally:
            second.terminate()
            second.wait(timeout=30)
    assert run["status"] == "failed" and "died" in run["stop_reason"]
    assert events.rstrip().splitlines()[-1].startswith("data: ") and "event: run_finished" in events

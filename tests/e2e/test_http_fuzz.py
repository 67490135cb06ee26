"""Schemathesis over the real service's /openapi.json with a valid key: no operation may ever answer 5xx.

Bounded (a few examples per operation and generation mode, derandomized); ``bench/fuzz.py`` runs a bigger budget.
The service runs no worker, so the runs the fuzzer creates are only queued."""

from __future__ import annotations

from pathlib import Path

import pytest

from tier2.app import build_app
from tier2.settings.loader import Settings
from tier2.testing.fuzz import fuzz, serve_in_thread

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis, pytest.mark.browser]  # its service warms Chromium
KEY = "key-of-fuzz-tenant-321"


def test_fuzzed_requests_never_get_a_server_error(tmp_path: Path, redis_url: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TIER2_API_KEYS", f"fuzz:{KEY}")
    settings = Settings(workspaces=tmp_path / "ws", redis_url=redis_url, key_prefix=f"fuzz-{tmp_path.name}")
    with serve_in_thread(build_app(settings, redis_url, workers=0)) as base:
        report = fuzz(base, {"Authorization": f"Bearer {KEY}"}, max_examples=12)
    print(report.summary())
    assert report.server_errors == [], report.server_errors[:5]
    assert len(report.by_operation) >= 12 and report.calls >= 100

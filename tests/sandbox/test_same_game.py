"""`generate` delivers the same game in every workspace kind: with the offline model, the same source files and
the same bundle bytes from ``local``, ``isolated`` (esbuild and Chromium inside bubblewrap) and ``docker`` (inside
containers)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sandbox.conftest import KINDS, skip_unless_kind
from tier2.runs import RunRequest, execute_run

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
BRIEF = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
_DELIVERED: dict[str, tuple[str, str]] = {}


@pytest.mark.parametrize("kind", KINDS)
async def test_every_kind_delivers_the_same_game(kind: str, runtime, tmp_path: Path,
                                                 docker_host: str | None) -> None:
    skip_unless_kind(kind, docker_host)
    outcome = await execute_run(runtime, RunRequest(brief=BRIEF, out_dir=tmp_path / "game",
                                                    options={"workspace": kind}))
    assert outcome.status == "delivered", outcome.stop_reason
    d = outcome.delivery
    _DELIVERED[kind] = (d["source"]["sha256"], d["build"]["bundle_sha256"])
    assert len(set(_DELIVERED.values())) == 1, _DELIVERED  # same as every kind delivered before it

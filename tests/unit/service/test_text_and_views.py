"""Request text rules and the public views of stored records (no pid, host or server path)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from tier2.errors import BadInput
from tier2.service.text import Ident, Line, Text, check_text
from tier2.service.views import PathMask, public_delivery, public_event, public_run, public_worker
from tier2.settings.loader import BudgetOverride


@pytest.mark.parametrize("bad", ["a\ud800b", "\udc00", "a\x00b", "a\x1b[31m", "a\x7f"])
def test_text_refuses_surrogates_nul_and_control_characters(bad: str) -> None:
    with pytest.raises(BadInput):
        check_text(bad, "brief", multiline=True)


def test_text_types() -> None:
    class Body(BaseModel):
        text: Text
        line: Line
        ident: Ident

    assert Body(text="two\nlines\twith tabs\r\n", line="offline", ident="r-0123_ab.c:d").text.startswith("two")
    for bad in ({"text": "\ud800"}, {"line": "a\nb"}, {"ident": "x" * 65}, {"ident": "../x"}):
        with pytest.raises(ValidationError):
            Body(**{"text": "t", "line": "l", "ident": "i", **bad})


@pytest.mark.parametrize("budget", [{"usd": float("nan")}, {"usd": float("inf")}, {"usd": -1}, {"tokens": 0},
                                    {"deadline_s": float("-inf")}, {"tokens": 10**20}, {"cap": 1}])
def test_budget_override_is_finite_and_bounded(budget: dict) -> None:
    with pytest.raises(ValidationError):
        BudgetOverride(**budget)


def test_views_drop_host_details_and_relativize_paths(tmp_path: Path) -> None:
    project = str(tmp_path / "ws/projects/game-1")
    mask = PathMask(project, [tmp_path / "ws"])
    record = {"run_id": "r-1", "status": "failed", "brief": "keep /my/own/words", "project_dir": project,
              "source_dir": project, "owner": {"pid": 4242, "host": socket.gethostname()},
              "stop_reason": f"the process that ran it (pid 4242) died; see {project}/.tier2/log"}
    attempts = [{"attempt": 1, "worker": f"{socket.gethostname()}-4242-abc123", "pid": 4242, "host": "h"}]
    run = public_run(record, attempts, mask).model_dump(exclude_unset=True)
    assert "outcome" not in run["attempts"][0] and "finished_at" not in run  # not in the record: left out
    assert {"project_dir", "source_dir", "owner"}.isdisjoint(run) and run["brief"] == record["brief"]
    assert "4242" not in str(run) and project not in str(run) and run["attempts"][0]["worker"] == "worker-abc123"
    event = public_event({"type": "run_started", "run_id": "r-1", "project_dir": project}, mask)
    assert "project_dir" not in event
    delivery = public_delivery({"run_id": "r-1", "status": "delivered",
                                "preview": {"path": f"{project}/dist/index.html", "url": f"file://{project}/dist/"
                                            "index.html"}, "build": {"bundle_path": f"{project}/dist/bundle.js"},
                                "verification": {"report": f"{project}/.tier2/reports/1/report.json"},
                                "screenshot": f"{project}/screenshot.png", "host": "h", "pid": 1},
                               "r-1", mask).model_dump()
    assert "host" not in delivery and "pid" not in delivery  # an allow-list: unknown keys never pass
    assert delivery["preview"] == {"path": "dist/index.html", "url": "/v1/runs/r-1/artifacts/dist/index.html"}
    assert delivery["build"]["bundle_path"] == "dist/bundle.js"
    assert delivery["screenshot_url"] == "/v1/runs/r-1/artifacts/screenshot.png"
    assert public_worker("w1") == "w1"

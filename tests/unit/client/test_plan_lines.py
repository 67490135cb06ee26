"""``tier2 runs plan``'s output from the API's documents, and the progress display's lines for the goal versions
and the writer's tasks."""

from __future__ import annotations

import io

from tests.fixtures.plan_records import plan_record
from tier2.client.display import ProgressDisplay
from tier2.client.plans import plan_lines
from tier2.events import GoalVersioned, WriterTask, WriterTasks

T0 = 1_700_000_000.0


def _listed() -> dict:
    return {"thread_id": "t-1", "project_id": "game-1", "versions": [
        {"goal_version": 1, "plan_version": 2, "entries": 2, "author": "user", "text": "a cozy bakery " * 10,
         "at": T0, "run_id": "r-1", "added": 3, "end": "delivered"},
        {"goal_version": 2, "plan_version": 1, "entries": 1, "author": "evidence", "text": "l1.economy failed",
         "at": T0, "run_id": "r-2", "invalidated": 2, "reused": 5, "end": None}]}


def test_the_versions_table() -> None:
    lines = plan_lines(_listed(), None)
    assert lines[0] == "thread t-1 · project game-1 · 2 goal version(s)"
    assert lines[2].split()[:10] == ["v1", "2", "user", "delivered", "3", "0", "0", "0", "0", "r-1"]
    assert lines[2].endswith("…") and len(lines[2]) < 160  # a long text is cut
    assert lines[3].split()[:10] == ["v2", "1", "evidence", "-", "0", "0", "0", "2", "5", "r-2"]
    assert plan_lines({"thread_id": "t", "project_id": "p", "versions": []}, None)[-1].startswith("(no goal version")


def test_one_version_unchanged_and_not_ended() -> None:
    doc = {**plan_record(1, 1, end=None), "thread_id": "t-1"}
    doc["diff"] = {"requirements": {"added": [], "changed": [], "removed": []}, "invalidated": {},
                   "reused": ["design.brief"]}
    text = "\n".join(plan_lines(_listed(), doc))
    assert "requirements:\n  (unchanged)" in text and "invalidated (0): none" in text
    assert "reused (1): design.brief" in text
    assert "  design.brief    design       verified     reused" in text
    assert "  req.R3          requirement  pending" in text
    assert "end: (the version's run has not ended)" in text
    assert "metrics: modifications 0 · reasons user 0 · invalidation_rate 0.0" in text


def test_the_progress_display_shows_goal_versions_and_writer_tasks() -> None:
    out = io.StringIO()
    with ProgressDisplay(out, t0=T0) as display:
        display.feed(1, GoalVersioned(run_id="r", goal_version=2, author="user", text="same game, snowy theme",
                                      diff=plan_record(2, 1)["diff"], at=T0 + 1))
        tasks = [WriterTask(id="1", subject="snow sprites", status="in_progress", nodes=["design.assets"]),
                 WriterTask(id="2", subject="patient customers", status="completed", nodes=["req.R3"])]
        display.feed(2, WriterTasks(run_id="r", tasks=tasks, at=T0 + 2))
        assert display.status_line().endswith("tasks 1/2")
    lines = out.getvalue().splitlines()
    assert lines == ["[   1.0s] goal v2 (user): same game, snowy theme · requirements +1 ~1 -1 · 2 invalidated · "
                     "2 reused", "[   2.0s] writer · tasks 1/2 done · now: snow sprites"]

from __future__ import annotations

import typing

from tier2 import events
from tier2.events import EVENT_ADAPTER, CancelRequested, RunFinished


def test_every_event_class_is_in_the_union() -> None:
    members = set(typing.get_args(typing.get_args(events.Tier2Event)[0]))
    defined = {c for c in vars(events).values() if isinstance(c, type) and issubclass(c, events._Event)
               and c is not events._Event}
    assert defined == members


def test_events_round_trip_and_are_frozen() -> None:
    for ev in (CancelRequested(run_id="r", by="t"), RunFinished(run_id="r", status="stopped", stop_reason="x")):
        assert EVENT_ADAPTER.validate_json(ev.model_dump_json()) == ev
    try:
        ev.status = "failed"  # type: ignore[misc]
    except Exception:  # noqa: BLE001 - frozen models refuse assignment
        return
    raise AssertionError("events must be immutable")


def test_goal_versions_and_writer_tasks_are_typed_events() -> None:
    from pydantic import ValidationError

    from tier2.events import GoalVersioned, WriterTask, WriterTasks

    goal = GoalVersioned(run_id="r", goal_version=2, author="user", text="same game, snowy theme",
                         diff={"requirements": {"added": [{"id": "R12", "text": "snow"}]}, "reused": ["req.R1"]})
    tasks = WriterTasks(run_id="r", tasks=[WriterTask(id="1", subject="snow sprites", status="in_progress",
                                                      nodes=["design.assets", "req.R12"])])
    for ev in (goal, tasks):
        assert EVENT_ADAPTER.validate_json(ev.model_dump_json()) == ev
    assert EVENT_ADAPTER.validate_python({"type": "writer_tasks", "run_id": "r", "tasks": [
        {"id": "2", "subject": "timer", "status": "completed", "nodes": []}]}).type == "writer_tasks"
    for bad in ({"type": "goal_versioned", "run_id": "r", "goal_version": 2, "author": "bot", "text": "x"},
                {"type": "writer_tasks", "run_id": "r", "tasks": [{"id": "1", "subject": "s", "status": "done"}]}):
        try:
            EVENT_ADAPTER.validate_python(bad)
        except ValidationError:
            continue
        raise AssertionError(f"accepted {bad}")

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

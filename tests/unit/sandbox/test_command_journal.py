"""Command sessions across attempts (seed 000 §2.6) on the local kind with an in-memory journal: what an attempt
records, and what a later attempt answers for an ended, a stopped, a lost and an unknown session. The Redis-backed
journal and the real hand-over (a killed executor) are in tests/sandbox/test_handover.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tier2.sandbox import CommandSessions, UnknownSession, make_sandbox
from tier2.sandbox.commands import rerun_advice


class _Journal:
    def __init__(self, records: dict[str, dict[str, Any]], attempt: int,
                 shown_at: dict[str, int] | None = None) -> None:
        self.records, self.attempt = records, attempt
        self.shown_at = shown_at if shown_at is not None else {}

    async def started(self, sid: str, command: str) -> None:
        self.records[sid] = {"command": command, "attempt": self.attempt, "state": "running"}

    async def ended(self, sid: str, exit_code: int | None, *, stopped: bool = False) -> None:
        self.records[sid].update(state="stopped" if stopped else "exited", exit_code=exit_code)

    async def shown(self, sid: str, chars: int) -> None:
        self.shown_at[sid] = chars

    async def lookup(self, sid: str) -> dict[str, Any] | None:
        record = self.records.get(sid)
        return None if record is None else {**record, **({"shown": self.shown_at[sid]} if sid in self.shown_at
                                                          else {})}


class _Broken(_Journal):
    async def lookup(self, sid: str) -> dict[str, Any] | None:
        raise ConnectionError("store down")


@pytest.mark.parametrize(("command", "safe"), [
    ("npm test", True), ("node --test tests/", True), ("ls -la && cat notes.md | wc -l", True),
    ("npx esbuild src/main.js --bundle 2>&1 | tail -5", True),
    ("rm -rf dist", False), ("echo hi > notes.txt", False), ("sed -i s/a/b/ src/main.js", False),
    ("npm install", False), ("cat a | tee b", False), ("", False),
])
def test_rerun_advice_by_kind(command: str, safe: bool) -> None:
    assert rerun_advice(command).startswith("it only reads") is safe


async def test_a_later_attempt_answers_for_earlier_sessions(tmp_path: Path) -> None:
    project, logs = tmp_path / "game", tmp_path / "home" / "commands" / "r-1"
    project.mkdir()
    records: dict[str, dict[str, Any]] = {}
    box = make_sandbox("local", project, tmp_path / "home")
    first = CommandSessions(box, logs, journal=_Journal(records, 1))
    ended = await first.start("echo all-done; exit 4", wait_s=30)
    stopped = await first.start("echo started | tee out.txt; sleep 600", wait_s=0.5)
    assert not ended.running and stopped.running
    await first.close()                                   # attempt 1's worker shuts down with it running
    records["c9-abcd"] = {"command": "npm test", "attempt": 1, "state": "running"}  # its worker was killed
    (logs / "c9-abcd.log").write_text("1 passing\n")
    assert {sid: r["state"] for sid, r in records.items()} == {
        ended.session_id: "exited", stopped.session_id: "stopped", "c9-abcd": "running"}

    later = CommandSessions(box, logs, journal=_Journal(records, 2))
    a = await later.poll(ended.session_id)
    assert (a.exit_code, a.running) == (4, False) and "all-done" in a.output
    assert "ended in attempt 1 with exit code 4" in a.text()
    b = await later.poll(stopped.session_id)
    assert b.exit_code is None and "started" in b.output and "stopped when attempt 1 ended" in b.text()
    assert "look at the project" in b.text()              # it wrote a file (tee) before it was stopped
    c = await later.poll("c9-abcd")
    assert "lost: it was still running" in c.text() and "start it again" in c.text() and "1 passing" in c.output
    assert "1 passing" in later.page("c9-abcd")
    for bad in ("c1-zzzz", "../../etc/passwd", "c99-abcd"):
        with pytest.raises(UnknownSession):
            await later.poll(bad)
    with pytest.raises(UnknownSession, match="unknown"):
        await CommandSessions(box, logs, journal=_Broken(records, 2)).poll("c9-abcd")


async def test_a_later_attempt_continues_the_output_where_the_model_stopped(tmp_path: Path) -> None:
    """Attempt 1 showed the first line while the command ran; it ended unseen; attempt 2 shows only the rest."""
    project, logs = tmp_path / "game", tmp_path / "home" / "commands" / "r-1"
    project.mkdir()
    records: dict[str, dict[str, Any]] = {}
    shown: dict[str, int] = {}
    box = make_sandbox("local", project, tmp_path / "home")
    first = CommandSessions(box, logs, journal=_Journal(records, 1, shown))
    report = await first.start("echo line-one; read go; echo line-two; exit 3", wait_s=2)
    assert report.running and "line-one" in report.output and shown[report.session_id] == len("line-one\n")
    done = await first.poll(report.session_id, stdin="x\n", wait_s=30)  # ends, but attempt 1 never reads it:
    assert not done.running                                           # roll its offset back to the first read
    shown[report.session_id] = len("line-one\n")
    later = CommandSessions(box, logs, journal=_Journal(records, 2, shown))
    again = await later.poll(report.session_id)
    assert again.exit_code == 3 and "line-two" in again.output and "line-one" not in again.output
    assert "first 9 characters of its output were shown before" in again.output
    assert shown[report.session_id] == len("line-one\nline-two\n")   # recorded as seen in attempt 2
    third = await CommandSessions(box, logs, journal=_Journal(records, 3, shown)).poll(report.session_id)
    assert "line-one" not in third.output and "line-two" not in third.output  # nothing repeated
    assert "line-one" in later.page(report.session_id)                # the whole log stays pageable
    await first.close()

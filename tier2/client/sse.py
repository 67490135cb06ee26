"""Server-sent events: the frame parser (the HTML spec's rules) and a follower that resumes across dropped connections.

`follow_events` reads ``GET /v1/runs/{id}/events`` and, whenever the connection drops (reset, truncated body,
service restart) or ends before ``run_finished``, reconnects with ``Last-Event-ID`` = the last id it handed out. The
service resumes strictly after that id, and a frame is handed out only once complete (its terminating blank line
seen), so the caller sees every event exactly once, in order: no gap, no duplicate (ids at or below the last one are
dropped should a server ever repeat one).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

import httpx

__all__ = ["Frame", "follow_events", "parse_frames"]


@dataclass(frozen=True)
class Frame:
    """One dispatched event: its ``id:``, ``event:`` and joined ``data:`` lines (``retry:`` applies to the stream)."""

    id: str | None
    event: str
    data: str
    retry_ms: int | None = None


def parse_frames(lines: Iterable[str]) -> Iterator[Frame]:
    """Frames from the stream's lines; an unterminated frame at the end (a cut connection) is never dispatched."""
    event, pending = "", False
    data: list[str] = []
    last_id: str | None = None
    retry: int | None = None
    for raw in lines:
        line = raw.rstrip("\r\n")
        if not line:
            if pending:
                yield Frame(last_id, event or "message", "\n".join(data), retry)
            event, data, retry, pending = "", [], None, False
            continue
        if line.startswith(":"):
            continue  # a comment (keep-alive)
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            data.append(value)
            pending = True
        elif name == "event":
            event, pending = value, True
        elif name == "id" and "\0" not in value:
            last_id, pending = value, True
        elif name == "retry" and value.isdigit():
            retry, pending = int(value), True


class _Interrupted(Exception):
    """The connection dropped or ended early: reconnect."""


def follow_events(client: httpx.Client, path: str, *, after: int = 0, headers: dict[str, str] | None = None,
                  give_up_s: float = 60.0, on_error: Callable[[httpx.Response], Exception],
                  on_unreachable: Callable[[Exception], Exception], sleep: Callable[[float], None] = time.sleep,
                  on_reconnect: Callable[[int], None] | None = None) -> Iterator[tuple[int, Frame]]:
    """``(id, frame)`` for every event after ``after`` until ``run_finished``, resuming across drops.

    A non-200 answer raises ``on_error(response)`` (a 4xx is final; a 5xx is retried like a drop); a service that
    cannot be reached for ``give_up_s`` seconds in a row raises ``on_unreachable(last error)``."""
    last, delay_s, failing_since = after, 0.5, None
    quiet_closes = 0
    while True:
        sent = headers.copy() if headers else {}
        if last:
            sent["Last-Event-ID"] = str(last)
        got = 0
        try:
            with client.stream("GET", path, headers=sent, timeout=httpx.Timeout(30.0, read=90.0)) as resp:
                if resp.status_code != 200:
                    resp.read()
                    if resp.status_code < 500:
                        raise on_error(resp)
                    raise _Interrupted(f"HTTP {resp.status_code}")
                failing_since = None
                for frame in parse_frames(resp.iter_lines()):
                    if frame.retry_ms is not None:
                        delay_s = min(frame.retry_ms / 1000, 10.0)
                    if frame.id is None or not frame.id.isdigit() or int(frame.id) <= last:
                        continue
                    last = int(frame.id)
                    got += 1
                    yield last, frame
                    if frame.event == "run_finished":
                        return
            # a clean end before run_finished: the service closes a stream it has nothing more for (a restart);
            # twice in a row with nothing new means there is nothing left to follow
            quiet_closes = quiet_closes + 1 if got == 0 else 0
            if quiet_closes >= 2:
                return
        except (httpx.TransportError, _Interrupted) as exc:
            now = time.monotonic()
            failing_since = failing_since if failing_since is not None and got == 0 else now
            if now - failing_since > give_up_s:
                raise on_unreachable(exc) from exc
        if on_reconnect is not None:
            on_reconnect(last)
        sleep(delay_s)

"""The fake OpenAI server's `Latency`: every chat request waits its seeded delay before it is answered (the sleep
is the server's own, injected here so the test waits on nothing), the same seed gives the same delays in order of
arrival, concurrent requests each get one, and without a latency nothing waits."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from tier2.testing import FakeOpenAIServer, Latency, Reply


class _Recorder:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.order: list[tuple[str, float]] = []

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.order.append(("sleep", seconds))

    def answer(self, body: dict[str, object]) -> Reply:
        with self.lock:
            self.order.append(("answer", 0.0))
        return Reply(text="hello")


def _ask(srv: FakeOpenAIServer, stream: bool = False) -> httpx.Response:
    return httpx.post(f"{srv.base_url}/chat/completions", timeout=30,
                      json={"model": "m", "stream": stream, "messages": [{"role": "user", "content": "hi"}]})


def test_the_schedule_is_seeded_per_request_and_within_bounds() -> None:
    lat = Latency(1.0, 3.0, seed=5)
    first = [lat.delay(n) for n in range(50)]
    assert first == [Latency(1.0, 3.0, seed=5).delay(n) for n in range(50)]  # reproducible
    assert first != [Latency(1.0, 3.0, seed=6).delay(n) for n in range(50)]  # the seed matters
    assert all(1.0 <= d <= 3.0 for d in first)
    assert len(set(first)) == 50 and max(first) - min(first) > 1.0  # spread over the range, not one value
    assert lat.delay(7) == Latency(1.0, 3.0, seed=5).delay(7)  # request 7's delay whatever came before
    assert Latency(2.0, 2.0).delay(3) == 2.0
    with pytest.raises(ValueError):
        Latency(3.0, 1.0)
    with pytest.raises(ValueError):
        Latency(-1.0, 1.0)


def test_each_request_sleeps_its_delay_before_it_is_answered() -> None:
    rec = _Recorder()
    lat = Latency(1.0, 3.0, seed=11)
    with FakeOpenAIServer(rec.answer, latency=lat, sleep=rec.sleep) as srv:
        for stream in (False, True):
            assert _ask(srv, stream).status_code == 200
        assert srv.delays == [lat.delay(0), lat.delay(1)]
        assert rec.order == [("sleep", lat.delay(0)), ("answer", 0.0), ("sleep", lat.delay(1)), ("answer", 0.0)]
        with ThreadPoolExecutor(8) as pool:  # concurrent requests: each takes the next number exactly once
            assert all(r.status_code == 200 for r in pool.map(lambda _: _ask(srv), range(16)))
        assert srv.delays == [lat.delay(n) for n in range(18)]
        slept = sorted(d for kind, d in rec.order if kind == "sleep")
        assert slept == sorted(srv.delays)


def test_without_a_latency_nothing_waits() -> None:
    rec = _Recorder()
    with FakeOpenAIServer(rec.answer, sleep=rec.sleep) as srv:
        assert _ask(srv).json()["choices"][0]["message"]["content"] == "hello"
    assert srv.delays == [] and rec.order == [("answer", 0.0)]

"""A cancellation landing inside a Read lets the read finish (its file closed) before the stop takes effect;
any other tool is interrupted at once."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest
from agentscope.message import TextBlock, ToolCallBlock, ToolResultState
from agentscope.tool import ToolResponse

from tier2.middleware.cancel import CancelMiddleware


async def _cancel_during(tool: str) -> list[str]:
    seen: list[str] = []
    started = asyncio.Event()

    async def slow_tool(**_: object):  # type: ignore[no-untyped-def]
        seen.append("started")
        started.set()
        await asyncio.sleep(0.3)  # a read still opening its file when the run is cancelled
        seen.append("finished")
        yield ToolResponse(content=[TextBlock(text="file text")], state=ToolResultState.SUCCESS, id="c1")

    layer = CancelMiddleware(lambda: False)
    kwargs = {"tool_call": ToolCallBlock(id="c1", name=tool, input="{}")}

    async def consume() -> None:
        async for _ in layer.on_acting(SimpleNamespace(), kwargs, slow_tool):
            pass

    task = asyncio.create_task(consume())
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    return seen


async def test_a_read_in_flight_finishes_before_the_cancellation() -> None:
    assert await _cancel_during("Read") == ["started", "finished"]


async def test_other_tools_are_interrupted_at_once() -> None:
    assert await _cancel_during("Build") == ["started"]


async def test_a_cancelled_run_starts_no_read() -> None:
    layer = CancelMiddleware(lambda: True)
    kwargs = {"tool_call": ToolCallBlock(id="c1", name="Read", input="{}")}

    async def never(**_: object):  # type: ignore[no-untyped-def]
        raise AssertionError("the read must not start")
        yield  # pragma: no cover

    with pytest.raises(asyncio.CancelledError):
        async for _ in layer.on_acting(SimpleNamespace(), kwargs, never):
            pass

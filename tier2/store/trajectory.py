"""Per-run trajectory: every model call and tool call of a run, for later analysis (``GET /v1/runs/{id}/trajectory``).

Written by `tier2.middleware.recorder.CallRecorder`, keyed by call id (HSET + ZADD NX): a resumed attempt that
repeats a call overwrites its record instead of adding a duplicate, and keeps the call's first position.
Read order is the first start time; ``step`` numbers are assigned on read (the n-th answered model call; a tool
call belongs to the step of the model call that requested it), so they stay gapless across attempts.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal

import redis.asyncio as aioredis
from pydantic import BaseModel, ConfigDict
from redis.exceptions import RedisError

from tier2.store.keys import SCHEMA_VERSION, Keys
from tier2.store.replies import members, text

__all__ = ["CaseCallRecord", "ModelCallRecord", "ToolCallRecord", "TrajectoryStore", "CallRecord"]

log = logging.getLogger(__name__)


class _Call(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = SCHEMA_VERSION
    call_id: str
    agent: str
    state: str  # success | error | denied | interrupted | refused
    started_at: float  # epoch seconds
    duration_ms: float
    reply_id: str = ""
    iteration: int = 0
    error: str = ""
    step: int | None = None  # assigned on read


class ModelCallRecord(_Call):
    kind: Literal["model"] = "model"
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None  # None: the model has no price in the table
    fallback: int = 0  # 0 = the route's primary model; n = the n-th fallback answered (or failed)
    usage_estimated: bool = False  # the server reported no usage: the tokens are characters / 4
    dropped_params: list[str] = []  # request parameters the server refused, dropped for the run (then retried)


class ToolCallRecord(_Call):
    kind: Literal["tool"] = "tool"
    tool: str
    args_summary: str = ""
    args_sha256: str = ""
    result_sha256: str = ""
    result_chars: int = 0


class CaseCallRecord(_Call):
    """A debug case library hit (`tier2.learning`): a fix applied or offered in place of model calls."""

    kind: Literal["case"] = "case"
    signature: str
    gate: str
    action: str  # applied | offered | recalled | advised
    fixer: str | None = None
    fixed: bool | None = None
    replaced_model_calls: int = 0
    replaced_tokens: int = 0


CallRecord = ModelCallRecord | ToolCallRecord | CaseCallRecord


def _parse(raw: str) -> CallRecord:
    data = json.loads(raw)
    kind = data.get("kind")
    if kind == "model":
        return ModelCallRecord(**data)
    return CaseCallRecord(**data) if kind == "case" else ToolCallRecord(**data)


class TrajectoryStore:
    """Async access to the per-run call records (the client and key prefix are injected)."""

    def __init__(self, client: aioredis.Redis, keys: Keys | None = None) -> None:
        self.r, self.keys = client, keys or Keys()

    async def record(self, run_id: str, *calls: CallRecord) -> bool:
        """Store calls idempotently in one round trip; False (and a warning) when Redis refused: analysis data
        never fails a run."""
        if not calls:
            return True
        try:
            async with self.r.pipeline(transaction=True) as p:
                p.hset(self.keys.run_trajectory(run_id),
                       mapping={c.call_id: c.model_dump_json(exclude={"step"}) for c in calls})
                p.zadd(self.keys.run_trajectory_order(run_id), {c.call_id: c.started_at for c in calls}, nx=True)
                await p.execute()
            return True
        except (RedisError, OSError) as exc:
            log.warning("trajectory of run %s: cannot record %d call(s): %s", run_id, len(calls), exc)
            return False

    async def read(self, run_id: str) -> list[CallRecord]:
        """Every call of the run in first-start order, with ``step`` numbers."""
        ids = members(await self.r.zrange(self.keys.run_trajectory_order(run_id), 0, -1))
        if not ids:
            return []
        raws = await self.r.hmget(self.keys.run_trajectory(run_id), ids)
        calls = [_parse(text(raw)) for raw in raws if raw]
        step = 0
        for call in calls:
            if isinstance(call, ModelCallRecord):
                if call.state == "success":
                    step += 1
                call.step = step if call.state == "success" else step + 1
            else:
                call.step = step
        return calls

    @staticmethod
    def summarize(calls: list[CallRecord]) -> dict[str, Any]:
        """Totals per model (calls, failures, tokens, cost), per tool (calls, errors, time) and per agent (the
        writer, the designers, the explorer and reviewer, the L3 scorer: model calls, tool calls, tokens, cost)."""
        models: dict[str, dict[str, Any]] = {}
        agents: dict[str, dict[str, Any]] = {}
        tools: dict[str, dict[str, Any]] = {}
        library = {"hits": 0, "applied": 0, "fixed": 0, "offered": 0, "model_calls_replaced": 0,
                   "tokens_replaced": 0}
        for c in calls:
            if isinstance(c, CaseCallRecord):
                library["hits"] += 1
                library[c.action] = library.get(c.action, 0) + 1
                library["fixed"] += bool(c.fixed)
                if c.action == "applied" and c.fixed:
                    library["model_calls_replaced"] += c.replaced_model_calls
                    library["tokens_replaced"] += c.replaced_tokens
            elif isinstance(c, ModelCallRecord):
                a = agents.setdefault(c.agent, {"model_calls": 0, "tool_calls": 0, "tokens": 0, "cost_usd": 0.0})
                a["model_calls"] += 1
                a["tokens"] += c.input_tokens + c.output_tokens
                a["cost_usd"] += c.cost_usd or 0.0
                m = models.setdefault(c.model, {"calls": 0, "failed": 0, "input_tokens": 0, "output_tokens": 0,
                                                "cost_usd": 0.0, "priced": True, "ms": 0.0})
                m["calls"] += 1
                m["failed"] += c.state != "success"
                m["input_tokens"] += c.input_tokens
                m["output_tokens"] += c.output_tokens
                m["ms"] += c.duration_ms
                if c.cost_usd is None and c.state == "success":
                    m["priced"] = False
                m["cost_usd"] += c.cost_usd or 0.0
            else:
                agents.setdefault(c.agent, {"model_calls": 0, "tool_calls": 0, "tokens": 0, "cost_usd": 0.0})[
                    "tool_calls"] += 1
                t = tools.setdefault(c.tool, {"calls": 0, "errors": 0, "ms": 0.0})
                t["calls"] += 1
                t["errors"] += c.state != "success"
                t["ms"] += c.duration_ms
        for m in models.values():
            m["cost_usd"] = round(m["cost_usd"], 6) if m["priced"] else None
            m["ms"] = round(m["ms"], 1)
        for t in tools.values():
            t["ms"] = round(t["ms"], 1)
        for a in agents.values():
            a["cost_usd"] = round(a["cost_usd"], 6)
        out = {"model_calls": sum(m["calls"] for m in models.values()),
               "tool_calls": sum(t["calls"] for t in tools.values()), "models": models, "tools": tools,
               "agents": agents}
        if library["hits"]:
            out["library"] = library
        return out

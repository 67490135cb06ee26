"""Benchmark: overhead of tier2's full middleware onion per ReAct step, against a bare AgentScope `Agent`.

Usage: .venv/bin/python bench/onion_overhead.py [--steps 24] [--reps 15] [--tool read|echo] [--breakdown]
[--tracing] [--json]   (or `make bench-onion`).

Both agents get the same scripted in-process model (`tier2.testing.ScriptedChatModel`, streaming, no network)
and the same cheap tool: each step reads another small file (``read``: AgentScope's own Read tool, as the writer
uses it; ``echo``: a trivial in-process function tool, the worst case for the ratio). The onion is the real one:
every `RunLayers` slot built by `tier2.runs.loop.layers.build_run_layers` on a real Redis (a redis-server child on a
random loopback port), plus the checkpoint and operation-ledger layers built as `tier2.runs.generate` builds them,
the cancel check and the path guard. Tracing is off (the default: no OTLP endpoint); ``--tracing`` adds a third
variant with an SDK provider and an in-memory exporter. ``--breakdown`` also measures the cancel check and path
guard alone (``core``) and each `RunLayers` slot alone on top of them (``+budget``...), to show where time goes.

A step is the time between two consecutive tool results in the reply stream (model call, stream events, tool call
and every layer around them). The first step of each reply is dropped (warm-up); the bare and onion replies
alternate so drift hits both. Reported: median ms per step for each, their ratio and difference, p90.
The machine is shared and noisy: read the figures as medians, not guarantees (target: ≤1.3× and ≤5 ms per step).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentscope.agent import Agent, ReActConfig  # noqa: E402
from agentscope.event import ToolResultEndEvent  # noqa: E402
from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg  # noqa: E402
from agentscope.permission import PermissionBehavior, PermissionRule  # noqa: E402
from agentscope.state import AgentState  # noqa: E402
from agentscope.tool import FunctionTool, Read, Toolkit, ToolResponse  # noqa: E402

from tier2.assembly.writer import writer_permissions  # noqa: E402
from tier2.middleware import RunLayers, build_middlewares  # noqa: E402
from tier2.runs import open_runtime  # noqa: E402
from tier2.runs.loop.layers import LayerContext, build_run_layers  # noqa: E402
from tier2.runs.process.runtime import Runtime  # noqa: E402
from tier2.settings.loader import Settings  # noqa: E402
from tier2.store.embedded import EmbeddedRedis  # noqa: E402
from tier2.store.keys import Keys  # noqa: E402
from tier2.testing import ScriptedChatModel, tool_results  # noqa: E402


def echo(file_path: str) -> ToolResponse:
    """Return the path it was given (a trivial in-process tool).

    Args:
        file_path (`str`): any path
    """
    return ToolResponse(content=[TextBlock(text=f"echo {file_path}")])


def _script(files: list[Path], tool: str) -> Callable[[list[Msg]], list[TextBlock | ToolCallBlock]]:
    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)
        if done >= len(files):
            return [TextBlock(text="done")]
        # a different file each step: the stuck detector must not see a repeated call
        args = json.dumps({"file_path": str(files[done])})
        return [TextBlock(text=f"step {done}"), ToolCallBlock(id=f"call_{done}_{uuid.uuid4().hex[:8]}",
                                                              name=tool, input=args)]
    return script


def _agent(project: Path, files: list[Path], tool: str, model_name: str, middlewares: list[Any]) -> Agent:
    tools = [Read()] if tool == "Read" else [FunctionTool(echo, name="Echo")]
    permissions = writer_permissions(project)
    permissions.allow_rules["Echo"] = [PermissionRule(tool_name="Echo", rule_content=None, source="bench",
                                                      behavior=PermissionBehavior.ALLOW)]
    return Agent(name="writer", system_prompt="Benchmark agent: read the files one by one.",
                 model=ScriptedChatModel(_script(files, tool), model=model_name), toolkit=Toolkit(tools=tools),
                 middlewares=middlewares, state=AgentState(permission_context=permissions),
                 react_config=ReActConfig(max_iters=len(files) + 2))


SLOTS = ("tracing", "budget", "breakers", "checkpoint", "operations")


def _layers(rt: Runtime) -> RunLayers:
    """The run's layers, as a run builds them (a fresh run id per reply: budget and breakers are per run)."""
    policy = rt.policies.snapshot()
    route_name, route = policy.agent_route("writer")
    run_id = "r-bench" + uuid.uuid4().hex[:10]

    async def emit(event: Any) -> None:  # the run's event path: its stream
        await rt.store.append_event(event)
    return build_run_layers(LayerContext(run_id=run_id, agent="writer", policy=policy, route_name=route_name,
                                         route=route, runtime=rt, emit=emit,
                                         progress=lambda: {"round": 0, "usage": {}, "step": 0}))


def _middlewares(rt: Runtime, project: Path, variant: str) -> list[Any]:
    """``bare``: none; ``onion``: every slot; ``core``: cancel + path guard; ``+slot``: core and that slot."""
    if variant == "bare":
        return []
    layers = _layers(rt)
    if variant != "onion":
        only = variant.removeprefix("+")
        layers = RunLayers(**{slot: getattr(layers, slot) for slot in SLOTS if slot == only})
    return build_middlewares(str(project.resolve()), lambda: False, layers)


async def _reply(agent: Agent) -> list[float]:
    """Per-step durations (ms) of one reply, first step dropped."""
    marks: list[float] = []
    t0 = time.perf_counter()
    async for item in agent.reply_stream(UserMsg("user", "go")):
        if isinstance(item, ToolResultEndEvent):
            marks.append(time.perf_counter())
    edges = [t0, *marks]
    return [(b - a) * 1000 for a, b in zip(edges, edges[1:], strict=False)][1:]


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {"median_ms": round(statistics.median(ordered), 3), "p90_ms": round(ordered[int(0.9 * (len(ordered) - 1))],
            3), "steps": len(ordered)}


async def measure(args: argparse.Namespace, url: str, work: Path) -> dict[str, Any]:
    project = work / "project"
    project.mkdir()
    files = []
    for i in range(args.steps):
        f = project / f"notes_{i:03d}.txt"
        f.write_text("".join(f"line {n} of file {i}\n" for n in range(20)))
        files.append(f)
    tool = "Read" if args.tool == "read" else "Echo"
    settings = Settings(workspaces=work / "ws", redis_url=url)
    variants = ["bare", "onion"] + (["core", *(f"+{slot}" for slot in SLOTS)] if args.breakdown else [])
    samples: dict[str, list[float]] = {v: [] for v in variants}
    async with open_runtime(settings, url, Keys(prefix="bench-onion")) as rt:
        model_name = rt.policies.snapshot().agent_route("writer")[1].model  # priced: the budget layer accepts it
        for rep in range(args.reps + 1):  # rep 0 warms every path up and is not counted
            shift = rep % len(variants)  # rotate the order so drift hits every variant alike
            for variant in variants[shift:] + variants[:shift]:
                middlewares = _middlewares(rt, project, variant)
                gc.collect()
                steps = await _reply(_agent(project, files, tool, model_name, middlewares))
                if rep:
                    samples[variant] += steps
        if args.tracing:
            from opentelemetry import trace
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import SimpleSpanProcessor
            from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
            trace.set_tracer_provider(provider)
            samples["onion_traced"] = []
            for rep in range(args.reps + 1):
                gc.collect()
                steps = await _reply(_agent(project, files, tool, model_name, _middlewares(rt, project, "onion")))
                if rep:
                    samples["onion_traced"] += steps
    stats = {k: _stats(v) for k, v in samples.items()}
    bare, onion = stats["bare"]["median_ms"], stats["onion"]["median_ms"]
    result: dict[str, Any] = {"tool": tool, "steps_per_reply": args.steps, "reps": args.reps, "stats": stats,
                              "ratio": round(onion / bare, 3), "overhead_ms_per_step": round(onion - bare, 3),
                              "target": {"ratio": 1.3, "overhead_ms_per_step": 5.0}}
    result["meets_target"] = result["ratio"] <= 1.3 and result["overhead_ms_per_step"] <= 5.0
    if "onion_traced" in stats:
        result["traced_overhead_ms_per_step"] = round(stats["onion_traced"]["median_ms"] - bare, 3)
    return result


def main() -> int:
    ap = argparse.ArgumentParser(description="tier2 onion overhead per ReAct step vs a bare AgentScope Agent")
    ap.add_argument("--steps", type=int, default=24, help="tool steps per reply (the breakers cap a turn at 30)")
    ap.add_argument("--reps", type=int, default=15, help="replies per variant (plus one warm-up)")
    ap.add_argument("--tool", choices=["read", "echo"], default="read")
    ap.add_argument("--breakdown", action="store_true", help="also measure each onion slot alone")
    ap.add_argument("--tracing", action="store_true", help="also measure the onion with an in-memory OTel exporter")
    ap.add_argument("--json", action="store_true", help="print only the JSON result")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tier2-onion-") as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis")
        redis.start()
        try:
            result = asyncio.run(measure(args, redis.url, Path(tmp)))
        finally:
            redis.stop()
    if not args.json:
        print(f"onion overhead per ReAct step ({result['tool']} tool, {args.steps} steps x {args.reps} replies):")
        print(f"  {'variant':14s} {'median ms':>10s} {'p90 ms':>9s} {'steps':>6s}")
        for name, s in result["stats"].items():
            print(f"  {name:14s} {s['median_ms']:10.3f} {s['p90_ms']:9.3f} {s['steps']:6d}")
        print(f"  ratio onion/bare {result['ratio']:.3f} (target <= 1.3), "
              f"overhead {result['overhead_ms_per_step']:.3f} ms/step (target <= 5)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Benchmark: a long scripted writer session with and without the context layer (`tier2.context`).

Usage: .venv/bin/python bench/context.py [--steps 300] [--reps 5] [--json]

The real writer assembly (`tier2.assembly.build_writer`: its system prompt, tools, permissions and onion) on a copy
of the pack template; only the model is scripted (`tier2.testing.ScriptedChatModel`). The script acts like a busy
writer: each step writes a notes file (1-6 KB, size drawn from the run's seed), greps the project or reads a large
file, with a line of reasoning text; a user message starts every 20-step round. ``with``: the context layer with
the repo's writer policy (config/policy/context.yaml); ``without``: the same onion minus that layer (AgentScope's
own compression would only start at 80% of the model's window, far past any budget here).

Reported per variant, as medians over the runs: input tokens per model call (the model's ``count_tokens`` on the
prompt it received), the largest prompt, the number of compressions, wall time per run; and the budget.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg  # noqa: E402

from tier2.assembly import build_writer  # noqa: E402
from tier2.context import ContextMiddleware, context_record  # noqa: E402
from tier2.middleware import RunLayers  # noqa: E402
from tier2.packs import load_pack  # noqa: E402
from tier2.settings.loader import REPO_ROOT, PolicyStore  # noqa: E402
from tier2.testing import ScriptedChatModel  # noqa: E402
from tier2.validators import ValidationRunner  # noqa: E402

PER_TURN = 20
_STEP = re.compile(r"step-(\d{4})")


def _text(msg: Msg) -> str:
    out = []
    for b in msg.get_content_blocks():
        if isinstance(b, TextBlock):
            out.append(b.text)
        elif isinstance(b, ToolCallBlock):
            out.append(b.input)
    return "\n".join(out)


class Writer:
    """The scripted writer: derives its step from the conversation (so it survives compression)."""

    def __init__(self, project: Path, steps: int, seed: int) -> None:
        self.project, self.steps, self.rng = project, steps, random.Random(seed)
        self.prompt_tokens: list[int] = []

    def bind(self, model: ScriptedChatModel) -> Any:
        async def step(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
            self.prompt_tokens.append(int(await model.count_tokens(messages, model.calls[-1].tools)))
            n = max((int(x) for m in messages for x in _STEP.findall(_text(m))), default=0) + 1
            if n > self.steps or (messages[-1].role == "assistant" and n > 1 and (n - 1) % PER_TURN == 0):
                return [TextBlock(text=f"Round done through step-{n - 1:04d}.")]
            return self.act(n)
        return step

    def act(self, n: int) -> list[TextBlock | ToolCallBlock]:
        tag = f"step-{n:04d}"
        kind = n % 3
        if kind == 0:
            size = self.rng.randint(1_000, 6_000)
            body = (f"# {tag}\n" + f"- {tag}: potion recipe notes, herbs and prices\n" * (size // 45))[:size]
            args: dict[str, Any] = {"file_path": str(self.project / "notes" / f"{tag}.md"), "content": body}
            name = "Write"
        elif kind == 1:
            name, args = "Grep", {"pattern": "potion", "path": str(self.project)}
        else:
            name, args = "Read", {"file_path": str(self.project / "notes" / "big.md")}
        return [TextBlock(text=f"Decision at {tag}: keep the notes consistent with the recipes."),
                ToolCallBlock(id=f"c{n}-{name}", name=name, input=json.dumps(args))]


async def one_run(pack: Any, steps: int, seed: int, with_layer: bool) -> dict[str, Any]:
    policy = PolicyStore(REPO_ROOT / "config").snapshot()
    with tempfile.TemporaryDirectory(prefix="t2-bench-context-") as tmp:
        project = Path(tmp) / "game"
        shutil.copytree(pack.template_dir, project)
        (project / "notes").mkdir()
        (project / "notes" / "big.md").write_text("".join(f"potion {i}: brew from herbs, sell to adventurers\n"
                                                          for i in range(1_500)))
        writer = Writer(project, steps, seed)
        model = ScriptedChatModel(lambda m: step(m), model="scripted-bench")  # noqa: PLW0108 - bound next
        step = writer.bind(model)
        layer = ContextMiddleware(policy.context.for_agent("writer"), role="writer", project_root=project)
        layers = RunLayers(context=[layer] if with_layer else [])
        handle = await build_writer(project_id="bench", project=project, pack=pack, policy=policy, model=model,
                                    runner=ValidationRunner(None, pack, policy),  # type: ignore[arg-type]
                                    reports_dir=project / ".tier2" / "reports", layers=layers)
        t0 = time.perf_counter()
        for k in range(steps // PER_TURN + 1):
            await handle.agent.reply(UserMsg("user", f"Round {k}: carry on with the recipe notes."))
        wall = time.perf_counter() - t0
        record = context_record(handle.agent.state)
    return {"median_input_tokens": statistics.median(writer.prompt_tokens), "max_prompt": max(writer.prompt_tokens),
            "compressions": int(record.get("seq", 0)), "calls": len(writer.prompt_tokens), "wall_s": wall,
            "budget": policy.context.for_agent("writer").budget_tokens}


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    pack = load_pack(REPO_ROOT / "capability_packs", "phaser")
    runs: dict[str, list[dict[str, Any]]] = {"with": [], "without": []}
    for rep in range(args.reps):
        for variant in ("with", "without"):
            runs[variant].append(await one_run(pack, args.steps, seed=rep, with_layer=variant == "with"))
    out: dict[str, Any] = {"steps": args.steps, "reps": args.reps}
    for variant, rs in runs.items():
        out[variant] = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
        out[variant]["max_prompt_worst"] = max(r["max_prompt"] for r in rs)
    w, wo = out["with"], out["without"]
    out["input_tokens_ratio"] = round(w["median_input_tokens"] / wo["median_input_tokens"], 3)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{args.steps}-step scripted writer session, {args.reps} runs each (medians)")
    print(f"{'':10}{'input tok/call':>16}{'max prompt':>12}{'worst max':>11}{'budget':>8}{'compressions':>14}"
          f"{'calls':>7}{'wall s':>8}")
    for name in ("with", "without"):
        v = out[name]
        print(f"{name:10}{v['median_input_tokens']:>16.0f}{v['max_prompt']:>12.0f}{v['max_prompt_worst']:>11}"
              f"{v['budget']:>8}{v['compressions']:>14.0f}{v['calls']:>7.0f}{v['wall_s']:>8.1f}")
    print(f"input tokens per call, with/without: {out['input_tokens_ratio']}")


if __name__ == "__main__":
    asyncio.run(main())

"""Benchmark: the debug case library on the mutation corpus — defects fixed from the library with no model call,
and the model calls and tokens that saves, for the offline model and for a scripted model.

Usage: .venv/bin/python bench/cases.py [--genre ID] [--only DEFECT,...] [--briefs N] [--json]

1. Seed: a private Redis, then `tier2 cases seed` in-process (every defect of the mutation catalogue and the
   taxonomy's operators injected into the genre template, fixed, verified, recorded).
2. Offline model: ``offline-faulty`` (a syntax error and a missing data key) on N briefs with the library off, then
   on: model calls, tokens, faults fixed by the library, delivered.
3. Scripted model, on the mutation corpus: in an offline-generated game (not the template the library was seeded
   on) a scripted writer checks the working game (Build, RunGame), makes a change that carries one defect of the
   corpus, checks again and, when a check fails, repairs it the cheapest way a model could — it re-reads the
   broken files and writes them back — and checks again. With the library on, the same writer: the repair calls
   it does not need are the saving ("fixed with no model call": the library fixed it, the writer made no repair).
Everything is real (Redis, esbuild, Chromium); only the models are offline or scripted. Times are not the point.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import uuid
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agentscope.message import Msg, TextBlock, ToolCallBlock, UserMsg  # noqa: E402

from tier2.assembly import build_writer  # noqa: E402
from tier2.events import CaseHit  # noqa: E402
from tier2.learning import CaseLibraryMiddleware, LibraryRun  # noqa: E402
from tier2.learning.history import read_files  # noqa: E402
from tier2.learning.seed import TAXONOMY_DEFECTS, SeedDefect  # noqa: E402
from tier2.middleware import RunLayers  # noqa: E402
from tier2.runs import RunRequest, execute_run, open_runtime  # noqa: E402
from tier2.runs.commands.cases import seed_library  # noqa: E402
from tier2.runs.loop.addons.library import RunToolChecks  # noqa: E402
from tier2.settings.loader import Settings, load_security  # noqa: E402
from tier2.store.embedded import redis_url  # noqa: E402
from tier2.store.keys import Keys  # noqa: E402
from tier2.testing import ScriptedChatModel, tool_results  # noqa: E402
from tier2.tools import ToolResults  # noqa: E402
from tier2.validators import ValidationRunner  # noqa: E402
from tier2.validators.mutants import CONTRACT_MUTANTS  # noqa: E402

BRIEFS = ["a potion shop tycoon where I brew potions from herbs and sell them to adventurers",
          "a blacksmith shop: forge swords from iron and sell them to knights",
          "a flower stall: grow tulips and roses and sell bouquets at the market"]


def _last(messages: list[Msg]) -> tuple[str, str]:
    name, text = "", ""
    for m in messages:
        for block in m.get_content_blocks("tool_result"):
            name = block.name
            text = "".join(getattr(b, "text", "") for b in block.output) if isinstance(block.output, list) \
                else str(block.output)
    return name, text


class Tally:
    """What the scripted writer was asked: calls, tokens (characters / 4, as the scripted model reports them), and
    how many calls it spent repairing after it read a failing check."""

    def __init__(self) -> None:
        self.calls = self.tokens = self.repair_calls = 0
        self.saw_failure = False

    def add(self, messages: list[Msg], blocks: list[TextBlock | ToolCallBlock]) -> list[TextBlock | ToolCallBlock]:
        chars_in = sum(len(m.get_text_content() or "") for m in messages)
        chars_out = sum(len(b.text) if isinstance(b, TextBlock) else len(b.input) for b in blocks)
        self.calls += 1
        self.tokens += max(1, chars_in // 4) + max(1, chars_out // 4)
        self.repair_calls += self.saw_failure
        return blocks


def _writes(messages: list[Msg]) -> int:
    return sum(1 for m in messages for b in m.get_content_blocks("tool_result") if b.name == "Write")


def changing_writer(project: Path, originals: dict[str, str], defective: dict[str, str], tally: Tally):
    """A writer that checks the working game, makes a change that carries the defect, checks again, and — when a
    check fails — repairs it the cheapest way a model could: re-read the broken files, write them back, check."""
    files = sorted(originals)

    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        return tally.add(messages, answer(messages))

    def calls(name: str, contents: dict[str, str] | None = None) -> list[TextBlock | ToolCallBlock]:
        n = tool_results_count[0]
        return [ToolCallBlock(id=f"{name[0]}{n}-{i}", name=name, input=json.dumps(
            {"file_path": str(project / r), **({"content": contents[r]} if contents else {})}))
            for i, r in enumerate(files)]

    tool_results_count = [0]

    def answer(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results_count[0] = tool_results(messages)
        name, text = _last(messages)
        failed = name in ("Build", "RunGame") and "FAILED" in text
        tally.saw_failure = tally.saw_failure or (failed and _writes(messages) > 0)
        if done == 0 or name == "Write":
            return [ToolCallBlock(id=f"b{done}", name="Build", input="{}")]
        if name == "Build" and text.startswith("BUILD OK"):
            return [ToolCallBlock(id=f"r{done}", name="RunGame", input="{}")]
        if name == "RunGame" and "PASSED" in text and _writes(messages) == 0:
            return calls("Read")  # the game works: now the change (it carries the defect)
        if name == "Read":
            return calls("Write", defective if _writes(messages) == 0 else originals)
        if failed:
            return calls("Read")
        return [TextBlock(text="done" if "PASSED" in text else "STOP: cannot fix")]
    return script


async def scripted_case(rt: Any, game: Path, work: Path, defect: SeedDefect, library_on: bool) -> dict[str, Any]:
    project = work / f"{defect.name}-{'on' if library_on else 'off'}"
    scratch = work / f"{defect.name}-{'on' if library_on else 'off'}-defect"
    for dest in (project, scratch):
        shutil.copytree(game, dest, ignore=shutil.ignore_patterns("dist", "reports"))
    before = read_files(scratch)
    try:
        defect.apply(scratch)
    except Exception as exc:  # noqa: BLE001 - the operator does not apply to this game
        return {"defect": defect.name, "status": f"not applicable: {exc}"[:120]}
    after = read_files(scratch)
    changed = sorted(r for r in set(before) | set(after) if before.get(r) != after.get(r))
    tally = Tally()
    model = ScriptedChatModel(changing_writer(project, {r: before.get(r, "") for r in changed},
                                              {r: after.get(r, "") for r in changed}, tally))
    policy = rt.policies.snapshot()
    results, events = ToolResults(), []

    async def emit(event: Any) -> None:
        events.append(event)
    layers = RunLayers()
    checks = None
    if library_on:
        run = LibraryRun(rt.cases, run_id=f"r-bench-{uuid.uuid4().hex[:8]}", tenant="bench", pack=rt.pack,
                         project=project, brief="bench", policy=policy.learning, emit=emit,
                         usage=lambda: (tally.calls, tally.tokens))
        checks = RunToolChecks(results)
        layers.learning = [CaseLibraryMiddleware(run, checks)]
    handle = await build_writer(project_id=f"p-{project.name}", project=project, pack=rt.pack, policy=policy,
                                model=model, runner=ValidationRunner(rt.pool, rt.pack, policy),
                                reports_dir=project / ".tier2" / "reports", home=work / f"home-{project.name}",
                                results=results, layers=layers)
    if checks is not None:
        checks.ctx = handle.tools
    try:
        async for _ in handle.agent.reply_stream(UserMsg("user", "check the game and fix what fails")):
            pass
    finally:
        await handle.workspace.close()
    model.acknowledge()
    last = results.last_check()
    fixed = [e for e in events if isinstance(e, CaseHit) and e.action == "applied" and e.fixed]
    return {"defect": defect.name, "passed": bool(last and last.report.passed), "model_calls": tally.calls,
            "tokens": tally.tokens, "library_fixed": len(fixed), "repair_calls": tally.repair_calls}


async def offline_runs(rt: Any, config: Path, work: Path, briefs: list[str], library_on: bool) -> list[dict]:
    (config / "policy" / "zz-bench.yaml").write_text("" if library_on else "learning: {cases: false}\n")
    rows = []
    for i, brief in enumerate(briefs):
        out = await execute_run(rt, RunRequest(brief=brief, out_dir=work / f"offline-{library_on}-{i}",
                                               model="offline-faulty"))
        events = [e for _, e in await rt.store.read_events(out.run_id, after=0, count=10_000)]
        usage = out.delivery.get("usage") or {}
        rows.append({"brief": brief[:40], "status": out.status, "model_calls": usage.get("model_calls"),
                     "tokens": (usage.get("input_tokens") or 0) + (usage.get("output_tokens") or 0),
                     "library_fixed": sum(1 for e in events if isinstance(e, CaseHit) and e.action == "applied"
                                          and e.fixed)})
    return rows


async def main_async(args: argparse.Namespace) -> dict[str, Any]:
    tmp = Path(tempfile.mkdtemp(prefix="tier2-bench-cases-"))
    config = tmp / "config"
    shutil.copytree(ROOT / "config", config)
    settings = Settings(workspaces=tmp / "ws", config_dir=config, redis_url=None)
    security = load_security(config)
    report: dict[str, Any] = {}
    with redis_url(None, tmp / "redis", security.redis.executables, False, security.redis.start_timeout_s) as url:
        async with open_runtime(settings, url, Keys(prefix="bench-cases")) as rt:
            mutants = [SeedDefect(m.defect, m.apply) for m in CONTRACT_MUTANTS]
            only = args.only.split(",") if args.only else None
            catalogue = [d for d in [*mutants, *TAXONOMY_DEFECTS] if only is None or d.name in only]
            seeded = await seed_library(rt, mutants, [args.genre] if args.genre else None, only,
                                        progress=lambda r: print(f"seed {r.genre} {r.defect}: {r.status}",
                                                                 file=sys.stderr))
            report["seed"] = {"defects": len(seeded), "fixed_by_fixer": sum(r.status == "fixed_by_fixer"
                                                                           for r in seeded),
                              "fixed_by_repair": sum(r.status == "fixed_by_repair" for r in seeded)}
            briefs = BRIEFS[:args.briefs]
            off = await offline_runs(rt, config, tmp, briefs, library_on=False)
            on = await offline_runs(rt, config, tmp, briefs, library_on=True)
            report["offline"] = {"off": off, "on": on}
            game = tmp / "offline-False-0"  # a delivered offline game (library off): not the seeded template
            rows = []
            for defect in catalogue:
                a = await scripted_case(rt, game, tmp / "scripted", defect, library_on=False)
                b = await scripted_case(rt, game, tmp / "scripted", defect, library_on=True)
                print(f"scripted {defect.name}: off {a} | on {b}", file=sys.stderr)
                rows.append({"defect": defect.name, "off": a, "on": b})
            report["scripted"] = rows
    if not args.keep:
        shutil.rmtree(tmp, ignore_errors=True)
    return report


def _sum(rows: list[dict], key: str) -> int:
    return sum(int(r.get(key) or 0) for r in rows)


def summary(report: dict[str, Any]) -> list[str]:
    off, on = report["offline"]["off"], report["offline"]["on"]
    lines = [f"seed: {report['seed']['defects']} defects, {report['seed']['fixed_by_fixer']} recorded with a fixer, "
             f"{report['seed']['fixed_by_repair']} as advice (diff)",
             f"offline-faulty x{len(off)}: delivered off {sum(r['status'] == 'delivered' for r in off)}, on "
             f"{sum(r['status'] == 'delivered' for r in on)}; faults fixed by the library {_sum(on, 'library_fixed')}"
             f" of {2 * len(on)}; model calls {_sum(off, 'model_calls')} -> {_sum(on, 'model_calls')} "
             f"({_sum(off, 'model_calls') - _sum(on, 'model_calls')} saved), tokens {_sum(off, 'tokens')} -> "
             f"{_sum(on, 'tokens')} ({_sum(off, 'tokens') - _sum(on, 'tokens')} saved)"]
    rows = [r for r in report["scripted"] if "model_calls" in r["off"] and "model_calls" in r["on"]]
    no_call = [r for r in rows if r["on"]["passed"] and r["on"]["repair_calls"] == 0 and r["on"]["library_fixed"]]

    def total(arm: str, key: str) -> int:
        return sum(int(r[arm][key]) for r in rows)
    lines.append(f"scripted, mutation corpus: {len(no_call)} of {len(rows)} defects fixed from the library with no "
                 f"model call; passed off {total('off', 'passed')}, on {total('on', 'passed')}; model calls "
                 f"{total('off', 'model_calls')} -> {total('on', 'model_calls')}, tokens {total('off', 'tokens')} -> "
                 f"{total('on', 'tokens')}")
    for r in report["scripted"]:
        off, on = r["off"], r["on"]
        if "model_calls" not in on:
            lines.append(f"  {r['defect']:<28} {on.get('status')}")
            continue
        lines.append(f"  {r['defect']:<28} off: {off['model_calls']} calls {'pass' if off['passed'] else 'FAIL'} | "
                     f"on: {on['model_calls']} calls, library fixed {on['library_fixed']}, "
                     f"{'pass' if on['passed'] else 'FAIL'}")
    return lines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--genre", help="seed this genre template only (default: every genre)")
    ap.add_argument("--only", help="only these defects (comma-separated)")
    ap.add_argument("--briefs", type=int, default=3, help="offline-faulty runs per arm (default 3)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = ap.parse_args()
    report = asyncio.run(main_async(args))
    print(json.dumps(report, indent=2) if args.json else "\n".join(summary(report)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

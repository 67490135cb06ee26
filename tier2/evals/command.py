"""``tier2 eval SUITE [--model ROUTE ...] [--concurrency N] [--budget-usd X] [--repeat K] [--out DIR] [--url URL]``:
the sub-parser, the handler and the table it prints (docs/eval.md).

Exit codes: 0 every run ended (whatever its outcome), 1 a run's outcome was dishonest for its expectation (a silent
substitute, a refusal expected and a build delivered...), 2 bad input (an invalid suite, an unknown route, an OUT
holding another eval).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from tier2.client.args import positive, usd
from tier2.errors import BadInput
from tier2.evals.report import write_report
from tier2.evals.results import EvalResults, ModelSummary, Percentiles, RunRow
from tier2.evals.runner import EvalPlan, run_eval
from tier2.evals.subcommands import route_subcommands
from tier2.evals.suite import Suite, load_suite, suite_path

__all__ = ["add_eval_command", "cmd_eval", "only_briefs", "print_table"]


def add_eval_command(sub: Any) -> None:
    e = sub.add_parser("eval", help="run an eval suite (evals/<suite>/suite.yaml) and write OUT/results.json")
    e.add_argument("suite", help="a suite directory (evals/mixed) or its suite.yaml")
    e.add_argument("--model", action="append", metavar="ROUTE",
                   help="model route (repeatable: one table per model; default: the policy's writer route)")
    e.add_argument("--concurrency", type=positive, default=1, help="briefs at a time (default 1)")
    e.add_argument("--budget-usd", type=usd, metavar="X", help="USD cap of each run (default: the policy's)")
    e.add_argument("--repeat", type=positive, default=1, metavar="K", help="runs per brief and model (default 1)")
    e.add_argument("--out", help="results directory (default: workspaces/evals/<suite>-<version>); an interrupted "
                   "eval started again with the same OUT resumes")
    e.add_argument("--url", help="run through this service (key: TIER2_API_KEY) instead of locally")
    e.add_argument("--briefs", metavar="ID[,ID...]", help="only these briefs of the suite (a CI-sized or a "
                   "focused eval: its suite hash is the subset's, so compare pairs it only with the same subset)")
    e.set_defaults(fn=cmd_eval)
    route_subcommands(sub, e)  # tier2 eval compare A B | report OUT (tier2/evals/subcommands.py)


def _pack_genres(settings: Any, pack_id: str) -> set[str]:
    from tier2.packs import load_pack

    pack = load_pack(settings.packs_dir, pack_id, settings.skills_dir)
    return set(pack.genres) | set(pack.manifest.unsupported_genres)


def _progress(row: RunRow, done: int, total: int) -> None:
    step = f"#{row.follow_up}" if row.follow_up else ""
    mark = "pass" if row.passed else ("FAIL" if row.honest is False else "miss")
    print(f"[{done}/{total}] {mark} {row.brief_id}{step} r{row.repeat} {row.model}: {row.outcome} "
          f"({row.genre_built or '-'}, content {row.content.verified}/{row.content.expected}, "
          f"{row.wall_s:.1f} s, ${row.cost_usd:.4f}) {'' if row.passed else row.signature or ''}",
          file=sys.stderr, flush=True)


def cmd_eval(args: argparse.Namespace) -> int:
    from tier2.settings.loader import Settings, load_security

    if not getattr(args, "verbose", False):  # AgentScope's own logger ("as") says INFO per skill copied; a filter,
        # not a level: importing agentscope later sets the logger's level again
        logging.getLogger("as").addFilter(lambda record: record.levelno >= logging.WARNING)
    settings = Settings()
    file = suite_path(args.suite)
    suite = only_briefs(load_suite(file, _pack_genres(settings, _pack_of(file, settings))), args.briefs)
    plan = EvalPlan(models=tuple(args.model) if args.model else (None,), repeat=args.repeat,
                    concurrency=args.concurrency)
    out = Path(args.out).resolve() if args.out else settings.workspaces / "evals" / f"{suite.id}-{suite.version}"
    budget = {"usd": args.budget_usd} if args.budget_usd else {}
    t0 = time.monotonic()
    if args.url:
        from tier2.client.api import ServiceClient
        from tier2.evals.remote import RemoteBackend

        with ServiceClient(args.url) as api:
            backend = RemoteBackend(api, budget, suite.pack or None)
            results = asyncio.run(run_eval(backend, suite, file, plan, out, _progress))
    else:
        from tier2.evals.local import local_backend
        from tier2.settings.policy import BudgetOverride
        from tier2.store.embedded import redis_url

        _check_routes(settings, plan)
        security = load_security(settings.config_dir)

        async def local(url: str) -> EvalResults:
            async with local_backend(settings, url, concurrency=plan.concurrency,
                                     budget=BudgetOverride(**budget) if budget else None,
                                     pack=suite.pack or None) as backend:
                return await run_eval(backend, suite, file, plan, out, _progress)

        with redis_url(settings.redis_url, settings.workspaces / ".redis", security.redis.executables,
                       security.redis.appendonly, security.redis.start_timeout_s) as url:
            results = asyncio.run(local(url))
    print_table(results, sys.stdout)
    print(f"results: {out / 'results.json'} ({time.monotonic() - t0:.0f} s)")
    print(f"report: {write_report(out, results)}")  # tier2/evals/report.py
    dishonest = [r for r in results.runs if r.honest is False]
    return 1 if dishonest else 0


def only_briefs(suite: Suite, wanted: str | None) -> Suite:
    """The suite with only the briefs named (comma-separated ids, in the suite's order); unknown ids are bad input."""
    if not wanted:
        return suite
    ids = [w.strip() for w in wanted.split(",") if w.strip()]
    unknown = sorted(set(ids) - {b.id for b in suite.briefs})
    if not ids or unknown:
        raise BadInput(f"--briefs: {', '.join(unknown) or 'no id'} not in suite {suite.id} "
                       f"(its briefs: {', '.join(b.id for b in suite.briefs[:12])}...)")
    return suite.model_copy(update={"briefs": tuple(b for b in suite.briefs if b.id in set(ids))})


def _pack_of(file: Path, settings: Any) -> str:
    """The pack the suite names, else the configured one (`Settings.pack_id`)."""
    import yaml

    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        data = None  # load_suite names the problem
    pack = data.get("pack") if isinstance(data, dict) else None
    return pack if isinstance(pack, str) and pack.isidentifier() else str(settings.pack_id)


def _check_routes(settings: Any, plan: EvalPlan) -> None:
    """Every --model route exists (a typo is exit 2 before anything runs)."""
    from tier2.settings.loader import PolicyStore, load_security

    policy = PolicyStore(settings.config_dir, load_security(settings.config_dir)).snapshot()
    for m in plan.models:
        policy.route(m)


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:.0f}%"


def _usd(p: Percentiles) -> str:
    return "-" if p.p50 is None else f"${p.p50:.4f}/${p.p95:.4f}"


def _secs(p: Percentiles) -> str:
    return "-" if p.p50 is None else f"{p.p50:.1f}/{p.p95:.1f}s"


def print_table(results: EvalResults, out: TextIO) -> None:
    s = results.suite
    print(f"suite {s.id} v{s.version} ({s.hash[:12]}) · {results.where} · policy {results.policy_hash} · "
          f"commit {(results.tier2_commit or '?')[:10]} · repeat {results.repeat}", file=out)
    for model, m in results.summary.items():
        _model_table(model, m, out)


def _model_table(model: str, m: ModelSummary, out: TextIO) -> None:
    pr = m.pass_rate
    print(f"\nmodel {model}: {m.runs} runs, {m.delivered} delivered, ${m.cost_usd:.4f} in all", file=out)
    print(f"  build health {_pct(m.build_health)} · intent {_pct(m.intent)} ({m.intent_verified}/{m.intent_expected})"
          f" · honest {_pct(m.honest_rate)} · pass {_pct(pr.rate)} [{_pct(pr.lo)}, {_pct(pr.hi)}] (n={pr.n}, k={pr.k})",
          file=out)
    print(f"  cost per delivered p50/p95 {_usd(m.cost_per_delivered)} · time p50/p95 {_secs(m.time)}", file=out)
    print(f"  {'genre':<14}{'runs':>5}{'deliv':>6}{'L1':>6}{'intent':>8}{'pass':>6}  {'$/delivered p50/p95':<22}"
          f"{'time p50/p95':<14}", file=out)
    for g, row in m.per_genre.items():
        print(f"  {g:<14}{row.runs:>5}{row.delivered:>6}{_pct(row.build_health):>6}{_pct(row.intent):>8}"
              f"{_pct(row.pass_rate):>6}  {_usd(row.cost_per_delivered):<22}{_secs(row.time):<14}", file=out)
    if m.failure_signatures:
        print("  failure signatures:", file=out)
        for sig in m.failure_signatures[:10]:
            print(f"  {sig.count:>4} × {sig.signature[:110]}  ({', '.join(sig.briefs[:5])})", file=out)


def loaded(arg: str) -> Suite:  # for tests and tools: the suite at ``arg`` with the pack's genres
    from tier2.settings.loader import Settings

    file = suite_path(arg)
    settings = Settings()
    return load_suite(file, _pack_genres(settings, _pack_of(file, settings)))

"""``tier2 runs trajectory RUN_ID``: every model, tool and case-library call of a run, with totals per agent.

The service keeps each call (`GET /v1/runs/{id}/trajectory`); this command reads every page and adds up what each
agent of the run (writer, designers, explorer, reviewer, L3 scorer) called and spent, then what the debug case
library did instead of the model.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from typing import Any

from tier2.client.api import ServiceClient

__all__ = ["agent_totals", "cmd_trajectory", "trajectory_lines"]

_PAGE = 1000
_MAX_CALLS = 200_000  # a run has far fewer (breakers cap its steps): a guard against a page loop that never ends


def fetch_all(api: ServiceClient, run_id: str, kind: str | None) -> dict[str, Any]:
    """Every page of the run's trajectory: the first page's summary and all calls in order."""
    first = api.trajectory(run_id, kind, 0, _PAGE)
    calls = list(first.get("calls") or [])
    total = int(first.get("total") or 0)
    while len(calls) < min(total, _MAX_CALLS):
        page = api.trajectory(run_id, kind, len(calls), _PAGE).get("calls") or []
        if not page:
            break
        calls += page
    return {**first, "calls": calls, "offset": 0, "limit": len(calls)}


def agent_totals(calls: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per agent: model calls, tokens, cost (None when some call had no price), tool calls, case hits."""
    out: dict[str, dict[str, Any]] = defaultdict(lambda: {"model_calls": 0, "input_tokens": 0, "output_tokens": 0,
                                                          "cost_usd": 0.0, "priced": True, "tool_calls": 0,
                                                          "case_hits": 0, "ms": 0.0})
    for c in calls:
        t = out[str(c.get("agent") or "?")]
        t["ms"] += float(c.get("duration_ms") or 0)
        if c.get("kind") == "model":
            t["model_calls"] += 1
            t["input_tokens"] += int(c.get("input_tokens") or 0)
            t["output_tokens"] += int(c.get("output_tokens") or 0)
            if c.get("cost_usd") is None:
                t["priced"] = False
            else:
                t["cost_usd"] += float(c["cost_usd"])
        elif c.get("kind") == "tool":
            t["tool_calls"] += 1
        elif c.get("kind") == "case":
            t["case_hits"] += 1
    for t in out.values():
        t["cost_usd"] = round(t["cost_usd"], 6) if t.pop("priced") else None
    return dict(out)


def _call_line(c: dict[str, Any]) -> str:
    step = c.get("step")
    head = f"{step if step is not None else '-':>4}  {str(c.get('agent') or '?'):<12} {c.get('kind', '?'):<5}"
    ms = f"{float(c.get('duration_ms') or 0):>8.0f} ms"
    if c.get("kind") == "model":
        cost = c.get("cost_usd")
        what = (f"{c.get('model')}  {c.get('input_tokens', 0)}+{c.get('output_tokens', 0)} tok  "
                f"{'$' + format(cost, '.4f') if cost is not None else 'unpriced'}")
    elif c.get("kind") == "tool":
        what = f"{c.get('tool')}({str(c.get('args_summary') or '')[:60]})"
    else:
        what = (f"library {c.get('action')} {c.get('fixer') or ''} for {c.get('gate')}"
                f"{' → fixed' if c.get('fixed') else ''}, replaced {c.get('replaced_model_calls', 0)} model calls")
    state = c.get("state")
    return f"{head} {ms}  {what}" + (f"  [{state}]" if state and state != "success" else "")


def trajectory_lines(doc: dict[str, Any], calls_too: bool) -> list[str]:
    calls = list(doc.get("calls") or [])
    lines = [f"run {doc.get('run_id')}: {len(calls)} calls"]
    if calls_too:
        lines += ["STEP  AGENT        KIND        TIME  CALL", *(_call_line(c) for c in calls)]
    totals = agent_totals(calls)
    w = max([5, *(len(a) for a in totals)])
    lines.append(f"{'AGENT':<{w}}  MODEL CALLS   TOKENS IN+OUT        COST   TOOL CALLS   CASE HITS")
    for agent, t in sorted(totals.items()):
        cost = f"${t['cost_usd']:.4f}" if t["cost_usd"] is not None else "unpriced"
        lines.append(f"{agent:<{w}}  {t['model_calls']:>11}   {t['input_tokens']:>7}+{t['output_tokens']:<7} "
                     f"{cost:>10}   {t['tool_calls']:>10}   {t['case_hits']:>9}")
    library = (doc.get("summary") or {}).get("library")
    if library:
        lines.append(f"library: {library.get('hits', 0)} hits, {library.get('fixed', 0)} fixed with no model call, "
                     f"replaced {library.get('model_calls_replaced', 0)} model calls and "
                     f"{library.get('tokens_replaced', 0)} tokens")
    return lines


def cmd_trajectory(args: argparse.Namespace) -> int:
    with ServiceClient(args.url) as api:
        doc = fetch_all(api, args.run_id, args.kind)
    if args.json:
        json.dump({**doc, "agents": agent_totals(doc["calls"])}, sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        print("\n".join(trajectory_lines(doc, args.calls)))
    return 0

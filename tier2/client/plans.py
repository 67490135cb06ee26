"""``tier2 runs plan THREAD_ID [--version N]``: the goal versions of a thread and one version's plan diff.

Every follow-up in a thread makes goal version n+1 with its plan diff (`GET /v1/threads/{id}/plans`); this command
lists them (author, how each ended, requirements added/changed/removed, plan nodes invalidated/reused) and then
shows one version — ``--version N``, else the newest (`GET /v1/threads/{id}/plan?version=N`): its goal, the
requirements diff, the invalidated nodes with the reason, the reused nodes, the node table, the metrics, the end.
``--json``: the API's answer as it is (the list, or with ``--version`` that version).
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from tier2.client.api import ServiceClient

__all__ = ["cmd_plan", "plan_lines"]


def _short(text: Any, width: int) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _when(at: Any) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(at)) if isinstance(at, int | float) else "-"


def _version_lines(doc: dict[str, Any]) -> list[str]:
    goal = doc.get("goal") or {}
    diff = doc.get("diff") or {}
    req = diff.get("requirements") or {}
    lines = [f"goal v{doc.get('goal_version')} ({goal.get('author')}): {goal.get('text')}",
             f"run {doc.get('run_id')} · plan version {doc.get('plan_version')} · {_when(doc.get('at'))}",
             "requirements:"]
    for sign, key in (("+", "added"), ("~", "changed"), ("-", "removed")):
        for r in req.get(key) or []:
            what = f"; changed: {', '.join(r['fields'])}" if key == "changed" and r.get("fields") else ""
            was = f"  (was: {r.get('was')}{what})" if key == "changed" and r.get("was") is not None else ""
            lines.append(f"  {sign} {r.get('id')}  {r.get('text', '')}{was}")
    if not any(req.get(k) for k in ("added", "changed", "removed")):
        lines.append("  (unchanged)")
    invalidated: dict[str, Any] = diff.get("invalidated") or {}
    reused: list[str] = list(diff.get("reused") or [])
    lines.append(f"invalidated ({len(invalidated)}):" + ("" if invalidated else " none"))
    lines += [f"  {node}: {why}" for node, why in invalidated.items()]
    lines.append(f"reused ({len(reused)}): {', '.join(reused) if reused else 'none'}")
    nodes: dict[str, Any] = (doc.get("plan") or {}).get("nodes") or {}
    if nodes:
        w = max(len(n) for n in nodes)
        lines.append(f"nodes ({len(nodes)}):")
        for node, n in nodes.items():
            n = n if isinstance(n, dict) else {}
            how = "reused" if node in reused else "re-run" if node in invalidated else ""
            lines.append(f"  {node:<{w}}  {str(n.get('kind') or '-'):<12} {str(n.get('status') or '-'):<12} {how}"
                         .rstrip())
    metrics: dict[str, Any] = doc.get("metrics") or {}
    if metrics:
        shown = [f"{k} {' '.join(f'{r} {c}' for r, c in v.items()) if isinstance(v, dict) else v}"
                 for k, v in metrics.items()]
        lines.append("metrics: " + " · ".join(shown))
    end = doc.get("end")
    if isinstance(end, dict):
        lines.append(f"end: {end.get('kind')} — {end.get('reason') or '-'}")
        lines += [f"  option: {o}" for o in end.get("options") or []]
    else:
        lines.append("end: (the version's run has not ended)")
    return lines


def plan_lines(listed: dict[str, Any], version: dict[str, Any] | None) -> list[str]:
    """The goal versions table, then (``version``: one version's document) its diff, nodes, metrics and end."""
    versions = list(listed.get("versions") or [])
    lines = [f"thread {listed.get('thread_id')} · project {listed.get('project_id')} · "
             f"{len(versions)} goal version(s)",
             f"{'GOAL':<6}{'PLAN':>5}  {'AUTHOR':<9} {'END':<11}{'+REQ':>5}{'~REQ':>5}{'-REQ':>5}{'INVAL':>6}"
             f"{'REUSED':>7}  {'RUN':<20} TEXT"]
    for v in versions:
        lines.append(f"{'v' + str(v.get('goal_version')):<6}{v.get('plan_version', 0):>5}  {v.get('author', ''):<9} "
                     f"{v.get('end') or '-':<11}{v.get('added', 0):>5}{v.get('changed', 0):>5}{v.get('removed', 0):>5}"
                     f"{v.get('invalidated', 0):>6}{v.get('reused', 0):>7}  {v.get('run_id', ''):<20} "
                     f"{_short(v.get('text'), 60)}")
    if not versions:
        lines.append("(no goal version stored yet: the thread's first run has not planned)")
    if version is not None:
        lines += ["", *_version_lines(version)]
    return lines


def cmd_plan(args: argparse.Namespace) -> int:
    with ServiceClient(args.url) as api:
        if args.json:
            doc = api.thread_plan(args.thread_id, args.version) if args.version else api.thread_plans(args.thread_id)
            print(json.dumps(doc, indent=2, ensure_ascii=False))
            return 0
        listed = api.thread_plans(args.thread_id)
        version = api.thread_plan(args.thread_id, args.version) if args.version or listed.get("versions") else None
    print("\n".join(plan_lines(listed, version)))
    return 0

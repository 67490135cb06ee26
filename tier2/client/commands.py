"""The service commands of the ``tier2`` command line: ``tier2 submit BRIEF`` and ``tier2 runs
list|show|events|cancel|delivery|trajectory|plan|export``, talking to a running service (`tier2.client.api`).

Output: people get tables, summaries and the live progress display (`tier2.client.display`; plain lines when
stdout is not a terminal); ``--json`` gives machines the API's JSON as it is — one document, or for ``runs events``
one JSON object per line (``{"id", "event", "data"}``). Exit codes: 0 success (a followed run delivered, or paused
after design with ``--design-only``), 1 a followed run ended failed or stopped, 2 an API error (the service's
``code``, status and message are printed) or an unreachable service.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from tier2.client.api import DEFAULT_URL, ServiceClient
from tier2.client.args import budget_options, non_negative, positive, positive_seconds, read_brief, usd
from tier2.client.display import ProgressDisplay
from tier2.client.export import cmd_export
from tier2.client.plans import cmd_plan
from tier2.client.trajectory import cmd_trajectory
from tier2.errors import BadInput

__all__ = ["add_service_commands"]

_STATUSES = ("queued", "running", "delivered", "failed", "stopped")


def _dump(doc: Any) -> None:
    print(json.dumps(doc, indent=2, ensure_ascii=False))


def _client(args: argparse.Namespace) -> ServiceClient:
    return ServiceClient(args.url)


def _age(created: Any, now: float) -> str:
    if not isinstance(created, int | float):
        return "-"
    s = max(0.0, now - created)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s >= size:
            return f"{int(s // size)}{unit}"
    return f"{int(s)}s"


def _usd(value: Any) -> str:
    return f"${value:.4f}" if isinstance(value, int | float) else "-"


def _one_line(text: Any, width: int) -> str:
    flat = " ".join(str(text or "").split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


# -- runs list / show / cancel / delivery ------------------------------------------------------------------------


def cmd_list(args: argparse.Namespace) -> int:
    with _client(args) as api:
        page = api.list_runs(args.status, args.search, args.limit, args.cursor)
    if args.json:
        _dump(page)
        return 0
    now, runs = time.time(), page.get("runs") or []
    print(f"{'RUN':<20} {'STATUS':<10} {'PHASE':<10} {'COST':>9} {'AGE':>5}  BRIEF")
    for r in runs:
        cost = r.get("cost_usd", (r.get("usage") or {}).get("cost_usd"))
        print(f"{r.get('run_id', ''):<20} {r.get('status', ''):<10} {r.get('phase', ''):<10} {_usd(cost):>9} "
              f"{_age(r.get('created_at'), now):>5}  {_one_line(r.get('brief'), 60)}")
    if not runs:
        print("(no runs)")
    if page.get("next_cursor"):
        print(f"more: tier2 runs list --cursor {page['next_cursor']}")
    return 0


def _show_lines(run: dict[str, Any]) -> list[str]:
    usage = run.get("usage") or {}
    budget = usage.get("budget") or {}
    model = run.get("model") or {}
    lines = [f"run:        {run.get('run_id')}",
             f"status:     {run.get('status')}" + (f" ({run['stop_reason']})" if run.get("stop_reason") else ""),
             f"phase:      {run.get('phase')}" + (" · cancel requested" if run.get("cancel_requested") else ""),
             f"brief:      {_one_line(run.get('brief'), 100)}",
             f"project:    {run.get('project_id')} · thread {run.get('thread_id')}",
             f"model:      {model.get('route') or run.get('model_route') or '(default)'}"
             + (f" ({model['model']})" if model.get("model") else ""),
             f"cost:       {_usd(usage.get('cost_usd'))}" + (f" of ${budget['cap_usd']:g}" if budget.get("cap_usd")
                                                             else "")
             + (f" · {usage.get('model_calls')} model calls" if usage.get("model_calls") is not None else ""),
             f"policy:     {run.get('policy_hash') or run.get('policy') or '-'} · security/build "
             f"{run.get('security_hash') or '-'}"]
    if run.get("completion"):
        lines.append(f"design:     {run['completion'].get('summary')}")
    for a in run.get("attempts") or []:
        lines.append(f"attempt {a.get('attempt')}:  {a.get('worker') or '-'} · {a.get('outcome') or 'running'}"
                     + (f" (resumed after checkpoint {a['resumed_from']})" if a.get("resumed_from") else ""))
    links = run.get("links") or {}
    if run.get("status") == "delivered" and links.get("game"):
        lines.append(f"play:       {links['game']}")
    return lines


def cmd_show(args: argparse.Namespace) -> int:
    with _client(args) as api:
        run = api.get_run(args.run_id)
        if args.json:
            _dump(run)
            return 0
        for line in _show_lines({**run, "links": {k: api.absolute(v) for k, v in (run.get("links") or {}).items()}}):
            print(line)
    return 0


def cmd_cancel(args: argparse.Namespace) -> int:
    with _client(args) as api:
        answer = api.cancel(args.run_id)
    if args.json:
        _dump(answer)
    else:
        print(f"{answer.get('run_id')}: cancel requested; the run ends `stopped` (follow: tier2 runs events "
              f"{answer.get('run_id')})")
    return 0


def _delivery_lines(api: ServiceClient, d: dict[str, Any]) -> list[str]:
    verification = d.get("verification") or {}
    failed = [g.get("id") for g in verification.get("gates") or [] if not g.get("passed")]
    usage = d.get("usage") or {}
    lines = [f"status:     {d.get('status')}" + (f" ({d['stop_reason']})" if d.get("stop_reason") else ""),
             f"verified:   {'yes' if verification.get('passed') else 'no'}"
             + (f" · failed: {', '.join(str(f) for f in failed)}" if failed else ""),
             f"play:       {api.absolute((d.get('preview') or {}).get('url')) or '-'}",
             f"screenshot: {api.absolute(d.get('screenshot_url')) or '-'}",
             f"delivery:   {api.url}/v1/runs/{d.get('run_id')}/delivery",
             f"cost:       {_usd(usage.get('cost_usd'))} · {usage.get('model_calls', '-')} model calls",
             f"policy:     {d.get('policy_hash') or '-'} · security/build {d.get('security_hash') or '-'}"]
    done = d.get("completion")
    if isinstance(done, dict) and done.get("summary"):
        lines.append(f"design:     {done['summary']}")
    return lines


def cmd_delivery(args: argparse.Namespace) -> int:
    with _client(args) as api:
        delivery = api.delivery(args.run_id)
        if args.json:
            _dump(delivery)
        else:
            print("\n".join(_delivery_lines(api, delivery)))
    return 0


# -- events and submit: follow a run -------------------------------------------------------------------------------


def _follow(api: ServiceClient, run_id: str, after: int, as_json: bool, out: Any = None, t0: float | None = None,
            budget_usd: float | None = None) -> tuple[str, str]:
    """Follow the run's events to its end (resumed across drops): the display, or one JSON object per line.
    Returns the run's terminal status and stop reason."""
    end = ("", "")

    def seen(frame_event: str, data: Any) -> None:
        nonlocal end
        if frame_event == "run_finished" and isinstance(data, dict):
            end = (str(data.get("status", "")), str(data.get("stop_reason", "")))

    if as_json:
        for seq, frame in api.events(run_id, after):
            data = _json_or_text(frame.data)
            print(json.dumps({"id": seq, "event": frame.event, "data": data}, ensure_ascii=False), flush=True)
            seen(frame.event, data)
        return end
    with ProgressDisplay(out or sys.stdout, t0=t0, budget_usd=budget_usd) as display:
        for seq, frame in api.events(run_id, after):
            data = _json_or_text(frame.data)
            if isinstance(data, dict):
                display.feed_public(seq, data)
            seen(frame.event, data)
    return end


def _json_or_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _exit_code(status: str, reason: str, design_only: bool = False) -> int:
    if status == "delivered" or (design_only and status == "stopped" and reason.startswith("paused after design")):
        return 0
    return 1


def cmd_events(args: argparse.Namespace) -> int:
    with _client(args) as api:
        run = api.get_run(args.run_id)  # a wrong key or id fails here, clearly, before any streaming
        budget = ((run.get("usage") or {}).get("budget") or {}).get("cap_usd") or \
            ((run.get("options") or {}).get("budget") or {}).get("usd")
        t0 = run.get("created_at") if args.after else None
        status, reason = _follow(api, args.run_id, args.after, args.json, t0=t0, budget_usd=budget)
        if not status:  # the stream ended before a run_finished after --after: the run says how it ended
            run = api.get_run(args.run_id)
            status, reason = str(run.get("status", "")), str(run.get("stop_reason", ""))
    return _exit_code(status, reason)


def cmd_submit(args: argparse.Namespace) -> int:
    brief = read_brief(args)
    if not brief.strip():
        raise BadInput("brief is empty: describe the game in a sentence or two")
    body: dict[str, Any] = {"brief": brief, **{k: v for k, v in {
        "model": args.model, "workspace": args.workspace, "pack": args.pack, "thread_id": args.thread,
        "project_id": args.project, "pause_after": "design" if args.design_only else None}.items() if v is not None}}
    budget = budget_options(args)["budget"]
    if budget:
        body["budget"] = budget
    with _client(args) as api:
        accepted = api.submit(body, args.idempotency_key)
        run_id = str(accepted["run_id"])
        if args.detach:
            if args.json:
                _dump(accepted)
            else:
                print(f"run {run_id} accepted (project {accepted.get('project_id')}, thread "
                      f"{accepted.get('thread_id')})\nfollow: tier2 runs events {run_id}")
            return 0
        if args.json:
            status, reason = _follow(api, run_id, 0, as_json=False, out=_Null(), budget_usd=args.budget_usd)
            _dump(api.delivery(run_id))
            return _exit_code(status, reason, args.design_only)
        print(f"run {run_id} accepted (project {accepted.get('project_id')})", flush=True)
        status, reason = _follow(api, run_id, 0, as_json=False, budget_usd=args.budget_usd)
        print("\n".join(_delivery_lines(api, api.delivery(run_id))))
    return _exit_code(status, reason, args.design_only)


class _Null:
    """A display target for ``submit --json``: stdout carries only the final JSON document."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        return None

    def isatty(self) -> bool:
        return False


# -- the parsers ---------------------------------------------------------------------------------------------------


def _service_args(p: argparse.ArgumentParser, json_help: str) -> None:
    p.add_argument("--url", help=f"the service (default: $TIER2_URL, else {DEFAULT_URL}); the key is $TIER2_API_KEY")
    p.add_argument("--json", action="store_true", help=json_help)


def add_service_commands(sub: Any) -> None:
    """Add ``submit`` and ``runs ...`` to the ``tier2`` parser's subcommands."""
    s = sub.add_parser("submit", help="submit a brief to a running service and follow the run live")
    s.add_argument("brief", nargs="?", default=None, help="the game brief ('-' reads stdin)")
    s.add_argument("--brief-file", help="read the brief from a UTF-8 file")
    s.add_argument("--model", help="model route (config/policy/models.yaml on the service)")
    s.add_argument("--budget-usd", type=usd, metavar="X", help="USD cap for this run (default: the service's policy)")
    s.add_argument("--budget-tokens", type=positive, metavar="N", help="input+output token cap for this run")
    s.add_argument("--deadline-s", type=positive_seconds, metavar="S", help="wall-clock limit of this run")
    s.add_argument("--workspace", choices=["local", "isolated", "docker"], help="workspace kind (within [sandbox])")
    s.add_argument("--pack", metavar="ID", help="capability pack (engine) to build with (default: the project's, "
                   "else the service's default)")
    s.add_argument("--design-only", action="store_true", help="stop after the design phase (exit 0 when valid)")
    s.add_argument("--thread", metavar="ID", help="a follow-up in this thread (same project, conversation continues)")
    s.add_argument("--project", metavar="ID", help="run on a project loaded with POST /v1/projects")
    s.add_argument("--idempotency-key", metavar="KEY", help="a retry with the same key and brief returns the same run")
    s.add_argument("--detach", action="store_true", help="print the accepted run and return without following it")
    _service_args(s, "print only JSON: the accepted run (--detach) or the delivery once the run ended")
    s.set_defaults(fn=cmd_submit)

    r = sub.add_parser("runs", help="list, show, follow, cancel runs of a running service and get their deliveries")
    rs = r.add_subparsers(dest="runs_command", required=True)
    ls = rs.add_parser("list", help="the caller's runs, newest first")
    ls.add_argument("--status", action="append", choices=_STATUSES, help="only runs in this status (repeatable)")
    ls.add_argument("--search", "-q", metavar="TEXT", help="text in the brief or the run id")
    ls.add_argument("--limit", type=positive, default=20, help="runs per page (default 20)")
    ls.add_argument("--cursor", help="the next page (printed after a full page)")
    _service_args(ls, "the API's page as JSON")
    ls.set_defaults(fn=cmd_list)
    for name, handler, helptext in (("show", cmd_show, "a run: status, phase, cost, hashes, attempts"),
                                    ("cancel", cmd_cancel, "request a stop (the run ends `stopped`)"),
                                    ("delivery", cmd_delivery, "the delivery of an ended run (play URL, gates)")):
        c = rs.add_parser(name, help=helptext)
        c.add_argument("run_id")
        _service_args(c, "the API's answer as JSON")
        c.set_defaults(fn=handler)
    ev = rs.add_parser("events", help="follow a run's events live (resumes across dropped connections)")
    ev.add_argument("run_id")
    ev.add_argument("--after", type=non_negative, default=0, metavar="ID", help="start after this event id")
    _service_args(ev, "one JSON object per event and line: {id, event, data}")
    ev.set_defaults(fn=cmd_events)
    tr = rs.add_parser("trajectory", help="every model, tool and case-library call of a run, with totals per agent")
    tr.add_argument("run_id")
    tr.add_argument("--kind", choices=["model", "tool", "case"], help="only calls of this kind")
    tr.add_argument("--calls", action="store_true", help="list every call, not only the totals")
    _service_args(tr, "the whole trajectory as JSON, with per-agent totals under \"agents\"")
    tr.set_defaults(fn=cmd_trajectory)
    ex = rs.add_parser("export", help="copy an ended run (record, events, trajectory, delivery, design, report) to a "
                       "directory, to keep it past the store's retention")
    ex.add_argument("run_id")
    ex.add_argument("--out", metavar="DIR", help="a new or empty directory (default: ./RUN_ID-export)")
    _service_args(ex, "print the export's manifest (export.json) as JSON")
    ex.set_defaults(fn=cmd_export)
    pl = rs.add_parser("plan", help="a thread's goal versions and one version's plan diff, nodes, metrics, end")
    pl.add_argument("thread_id")
    pl.add_argument("--version", type=positive, metavar="N", help="this goal version (default: the newest)")
    _service_args(pl, "the API's answer as JSON: the versions, or with --version that version")
    pl.set_defaults(fn=cmd_plan)

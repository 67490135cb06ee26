"""The ``tier2`` command line: generate, serve, worker, validate, packs, cases, doctor, sandbox exec — and, against a
running service, submit and runs list|show|events|cancel|delivery (`tier2.client.commands`); eval
(`tier2.evals.command`).

Exit codes: 0 success (game delivered / all L1 gates pass / healthy), 1 the run or a gate failed,
2 usage or setup error (bad brief, missing Chromium/esbuild/Redis, unknown model route, an API error, an
unreachable service).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tier2.client.args import budget_options, non_negative, positive, read_brief, usd
from tier2.client.commands import add_service_commands
from tier2.client.display import ProgressDisplay
from tier2.errors import BadInput, Tier2Error
from tier2.evals.command import add_eval_command
from tier2.hostio import ProjectDir
from tier2.settings.loader import CONFIG_LOG, Settings, load_security
from tier2.settings.secrets import install_log_redaction

__all__ = ["main"]

_TRACED_COMMANDS = ("generate", "serve", "worker")


async def _generate(settings: Settings, redis_url: str, args: argparse.Namespace, brief: str) -> int:
    from tier2.runs import RunRequest, execute_run, open_runtime

    cont = Path(args.continue_dir).resolve() if getattr(args, "continue_dir", None) else None
    async with open_runtime(settings, redis_url) as rt:
        out = Path(args.out).resolve() if args.out else None
        options = {**budget_options(args), **({"workspace": args.workspace} if args.workspace else {})}
        request = RunRequest(brief=brief, out_dir=out, model=args.model, options=options, existing_project=cont,
                             pause_after="design" if args.design_only else None, pack=args.pack or None)
        if args.quiet:
            outcome = await execute_run(rt, request)
        else:  # the same display as `tier2 submit` (live on a terminal, plain lines elsewhere), on stderr
            cap = args.budget_usd or rt.policies.snapshot().budget.usd
            with ProgressDisplay(sys.stderr, budget_usd=cap) as display:
                outcome = await execute_run(rt, request, sink=display.sink)
    d = outcome.delivery
    paused = outcome.status == "stopped" and outcome.stop_reason.startswith("paused after design")
    if args.json:
        print(json.dumps(d, indent=2, ensure_ascii=False))
    else:
        print(f"status:     {outcome.status} ({outcome.stop_reason})")
        print(f"project:    {outcome.project_dir}")
        print(f"play:       {(d.get('preview') or {}).get('url')}")
        print(f"delivery:   {outcome.delivery_path}")
        print(f"report:     {(d.get('verification') or {}).get('report')}")
        print(f"screenshot: {d.get('screenshot')}")
        print(f"policy:     {d.get('policy_hash')} · security/build {d.get('security_hash')}")
        done = d.get("completion")
        if done:
            print(f"design:     {done['summary']} (genre {done['genre']}; spec {outcome.project_dir}/design/spec.json)")
            for u in done.get("unsupported") or []:
                print(f"not built:  {u['what']} — {u['reason']}")
        if paused:
            print(f"continue:   edit docs/design/ and design/spec.json, then: tier2 generate --continue "
                  f"{outcome.project_dir}")
    return 0 if outcome.status == "delivered" or (paused and args.design_only) else 1


def _with_redis(settings: Settings, fn: Callable[[str], int]) -> int:
    from tier2.store.embedded import redis_url

    security = load_security(settings.config_dir)
    with redis_url(settings.redis_url, settings.workspaces / ".redis", security.redis.executables,
                   security.redis.appendonly, security.redis.start_timeout_s) as url:
        return fn(url)


def _design_goal(project: Path) -> str:
    """The goal a paused design was made for (``--continue DIR`` without a brief)."""
    try:
        goals = json.loads(ProjectDir(project).read_text(".tier2/design/state.json")).get("goals") or []
    except (OSError, ValueError) as exc:
        raise BadInput(f"{project} has no design to continue ({exc}); give a brief") from exc
    return str(goals[0]) if goals else ""


def cmd_generate(args: argparse.Namespace) -> int:
    settings = Settings(pack=args.pack) if args.pack else Settings()  # checked against allowed_packs at start
    if getattr(args, "continue_dir", None) and args.brief is None and not args.brief_file:
        args.brief = _design_goal(Path(args.continue_dir))
    brief = read_brief(args)
    from tier2.runs import validate_brief

    validate_brief(brief, load_security(settings.config_dir).brief)  # fail before starting anything
    if args.workspace:  # a kind the ceilings forbid is a usage error (exit 2), before anything starts
        from tier2.runs.loop.sandboxing import choose_workspace
        from tier2.settings.loader import PolicyStore

        security = load_security(settings.config_dir)
        choose_workspace(security, PolicyStore(settings.config_dir, security).snapshot(), {"workspace": args.workspace})
    return _with_redis(settings, lambda url: asyncio.run(_generate(settings, url, args, brief)))


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from tier2.app import build_app
    from tier2.settings.api_keys import ApiKeys

    settings = Settings()
    if not ApiKeys.from_env().enabled and args.host not in ("127.0.0.1", "localhost", "::1"):
        raise BadInput(f"refusing to serve on {args.host} without API keys: set TIER2_API_KEYS=tenant:key,... "
                       "(with no keys tier2 runs in single-user local mode on loopback only)")

    def serve(url: str) -> int:
        from tier2.settings.secrets import redact_url
        from tier2.store.embedded import find_url_file

        app = build_app(settings, url, workers=args.workers)
        found = find_url_file(url, settings.workspaces / ".redis")  # the embedded Redis: its URL has a password
        more = (f"tier2 worker (it finds this root's Redis; its URL: {found})" if found is not None
                else f"REDIS_URL={redact_url(url)} tier2 worker")
        print(f"tier2 serve: {args.workers} in-process worker(s); more workers: {more}", file=sys.stderr, flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
        return 0

    return _with_redis(settings, serve)


def cmd_worker(args: argparse.Namespace) -> int:
    """A worker process: takes runs from the shared Redis's dispatch stream until SIGTERM/SIGINT."""
    import os

    from tier2.runs import open_runtime
    from tier2.runs.process.worker import Worker
    from tier2.settings.secrets import redact_url

    settings = Settings()  # no REDIS_URL: the embedded store of TIER2_WORKSPACES, the one `tier2 serve` uses

    async def run(url: str) -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, stop.set)
        async with open_runtime(settings, url) as rt:
            worker = Worker(rt, args.name, concurrency=args.concurrency)
            print(f"tier2 worker {worker.name} (pid {os.getpid()}) on {redact_url(url)}", file=sys.stderr, flush=True)
            await worker.serve(stop)
            print(f"tier2 worker {worker.name}: stopped after {worker.finished} run(s)", file=sys.stderr)
        return 0

    return _with_redis(settings, lambda url: asyncio.run(run(url)))


def cmd_sandbox(args: argparse.Namespace) -> int:
    from tier2.sandbox.operator import exec_in_project

    argv = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    return exec_in_project(Settings(), args.project, argv, args.workspace)


def cmd_validate(args: argparse.Namespace) -> int:
    from tier2.runs.commands.validate import validate_path

    settings = Settings()
    report = asyncio.run(validate_path(settings, args.path, Path(args.out) if args.out else None, args.mode,
                                       brief=args.brief or ""))
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), indent=2))
    else:
        for g in report.gates:
            print(f"{'PASS' if g.passed else 'FAIL'} {g.layer} {g.id}: {g.summary}")
            for f in g.findings[:5]:
                print(f"     {f.message}")
        if report.findings:
            print(f"findings (not verdicts): {len(report.findings)}")
            for found in report.findings[:10]:
                print(f"     {found['rule']}: {found['message']}")
        print(f"verdict: {'PASS' if report.passed else 'FAIL'} ({report.mode} mode, {report.duration_ms} ms)")
        print(f"report:  {report.report_path}")
    return 0 if report.passed else 1


def cmd_packs(args: argparse.Namespace) -> int:
    """``tier2 packs list|show|docs|lookup|check``: the capability packs, their genres and their docs."""
    from tier2.packs import load_pack
    from tier2.runs.commands.pack_check import check_pack

    settings = Settings()
    if args.packs_command == "list":
        for d in sorted(p for p in settings.packs_dir.iterdir() if (p / "pack.yaml").is_file()):
            pack = load_pack(settings.packs_dir, d.name, settings.skills_dir)
            print(f"{pack.ref}  {pack.manifest.engine.name} {pack.manifest.engine.version}  "
                  f"genres: {', '.join(pack.genres)}  (default {pack.manifest.default_genre})")
        return 0
    pack = load_pack(settings.packs_dir, args.pack, settings.skills_dir)
    if args.packs_command == "docs":
        from tier2.packs.docs import sync_skill

        stale = sync_skill(pack, check=args.check)
        state = ("is stale" if args.check else "updated") if stale else "up to date"
        print(f"{pack.ref}: data-tables skill {state}")
        return 1 if stale and args.check else 0
    if args.packs_command == "lookup":
        from tier2.runs.commands.docs_lookup import lookup_command

        return lookup_command(settings, pack, " ".join(args.query), args.top_k, args.json)
    if args.packs_command == "show":
        info = {"pack": pack.ref, "root": str(pack.root), "engine": pack.manifest.engine.model_dump(),
                "contract": pack.manifest.contract, "default_genre": pack.manifest.default_genre,
                "skills": pack.manifest.skills, "unsupported_genres": sorted(pack.manifest.unsupported_genres),
                "genres": {g.id: g.spec.model_dump(mode="json") | {"template": str(g.template_dir)}
                           for g in pack.genres.values()}}
        print(json.dumps(info, indent=2, ensure_ascii=False) if args.json else "\n".join(
            [f"{pack.ref} ({pack.manifest.engine.name} {pack.manifest.engine.version}, contract "
             f"{pack.manifest.contract}) at {pack.root}"]
            + [f"  {g.id:<12} {g.spec.title}: {g.spec.summary}\n  {'':<12} tables: {', '.join(g.spec.data_tables)}"
               for g in pack.genres.values()]))
        return 0

    def show(line: Any) -> None:
        print(f"{'ok  ' if line.ok else 'FAIL'} {line.what}" + (f" — {line.detail}" if line.detail else ""),
              flush=True)

    lines = asyncio.run(check_pack(settings, args.pack, args.genre or None, play=not args.no_play,
                                   out=Path(args.out).resolve() if args.out else None, progress=show))
    bad = [line for line in lines if not line.ok]
    print(f"pack check: {'PASS' if not bad else 'FAIL'} ({len(lines) - len(bad)} of {len(lines)} checks passed)")
    return 0 if not bad else 1


def cmd_cases(args: argparse.Namespace) -> int:
    """``tier2 cases seed|list|clear``: the debug case library (docs/learning.md)."""
    from tier2.runs.commands.cases import cases_command
    from tier2.validators.mutants import CONTRACT_MUTANTS  # the validator's mutation catalogue: pure operators

    return cases_command(Settings(), args, [(m.defect, m.apply) for m in CONTRACT_MUTANTS])


def cmd_doctor(args: argparse.Namespace) -> int:
    from tier2.service.health import check_health

    settings = Settings()

    def run(url: str) -> int:
        health = asyncio.run(check_health(settings, url, launch_browser=True))
        print(json.dumps(health, indent=2))
        return 0 if health["ok"] else 1

    return _with_redis(settings, run)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="tier2", description="Generate playable, validated web games from a brief.")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="generate a game from a brief (offline model by default)")
    g.add_argument("brief", nargs="?", default=None, help="the game brief ('-' reads stdin)")
    g.add_argument("--brief-file", help="read the brief from a UTF-8 file")
    g.add_argument("--out", help="project directory to create (default: under workspaces/projects/)")
    g.add_argument("--model", help="model route from config/policy/models.yaml (default: offline)")
    g.add_argument("--json", action="store_true", help="print the delivery record as JSON")
    g.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    g.add_argument("--budget-usd", type=usd, metavar="X",
                   help="USD cap for this run, all model calls together (default: budget.usd in hot config)")
    g.add_argument("--budget-tokens", type=positive, metavar="N",
                   help="input+output token cap for this run (default: budget.tokens in hot config)")
    g.add_argument("--design-only", action="store_true",
                   help="stop after the design phase (docs/design/, design/spec.json); exit 0 when the design is valid")
    g.add_argument("--continue", dest="continue_dir", metavar="DIR",
                   help="continue a project whose run paused after design (re-reads the edited design/spec.json)")
    g.add_argument("--workspace", choices=["local", "isolated", "docker"],
                   help="workspace kind (default and allowed kinds: [sandbox] in config/security)")
    g.add_argument("--pack", metavar="ID", help="capability pack (engine) to build with, one of allowed_packs "
                   "(default: TIER2_PACK, else default_pack in config/security)")
    g.set_defaults(fn=cmd_generate)
    x = sub.add_parser("sandbox", help="operate on a project's workspace sandbox")
    xs = x.add_subparsers(dest="sandbox_command", required=True)
    xe = xs.add_parser("exec", help="run a command in a project's workspace with the isolation the agent gets")
    xe.add_argument("--workspace", choices=["local", "isolated", "docker"], help="workspace kind (default: config)")
    xe.add_argument("project", help="project directory, or a project id under workspaces/projects")
    xe.add_argument("cmd", nargs=argparse.REMAINDER, help="-- CMD [ARGS...]")
    xe.set_defaults(fn=cmd_sandbox)
    s = sub.add_parser("serve", help="run the HTTP service (AgentScope create_app + tier2 routes)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8765)
    s.add_argument("--log-level", default="info")
    s.add_argument("--workers", type=non_negative, default=1,
                   help="in-process workers running accepted runs (0: only separate `tier2 worker` processes)")
    s.set_defaults(fn=cmd_serve)
    w = sub.add_parser("worker", help="run accepted runs from the shared Redis (REDIS_URL, else the root's "
                                      "embedded one) until stopped")
    w.add_argument("--concurrency", type=positive, default=1, help="runs at a time in this process")
    w.add_argument("--name", help="consumer name (default: host-pid-random)")
    w.set_defaults(fn=cmd_worker)
    v = sub.add_parser("validate", help="build (if needed) and run the L1 gates on a game (exit 0 pass, 1 fail)")
    v.add_argument("path", help="a game project directory (tier2, or any web game or Vite project of a pack's engine) "
                   "or a loopback URL")
    v.add_argument("--mode", choices=["auto", "contract", "generic"], default="auto",
                   help="contract: use the tier2 test hook; generic: engine introspection + pixels; auto picks")
    v.add_argument("--out", help="where to write report.json, report.html and screenshots")
    v.add_argument("--brief", help="the game's brief, for the L3 visual score (recorded, never blocking)")
    v.add_argument("--json", action="store_true")
    v.set_defaults(fn=cmd_validate)
    k = sub.add_parser("packs", help="list, show and check capability packs")
    ks = k.add_subparsers(dest="packs_command", required=True)
    ks.add_parser("list", help="the installed packs and their genres").set_defaults(fn=cmd_packs)
    kw = ks.add_parser("show", help="one pack's manifest and genres")
    kw.add_argument("pack")
    kw.add_argument("--json", action="store_true")
    kw.set_defaults(fn=cmd_packs)
    kd = ks.add_parser("docs", help="regenerate the pack's docs made from its schemas (the data-tables skill)")
    kd.add_argument("pack")
    kd.add_argument("--check", action="store_true", help="only say whether they are stale (exit 1 if so)")
    kd.set_defaults(fn=cmd_packs)
    kl = ks.add_parser("lookup", help="the top sections of the pack's engine docs for an error, expression or question")
    kl.add_argument("pack")
    kl.add_argument("query", nargs="+")
    kl.add_argument("--top-k", type=int, default=3, help="sections to print (1-8, default 3)")
    kl.add_argument("--json", action="store_true")
    kl.set_defaults(fn=cmd_packs)
    kc = ks.add_parser("check", help="validate a pack: manifests, schemas, skills, builders, templates played")
    kc.add_argument("pack")
    kc.add_argument("--genre", action="append", help="check only this genre (repeatable)")
    kc.add_argument("--no-play", action="store_true", help="skip building and playing the templates")
    kc.add_argument("--out", help="keep the check's projects and reports here")
    kc.set_defaults(fn=cmd_packs)
    c = sub.add_parser("cases", help="the debug case library: seed it from the mutation corpus, list, clear")
    cs = c.add_subparsers(dest="cases_command", required=True)
    cd = cs.add_parser("seed", help="inject each known defect into template copies; record the verified fixes")
    cd.add_argument("--genre", action="append", help="only this genre template (repeatable)")
    cd.add_argument("--only", type=lambda t: [x for x in t.split(",") if x], help="only these defects (a,b,...)")
    cl = cs.add_parser("list", help="the engine's cases, or one tenant's")
    cx = cs.add_parser("clear", help="delete the engine's cases, or one tenant's")
    for q in (cl, cx):
        q.add_argument("--tenant", help="a tenant's own scope (default: the shared engine scope)")
    for q in (cd, cl, cx):
        q.add_argument("--json", action="store_true")
        q.set_defaults(fn=cmd_cases)
    d = sub.add_parser("doctor", help="check Redis, Chromium and the pack toolchain")
    d.set_defaults(fn=cmd_doctor)
    add_service_commands(sub)
    add_eval_command(sub)  # tier2 eval SUITE (tier2/evals/, docs/eval.md)
    return p


class _Terminated(BaseException):
    """SIGTERM, raised in the main thread like KeyboardInterrupt for SIGINT (not an `Exception`: nothing swallows
    it on the way out)."""


def _terminated(signum: int, _frame: object) -> None:
    """SIGTERM: unwind like an interrupt, so every ``with`` and ``atexit`` cleanup runs (the embedded Redis and a
    private dockerd are stopped by pid). Without it the default action kills the process on the spot — uvicorn
    re-raises the SIGTERM it handled once its graceful shutdown is done — and the children outlive it."""
    signal.signal(signum, lambda *_: None)  # a second SIGTERM does not cut the cleanup short (SIGKILL still does)
    raise _Terminated


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    install_log_redaction()  # no Redis password and no run token in a log line
    on_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminated) if on_main else None
    if args.command in ("serve", "worker"):  # config hashes at start, policy reloads and refused edits
        logging.getLogger(CONFIG_LOG).setLevel(logging.DEBUG if args.verbose else logging.INFO)
    if args.command == "generate" and args.brief is None and not args.brief_file and not args.continue_dir:
        parser.error("generate needs a BRIEF (or --brief-file, or '-' for stdin)")
    if args.command == "submit" and args.brief is None and not args.brief_file:
        parser.error("submit needs a BRIEF (or --brief-file, or '-' for stdin)")
    try:
        if args.command in _TRACED_COMMANDS:
            from tier2.telemetry import setup_tracing

            setup_tracing()  # OpenTelemetry: off unless OTEL_EXPORTER_OTLP_(TRACES_)ENDPOINT names a collector
        return int(args.fn(args))
    except Tier2Error as exc:
        print(f"tier2: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("tier2: interrupted", file=sys.stderr)
        return 130
    except _Terminated:
        print("tier2: terminated (SIGTERM): stopped", file=sys.stderr)
        return 128 + signal.SIGTERM
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
        if args.command in _TRACED_COMMANDS:
            from tier2.telemetry import shutdown_tracing

            shutdown_tracing()  # flush the last spans before the process exits


if __name__ == "__main__":
    sys.exit(main())

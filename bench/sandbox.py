"""Benchmark: what each workspace kind costs — per-command overhead against ``local``, a build, a browser launch,
and the full offline ``tier2 generate`` of each kind.

Usage: .venv/bin/python bench/sandbox.py [--commands 30] [--generate 3] [--kinds local,isolated,docker] [--json]

* per command: ``true`` and ``node -e 0`` through `Sandbox.exec` (a fresh bubblewrap per command; ``docker exec``
  into the run's long-lived container), medians, and the overhead over ``local`` (which runs the same argv on the
  host through ``env -i``);
* build: the pack template through the confined esbuild runner, inside the sandbox;
* browser: launch + first page of Chromium inside the sandbox (Playwright over the pipe);
* generate: the real CLI (``tier2 generate --workspace KIND``, offline model) as a subprocess, median wall time and
  the in-run total, and whether every kind delivered the same source and bundle hashes.

The docker kind uses ``TIER2_DOCKER_HOST`` when set, else a private dockerd started (and stopped) here with the
host's networking untouched. The machine is shared and noisy: read the figures as rough.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tier2.browser import BrowserPool, find_chromium  # noqa: E402
from tier2.packs import load_pack  # noqa: E402
from tier2.sandbox import bwrap_available, docker_available, make_sandbox  # noqa: E402
from tier2.sandbox.docker import DockerEngine  # noqa: E402
from tier2.settings.loader import REPO_ROOT, load_security  # noqa: E402
from tier2.settings.sandbox import DockerConfig  # noqa: E402
from tier2.toolchain import run_build  # noqa: E402
from tier2.workspace.projects import new_project  # noqa: E402

BRIEF = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


def _median_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 1)


async def bench_kind(kind: str, work: Path, n: int) -> dict[str, object]:
    pack = load_pack(REPO_ROOT / "capability_packs", "phaser")
    project = work / f"proj-{kind}"
    new_project(pack, project, f"p-bench-{kind}")
    box = make_sandbox(kind, project, work / f"home-{kind}", read_only=[pack.node_modules, *pack.skill_dirs],
                       workspaces=work / "ws")
    t0 = time.monotonic()
    await box.start()
    start_s = time.monotonic() - t0
    out: dict[str, object] = {"kind": kind, "start_ms": round(start_s * 1000, 1)}
    try:
        for label, argv in (("true", ["true"]), ("node", ["node", "-e", "0"])):
            samples = []
            for _ in range(n):
                t = time.monotonic()
                done = await box.exec(argv)
                samples.append(time.monotonic() - t)
                assert done.code == 0, done.output
            out[f"exec_{label}_ms"] = _median_ms(samples)
        builds = []
        for _ in range(3):
            t = time.monotonic()
            result = await run_build(pack, project, launcher=box.launcher if kind != "local" else None)
            builds.append(time.monotonic() - t)
            assert result.ok, result.errors
        out["build_ms"] = _median_ms(builds)
        chromium = find_chromium(None, load_security(REPO_ROOT / "config").browser.executables)
        launches = []
        for _ in range(3):
            t = time.monotonic()
            async with BrowserPool(box.chromium(chromium)) as pool:
                ctx = await pool.new_context()
                page = await ctx.new_page()
                await page.set_content("<p>hi</p>")
                launches.append(time.monotonic() - t)
                await ctx.close()
        out["browser_first_page_ms"] = _median_ms(launches)
    finally:
        await box.close()
    return out


def generate(kind: str, work: Path, repeat: int) -> dict[str, object]:
    walls, totals, hashes = [], [], set()
    for i in range(repeat):
        dest = work / f"gen-{kind}-{i}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("TIER2_") and k != "REDIS_URL"}
        env.update(TIER2_WORKSPACES=str(work / "ws"), PYTHONPATH=str(ROOT))
        if os.environ.get("TIER2_DOCKER_HOST"):
            env["TIER2_DOCKER_HOST"] = os.environ["TIER2_DOCKER_HOST"]
        t = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "tier2", "generate", BRIEF, "--workspace", kind, "--out",
                               str(dest), "--json", "--quiet"], cwd=ROOT, env=env, capture_output=True, text=True,
                              timeout=900, check=False)
        walls.append(time.monotonic() - t)
        if proc.returncode != 0:
            raise SystemExit(f"generate --workspace {kind} failed: {proc.stderr[-2000:]}")
        d = json.loads(proc.stdout)
        totals.append(d["timings_ms"]["total"] / 1000)
        hashes.add((d["source"]["sha256"], d["build"]["bundle_sha256"]))
    return {"kind": kind, "generate_wall_s": round(statistics.median(walls), 2),
            "generate_in_run_s": round(statistics.median(totals), 2), "hashes": sorted(hashes)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commands", type=int, default=30)
    ap.add_argument("--generate", type=int, default=3)
    ap.add_argument("--kinds", default="local,isolated,docker")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    skipped = {}
    if "isolated" in kinds and (why := bwrap_available()):
        skipped["isolated"] = why
    if "docker" in kinds and (why := docker_available()):
        skipped["docker"] = why
    kinds = [k for k in kinds if k not in skipped]
    with tempfile.TemporaryDirectory(prefix="tier2-bench-sandbox-") as tmp:
        work = Path(tmp)
        engine = None
        if "docker" in kinds and not os.environ.get("TIER2_DOCKER_HOST"):
            engine = DockerEngine(work / "docker", DockerConfig())
            t = time.monotonic()
            engine.ensure()
            daemon_s = time.monotonic() - t
            os.environ["TIER2_DOCKER_HOST"] = engine.host
        try:
            rows = [asyncio.run(bench_kind(k, work, args.commands)) for k in kinds]
            gens = {k: generate(k, work, args.generate) for k in kinds} if args.generate else {}
        finally:
            if engine is not None:
                engine.stop()
                os.environ.pop("TIER2_DOCKER_HOST", None)
    base = next((r for r in rows if r["kind"] == "local"), None)
    for r in rows:
        if base is not None:
            for key in ("exec_true_ms", "exec_node_ms", "build_ms", "browser_first_page_ms"):
                r[f"{key}_over_local"] = round(float(r[key]) - float(base[key]), 1)  # type: ignore[arg-type]
        r.update({k: v for k, v in gens.get(str(r["kind"]), {}).items() if k != "kind"})
    same = len({tuple(map(tuple, r.get("hashes", []))) for r in rows if r.get("hashes")}) <= 1
    report = {"rows": rows, "skipped": skipped, "same_game_across_kinds": same,
              "docker_daemon_start_s": round(daemon_s, 2) if engine is not None else None}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    cols = ["kind", "start_ms", "exec_true_ms", "exec_true_ms_over_local", "exec_node_ms", "exec_node_ms_over_local",
            "build_ms", "browser_first_page_ms", "generate_wall_s", "generate_in_run_s"]
    print(" | ".join(cols))
    for r in rows:
        print(" | ".join(str(r.get(c, "")) for c in cols))
    print(f"same source+bundle hashes across kinds: {same}; skipped: {skipped or 'none'}; "
          f"private dockerd start: {report['docker_daemon_start_s']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

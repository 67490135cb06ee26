"""The one place that owns validation policy.

* L1 always enforces — config cannot turn it off (mechanism, pinned by a test).
* L2 gates are observe or enforce per gate from hot policy.
* L3 is recorded and never blocks, whatever it returns, raises or however long it takes.
"""

from __future__ import annotations

import asyncio
import functools
import json
import re
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from tier2.browser import BrowserPool
from tier2.browser.session import SERVED_ORIGIN
from tier2.errors import BadInput
from tier2.hostio import ProjectDir
from tier2.packs import EngineAdapter, Genre, Pack, choose_adapter
from tier2.packs.registry import load_installed, loaded_packs
from tier2.settings.loader import Policy
from tier2.store.spend import SpendGuard
from tier2.telemetry import annotate_validation, traced
from tier2.toolchain import BuildResult, run_build
from tier2.toolchain.esbuild import Launcher
from tier2.validators.base import Finding, ProbeMode, ValidationResult
from tier2.validators.data.pack_checks import genre_data_gates
from tier2.validators.l1.assets import asset_gate
from tier2.validators.l1.runtime_gates import bound_gates
from tier2.validators.l2 import completion_map, conformance_gates
from tier2.validators.l3 import ModelScorer, score_visual
from tier2.validators.probe import probe_contract_game
from tier2.validators.probe_generic import probe_generic_game
from tier2.validators.report import ValidationReport
from tier2.validators.reuse import SmokeCache, smoke_key
from tier2.validators.site import engine_evidence, url_evidence
from tier2.validators.smoke import smoke_default_renderer
from tier2.validators.static import read_sources, run_static_gates
from tier2.validators.targets import Target, detect_mode, resolve_target
from tier2.validators.trace import PlayTrace

__all__ = ["ValidationRunner", "apply_policy", "apply_verdicts", "build_gate", "needs_webgl", "report_findings",
           "Mode"]

Mode = Literal["auto", "contract", "generic"]


#: L2 gates whose default is not observe: a game of the wrong genre is never delivered unless config says so
L2_DEFAULTS: dict[str, str] = {"l2.genre": "enforce"}


def apply_policy(result: ValidationResult, policy: Policy) -> ValidationResult:
    """Set the gate's mode: L1 enforce (always), L3 observe (always), L2 from policy: the gate's id, then — for a
    requirement gate — the requirement's own ``mode`` in the spec, then for a requirement from the brief's words
    (``origin: brief``) the policy's ``design.content_mode``, then the gate's family (``l2.req`` for
    ``l2.req.R3``), then `L2_DEFAULTS`, then observe."""
    if result.layer == "L1":
        mode = "enforce"
    elif result.layer == "L3":
        mode = "observe"
    else:
        family = result.id.rsplit(".", 1)[0]
        own = result.evidence.get("mode") if family == "l2.req" else None
        content = policy.design.content_mode if family == "l2.req" and result.evidence.get("origin") == "brief" \
            else None
        mode = (policy.gates.get(result.id) or (own if own in ("observe", "enforce") else None) or content
                or policy.gates.get(family) or L2_DEFAULTS.get(result.id, "observe"))
    return result.model_copy(update={"mode": mode})


def apply_verdicts(result: ValidationResult, mode: ProbeMode, policy: Policy) -> ValidationResult:
    """Hot policy ``verdicts:``: what a rule's failure is in this validation mode. A gate that is itself a rule
    (``l1.legible``) and is a finding in ``mode`` passes, its findings kept as warnings with the evidence; a
    finding tagged with a rule (``l1.no_errors.service_worker``) that is a finding in ``mode`` becomes a warning,
    and a gate that failed only for such findings passes (``evidence.verdicts`` says what would have failed)."""
    table = policy.verdicts
    whole = table.as_(result.id, mode) == "finding" and result.id in table.rules
    findings, demoted = [], []
    for f in result.findings:
        rule = result.id if whole else f.rule
        if rule is not None and table.as_(rule, mode) == "finding" and (whole or f.severity == "error"):
            f = f.model_copy(update={"severity": "warning" if f.severity == "error" else f.severity, "rule": rule})
            demoted.append(f)
        findings.append(f)
    if not demoted and not (whole and not result.passed):
        return result
    update: dict[str, Any] = {"findings": findings}
    if not result.passed and (whole or not any(f.severity == "error" for f in findings)):
        rules = sorted({f.rule for f in demoted if f.rule} | ({result.id} if whole else set()))
        update["passed"] = True
        update["summary"] = f"findings, not verdicts in {mode} mode ({', '.join(rules)}): {result.summary}"
        update["evidence"] = {**result.evidence, "verdicts": {"mode": mode, "as": "finding", "rules": rules,
                                                              "would_fail": True}}
    return result.model_copy(update=update)


def report_findings(gates: list[ValidationResult]) -> list[dict[str, Any]]:
    """Every finding a ``verdicts:`` rule made (not a verdict), with its gate and evidence, for the report."""
    out: list[dict[str, Any]] = []
    for g in gates:
        raw = g.evidence.get("issues")
        issues: list[Any] = raw if isinstance(raw, list) else []
        for i, f in enumerate(f for f in g.findings if f.rule):
            entry: dict[str, Any] = {"gate": g.id, "rule": f.rule, "message": f.message}
            if f.rule == g.id and i < len(issues):  # a whole-gate rule's finding and its evidence (legibility)
                entry["evidence"] = issues[i]
            out.append(entry)
    return out


def build_gate(build: BuildResult) -> ValidationResult:
    if build.ok:
        return ValidationResult(id="l1.builds", layer="L1", passed=True,
                                summary=f"esbuild ok in {build.duration_ms} ms, {build.bundle_bytes} bytes",
                                evidence={"bundle": build.bundle_path, "sha256": build.bundle_sha256})
    return ValidationResult(id="l1.builds", layer="L1", passed=False,
                            summary=f"build failed with {len(build.errors)} error(s)",
                            findings=[Finding(message=str(e)) for e in build.errors[:10]],
                            evidence={"log_tail": build.log[-2000:]})


def read_tables(project: Path, names: list[str]) -> dict[str, Any]:
    """The project's data tables by file name; unreadable JSON becomes an empty table (the gate reports it)."""
    tables: dict[str, Any] = {}
    for name in names:
        try:
            tables[name] = json.loads(ProjectDir(project).read_text(f"data/{name}"))  # no link followed
        except (OSError, ValueError):
            tables[name] = {}
    return tables


#: errors of a Canvas-renderer session that say the game needs WebGL (forced renderer, shaders, pipelines)
_WEBGL_EVIDENCE = re.compile(r"webgl|pipeline|shader|\bgl\b", re.I)


def needs_webgl(trace: PlayTrace, smoke: PlayTrace) -> bool:
    """True when the Canvas-renderer session failed at boot for want of WebGL: its errors say so, it never booted
    after the page was refused the WebGL context it asked for while the default-renderer session booted (an
    engine with no Canvas renderer, whose error may say neither), or the default-renderer session booted without
    the page errors the Canvas one had before any input (a WebGL-only feature such as post FX). Only then is a
    replay on the default renderer — software WebGL here, often ten times slower per frame — worth it."""
    if any(_WEBGL_EVIDENCE.search(e) for e in trace.errors):
        return True
    d = smoke.default_renderer or {}
    if trace.webgl_refused and not trace.booted and d.get("booted"):  # no Canvas renderer to fall back on
        return True
    return bool(trace.boot_errors) and bool(d.get("booted")) and not any("pageerror" in e for e in smoke.errors)


async def _timed(coro: Any) -> tuple[Any, int]:
    t0 = time.monotonic()
    result = await coro
    return result, int((time.monotonic() - t0) * 1000)


async def _given(result: Any, ms: int) -> tuple[Any, int]:
    return result, ms


#: the run's validated design when it has one: the spec and the goal text the L2 conformance gates judge
DesignSource = Callable[[], tuple[dict[str, Any], str] | None]


class ValidationRunner:
    """Build + probe + gates; reuses the pool's browser (a fresh context per validation).

    ``launcher``: where project builds run (the run's workspace sandbox, `tier2.sandbox`; None = on the host);
    ``cache_dir``: the durable validation cache (passing default-renderer smokes, `tier2.validators.reuse`; None =
    nothing reused); ``spend_guard``: the run's (its ledger's view goes into the delivery's usage); ``l3_scorer``:
    the L3 model scorer (`tier2.runs.loop.addons.l3`; None = the offline heuristic); ``design``: the run's design
    as it stands at each validation (the design phase produces it after the runner exists); ``engines_dir``: where
    the type data of the engine version a game nobody here wrote ships is cached (default: ``engines`` beside
    ``cache_dir``, else under the system temp dir)."""

    def __init__(self, pool: BrowserPool, pack: Pack, policy: Policy, *, launcher: Launcher | None = None,
                 cache_dir: Path | None = None, spend_guard: SpendGuard | None = None,
                 l3_scorer: ModelScorer | None = None, design: DesignSource | None = None,
                 engines_dir: Path | None = None) -> None:
        self.pool, self.pack, self.policy = pool, pack, policy
        self.engines_dir = engines_dir or ((cache_dir.parent / "engines") if cache_dir is not None
                                           else Path(tempfile.gettempdir()) / "tier2-engines")
        self.launcher, self.cache_dir, self.spend_guard, self.l3_scorer = launcher, cache_dir, spend_guard, l3_scorer
        self.design = design
        #: the play trace of the latest validation (None before any, or when nothing was played)
        self.last_trace: PlayTrace | None = None

    async def validate_project(
        self, project: Path, out_dir: Path, build: BuildResult | None = None, brief: str | None = None,
    ) -> ValidationReport:
        """A tier2 project (contract mode); builds unless a fresh ``build`` is given. With a ``brief``, the L3
        visual score runs too (recorded, never blocking)."""
        self.pool.warm()  # the browser launches (or its next page gets ready) while esbuild works
        if build is None:
            build = await run_build(self.pack, project, timeout_s=self.policy.timeouts.build_s,
                                    launcher=self.launcher)
        target = Target(str(project), SERVED_ORIGIN + "dist/index.html", project, project, build, True)
        return await self._validate(target, out_dir, "contract", brief)

    async def validate_target(self, raw: str, out_dir: Path, mode: Mode = "auto",
                              brief: str = "") -> ValidationReport:
        """Any supported target (see `targets`); ``auto`` picks contract or generic mode."""
        if mode not in ("auto", "contract", "generic"):
            raise BadInput(f"unknown mode {mode!r}: use auto, contract or generic")
        self.pool.warm()
        target = await resolve_target(raw, self.pack, out_dir, self.policy.timeouts.build_s)
        return await self._validate(target, out_dir, detect_mode(target) if mode == "auto" else mode, brief)

    def _resolve_genre(self, named: str | None, contract: int | None) -> Genre | None:
        """The pack genre to play a contract game as: the one its hook names, else (contract 1) the default."""
        if named is not None:
            return self.pack.genres.get(named)
        return self.pack.default_genre if contract == 1 else None

    async def _probe(self, target: Target, out_dir: Path, mode: ProbeMode, tables: dict[str, Any] | None,
                     genre: Genre | None = None) -> PlayTrace:
        t = self.policy.timeouts
        started = time.monotonic()
        engine = await self._engine(target, mode)
        probe = (functools.partial(probe_contract_game, genre=genre, resolve_genre=self._resolve_genre, engine=engine)
                 if mode == "contract" else functools.partial(probe_generic_game, engine=engine))
        roots = target.roots
        smoke_trace = PlayTrace()
        key, cache = await self._smoke_key(target, engine), SmokeCache(self.cache_dir) if self.cache_dir else None
        t0 = time.monotonic()
        reused = cache.reuse(key, roots, out_dir, smoke_trace) if cache is not None and key else None
        if reused is not None:  # a passing smoke of these very files: not run again
            smoke = asyncio.create_task(_given({}, int((time.monotonic() - t0) * 1000)))
        else:
            # the default-renderer smoke runs in its own context beside the main (Canvas) play: two cores, two pages
            smoke = asyncio.create_task(_timed(smoke_default_renderer(
                self.pool, target.url, out_dir, smoke_trace, serve_root=roots, boot_timeout_s=t.boot_s,
                total_timeout_s=min(t.validation_s, 20.0), engine=engine)))
        try:
            trace = await probe(self.pool, target.url, out_dir, serve_root=roots,
                                boot_timeout_s=t.boot_s, total_timeout_s=t.validation_s, tables=tables,
                                force_canvas=True)
            if (not trace.booted or trace.boot_errors) and not trace.timed_out:
                _, smoke_ms = await smoke  # one software-WebGL page at a time (each one burns a core)
            if (not trace.booted or trace.boot_errors) and not trace.timed_out and needs_webgl(trace, smoke_trace):
                fallback = await probe(self.pool, target.url, out_dir, serve_root=roots,
                                       boot_timeout_s=t.boot_s, total_timeout_s=t.validation_s, tables=tables,
                                       force_canvas=False)
                if fallback.booted:
                    fallback.notes.append("does not boot on the Canvas renderer (it forces WebGL?); played on the "
                                          "default renderer")
                    trace = fallback
            trace.lap("main_session", started)
        finally:
            served, smoke_ms = await smoke  # (a finished task just gives its result again)
        if reused is not None:
            trace.notes.append(f"default-renderer smoke reused: it passed on these very files (every served file's "
                               f"sha256 unchanged, same Chromium and validator) at {reused['recorded_at']}")
        elif cache is not None and key:
            cache.record(key, smoke_trace, served)
        trace.timings_ms["default_renderer_smoke"] = smoke_ms
        trace.errors = smoke_trace.errors + trace.errors
        trace.blocked = smoke_trace.blocked + trace.blocked
        trace.pixels = smoke_trace.pixels + trace.pixels
        trace.screenshots = smoke_trace.screenshots + trace.screenshots
        trace.default_renderer = smoke_trace.default_renderer
        if engine is not self.pack.adapter:
            trace.notes.append(f"read with the {engine.title} engine adapter (pack {engine.pack_id}): the scripts "
                               "its page loads show that engine")
        return trace

    async def _engine(self, target: Target, mode: ProbeMode) -> EngineAdapter:
        """The engine adapter that reads the game: the pack's for its own games, else the one, among every
        installed pack's (``<packs dir>/*/pack.yaml``; one that does not load is left out), whose engine the
        scripts the page loads show (`tier2.packs.choose_adapter`; the pack's when none or several do)."""
        if mode == "contract":
            return self.pack.adapter
        installed, _refused = await asyncio.to_thread(load_installed, self.pack.root.parent)
        others = list({p.id: p.adapter for p in [*loaded_packs(), *installed] if p.id != self.pack.id}.values())
        if not others:
            return self.pack.adapter
        evidence = await asyncio.to_thread(engine_evidence, target.roots) if target.roots else \
            await asyncio.to_thread(url_evidence, target.url)  # a loopback URL: its page and scripts, fetched
        return choose_adapter([self.pack.adapter, *others], evidence)

    async def _smoke_key(self, target: Target, engine: EngineAdapter) -> str | None:
        if self.cache_dir is None or not target.roots:
            return None
        t = self.policy.timeouts
        return smoke_key(url=target.url, roots=target.roots, chromium=await self.pool.version(),
                         bundle_sha256=target.build.bundle_sha256 if target.build else None,
                         browser_args=self.pool.args, pack_ref=self.pack.ref, boot_timeout_s=t.boot_s,
                         total_timeout_s=min(t.validation_s, 20.0), engine_script=engine.page_js)

    @traced("validate", annotate_validation)
    async def finalize(self, report: ValidationReport, out_dir: Path, brief: str) -> ValidationReport:
        """Reuse a passing report made on the very same sources (same checks, same verdict) as the final one:
        add the L3 score and write it to ``out_dir``."""
        gates = [g for g in report.gates if g.layer != "L3"]
        if report.screenshots:
            gates.append(apply_policy(await self._l3(report.screenshots, brief), self.policy))
        final = report.model_copy(update={"gates": gates, "notes": report.notes + [
            f"verification reused from {report.report_path} (identical source snapshot)"]})
        final.write(out_dir / "report.json")
        return final

    async def _l3(self, screenshots: list[str], brief: str) -> ValidationResult:
        return await score_visual([Path(p) for p in screenshots], brief, self.l3_scorer, self.policy.l3_timeout_s)

    @traced("validate", annotate_validation)
    async def _validate(self, target: Target, out_dir: Path, mode: ProbeMode, brief: str | None = None,
                        ) -> ValidationReport:
        started = time.monotonic()
        gates: list[ValidationResult] = []
        screenshots: list[str] = []
        notes: list[str] = []
        timings: dict[str, int] = {}
        probe_info: dict[str, Any] = {}
        if target.site is not None:
            notes.append(f"target is a {target.site.kind} "
                         f"{'site (served as it is)' if target.site.kind == 'built' else 'project (bundled)'}: "
                         + "; ".join(target.site.evidence))
        if target.build is not None:
            gates.append(build_gate(target.build))
            timings["build"] = target.build.duration_ms
        tables = None
        genre: Genre | None = None
        trace: PlayTrace | None = None
        t0 = time.monotonic()
        if target.tier2_project and target.project is not None:
            genre = self.pack.genre_of(target.project)
            tables = read_tables(target.project, genre.spec.data_tables)
            gates += genre_data_gates(genre, tables, {"strict_acyclic": self.policy.strict_acyclic})
            notes.append(f"pack {self.pack.ref}, genre template {genre.id}")
        timings["data_gates"] = int((time.monotonic() - t0) * 1000)
        # node parses while the browser plays (beside the build it would slow esbuild, which is on the critical path)
        static = None
        if target.project is not None and read_sources(target.project):
            engines = None if target.tier2_project else self.engines_dir  # a game nobody here wrote: its own engine
            static = asyncio.create_task(_timed(run_static_gates(target.project, self.pack.adapter,
                                                                 engines_dir=engines)))
        try:
            if target.build is None or target.build.ok:
                t0 = time.monotonic()
                trace = await self._probe(target, out_dir, mode, tables, genre)
                timings["browser"] = int((time.monotonic() - t0) * 1000)
                timings.update({f"browser.{k}": v for k, v in trace.timings_ms.items()})
                gates += [gate(trace) for gate in bound_gates(self.policy)]
                if target.tier2_project and target.project is not None:
                    assets = asset_gate(target.project, trace)  # l1.assets: the asset pool
                    if not assets.passed or assets.evidence.get("registered"):  # (nothing registered: no gate)
                        gates.append(assets)
                screenshots, notes = trace.screenshots, notes + list(trace.notes)
                probe_info = {k: v for k, v in (("budget", trace.budget), ("controls", trace.controls),
                                                ("sweep", trace.sweep)) if v}
                if brief is not None and screenshots:
                    t0 = time.monotonic()
                    gates.append(await self._l3(screenshots, brief))
                    timings["l3"] = int((time.monotonic() - t0) * 1000)
        finally:
            if static is not None:
                static_gates, timings["static_gates"] = await static
                gates[1:1] = static_gates
        design = self.design() if self.design is not None else None
        if design is not None and target.tier2_project:  # L2: the build against the design
            spec, goal = design
            l2 = conformance_gates(spec, goal, trace, tables, target.project, gates, self.pack)
            gates += l2
            done = completion_map(spec, l2)
            notes.append(f"design conformance: {done['summary']} (genre {done['genre']})")
        gates = [apply_policy(apply_verdicts(g, mode, self.policy), self.policy) for g in gates]
        self.last_trace = trace
        report = ValidationReport(
            target=target.label, mode=mode, passed=not any(g.blocking for g in gates), gates=gates,
            findings=report_findings(gates),
            screenshots=screenshots, build=target.build.to_dict() if target.build else None, notes=notes,
            timings_ms=timings, site=target.site.to_dict() if target.site else None, probe=probe_info,
            duration_ms=int((time.monotonic() - started) * 1000),
        )
        report.write(out_dir / "report.json")
        return report

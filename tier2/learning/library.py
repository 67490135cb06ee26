"""The debug case library: one per process (`CaseLibrary`) and one view of it per run (`LibraryRun`).

A run shows the library every validation it makes (`LibraryRun.observe`): failures become signatures and pending
cases; a pending failure whose gate passes later is recorded as a case — the diff of what changed in between,
the files, the rule, a fixer where the registry has one for its class. Before the writer's next model call,
`LibraryRun.assist` looks the failures up: an exact hit whose case names a fixer is applied (the caller
re-validates, `settle` says whether the gate passed), any other exact hit is offered to the writer as a known
fix, and the rest are recalled through mem0 (near matches) or matched to the defect taxonomy (advice).

Scopes: a case goes to the tenant's scope; it is also an engine fact, shared with every run and tenant, when its
signature names none of the tenant's game content and its fix carries none either (a fixer, or a diff whose every
line is already in the pack template). Diffs are scrubbed of the service's secrets before they are stored.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from redis.exceptions import RedisError

from tier2.events import CaseHit, CaseRecorded, Tier2Event
from tier2.hostio import ProjectDir, UnsafePath
from tier2.learning.fixers import FixContext, FixPlan, first_plan, fixer_named
from tier2.learning.history import Files, History, Verified, read_files
from tier2.learning.memory import CaseMemory, available, memory_text, shared_memory
from tier2.learning.signature import Failure, Signature, failures_of_build, failures_of_report, project_vocabulary, sign
from tier2.learning.taxonomy import TaxonomyEntry, rule_for
from tier2.packs import Pack
from tier2.settings.policy import LearningPolicy
from tier2.settings.secrets import Redactor
from tier2.store.cases import ENGINE_SCOPE, Case, CaseCost, CaseFix, CaseStore, tenant_scope
from tier2.store.trajectory import CaseCallRecord, TrajectoryStore
from tier2.toolchain import BuildResult
from tier2.validators import ValidationReport

__all__ = ["Applied", "Assist", "CaseLibrary", "LibraryRun", "Seen", "engine_of"]

log = logging.getLogger(__name__)
Emit = Callable[[Tier2Event], Awaitable[None]]
HitAction = Literal["applied", "offered", "recalled", "advised"]
Estimate = Literal["recorded", "minimum", "none"]
Usage = Callable[[], tuple[int, int]]


def engine_of(pack: Pack) -> str:
    return f"{pack.manifest.engine.name}@{pack.manifest.engine.version}"


class CaseLibrary:
    """Process-wide: the Redis store of cases and, when the ``memory`` extra is installed, the mem0 index."""

    def __init__(self, store: CaseStore, recall: bool = True) -> None:
        self.store = store
        #: None without the ``memory`` extra (or with recall off): exact signatures only
        self.memory: CaseMemory | None = shared_memory() if recall and available() else None

    async def record(self, case: Case) -> Case:
        """Store a verified case (the mem0 index picks it up before its next recall)."""
        return await self.store.put(case)

    async def exact(self, signature: Signature, scopes: list[str]) -> Case | None:
        return await self.store.get(signature.key, scopes)

    async def near(self, signature: Signature, scopes: list[str], k: int, min_score: float,
                   wait_s: float = 0.0) -> list[tuple[Case, float]]:
        """Cases of similar failures (never the same signature), best first; [] without mem0, and while mem0 is
        still loading after ``wait_s`` (the first recall of a process starts the load)."""
        if self.memory is None or not await self.memory.ready(wait_s):
            return []
        namespace = self.store.keys.prefix
        for scope in scopes:  # cases recorded (here or by other processes) since the last recall
            await self.memory.index(namespace, await self.store.all(scope))
        text = memory_text(signature.gate, signature.stage, signature.shape)
        hits = await self.memory.search(text, namespace, scopes, k + 1, min_score)
        out: list[tuple[Case, float]] = []
        for h in hits:
            if h.key == signature.key:
                continue
            case = await self.store.get(h.key, [h.scope])
            if case is not None:
                out.append((case, h.score))
        return out[:k]


@dataclass(frozen=True)
class Seen:
    """One validation as the library saw it."""

    failing: list[tuple[Failure, Signature]]
    passed: frozenset[str]

    @property
    def ok(self) -> bool:
        return not self.failing


@dataclass
class Applied:
    case: Case
    signature: Signature
    plan: FixPlan
    fixed: bool | None = None


@dataclass
class Assist:
    applied: list[Applied] = field(default_factory=list)
    offered: list[tuple[Case, Signature]] = field(default_factory=list)
    recalled: list[tuple[Case, float, Signature]] = field(default_factory=list)
    advised: list[tuple[TaxonomyEntry, Signature]] = field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return sorted({f for a in self.applied for f in a.plan.files})


class LibraryRun:
    """The library as one run uses it (the run's history of validations, its tenant's scope)."""

    def __init__(self, library: CaseLibrary, *, run_id: str, tenant: str | None, pack: Pack, project: Path,
                 brief: str, policy: LearningPolicy, emit: Emit | None = None, usage: Usage | None = None,
                 redactor: Redactor | None = None, trajectory: TrajectoryStore | None = None,
                 source: str | None = None, scope: str | None = None, claim_fixers: bool = True) -> None:
        self.library, self.run_id, self.pack, self.project, self.brief = library, run_id, pack, project, brief
        self.policy, self.emit_to, self.usage = policy, emit, usage or (lambda: (0, 0))
        self.redactor, self.trajectory = redactor or Redactor(), trajectory
        self.engine = engine_of(pack)
        self.own_scope = scope or tenant_scope(tenant)
        self.scopes = list(dict.fromkeys([self.own_scope, ENGINE_SCOPE]))
        self.source = source or f"run:{run_id}"
        #: a case the writer fixed gets the registry's fixer for its class (False: only a fixer that was applied
        #: and verified, as the seeder records)
        self.claim_fixers = claim_fixers
        self.history = History()
        try:
            self.template: Path | None = pack.genre_of(project).template_dir
        except Exception:  # noqa: BLE001 - not a pack project (an imported game): no template to restore from
            self.template = None
        self._template_lines: frozenset[str] | None = None
        self.recorded: list[Case] = []

    # --- observing validations --------------------------------------------------------------------------------

    async def baseline(self) -> None:
        """The files before the writer starts (the design phase's tables): earlier versions a fixer restores from."""
        self.history.remember(await asyncio.to_thread(read_files, self.project))

    async def observe_build(self, build: BuildResult) -> Seen:
        return await self._observe(failures_of_build(build), {"l1.builds"} if build.ok else set())

    async def observe_report(self, report: ValidationReport) -> Seen:
        passed = {g.id for g in report.gates if g.passed or not g.blocking}
        return await self._observe(failures_of_report(report), passed)

    async def observe_report_safely(self, report: ValidationReport) -> Seen | None:
        """`observe_report` for a caller the library must never fail (None when Redis or the files refused)."""
        try:
            return await self.observe_report(report)
        except (RedisError, OSError, ValueError) as exc:
            log.warning("run %s: case library could not observe a validation: %s", self.run_id, exc)
            return None

    async def _observe(self, failures: list[Failure], passed: set[str]) -> Seen:
        files = await asyncio.to_thread(read_files, self.project)
        vocabulary = await asyncio.to_thread(project_vocabulary, self.project, self.brief, self.template)
        signed = [(f, sign(f, self.engine, vocabulary)) for f in failures]
        signed = list({s.key: (f, s) for f, s in reversed(signed)}.values())[::-1]  # one per signature
        calls, tokens = self.usage()
        for verified in self.history.observe(signed, passed, files, calls, tokens):
            if self.policy.cases:
                await self._record(verified)
        return Seen(signed, frozenset(passed))

    async def _record(self, v: Verified) -> None:
        p = v.pending
        # the fixer for this class of failure: one that can plan a fix from the files as they were at the failure
        plan = first_plan(FixContext(self.project, p.files, self.history, self.template), p.failure) \
            if self.claim_fixers and p.fixer is None else None
        claimed = fixer_named(p.fixer or (plan.fixer if plan else None))
        fixer = claimed.name if claimed else None
        entry = rule_for(p.failure.message, self.pack)
        rule = entry.rule() if entry else (claimed.rule if claimed else "")
        diff = self.redactor.scrub(v.diff)
        cost = CaseCost() if p.fixer else CaseCost(model_calls=v.model_calls, tokens=v.tokens)
        base = Case(key=p.signature.key, engine=self.engine, gate=p.signature.gate, stage=p.signature.stage,
                    shape=self.redactor.scrub(p.signature.shape), scope=self.own_scope, source=self.source,
                    fix=CaseFix(fixer=fixer, diff=diff, files=v.files, rule=rule), cost=cost)
        stored = [await self.library.record(base)]  # the run's own scope (the seeder's is the engine's)
        template_only = await asyncio.to_thread(self._template_only, diff)
        if self.own_scope != ENGINE_SCOPE and not p.signature.names_content and (fixer is not None or template_only):
            # shared: only what the pack already has (template files, template lines) and tier2's own rule texts
            files = [f for f in v.files if self.template is not None and (self.template / f).is_file()]
            engine = base.model_copy(update={"scope": ENGINE_SCOPE, "fix": base.fix.model_copy(
                update={"diff": diff if template_only else "", "files": files})})
            stored.append(await self.library.record(engine))
        for case in stored:
            self.recorded.append(case)
            await self.emit(CaseRecorded(run_id=self.run_id, signature=case.key, gate=case.gate, shape=case.shape,
                                         scope=_public(case.scope), fixer=case.fix.fixer, files=case.fix.files,
                                         verified=case.verified))

    def _template_only(self, diff: str) -> bool:
        """Every changed line of the diff is a line of the pack template: the fix carries no tenant content."""
        if self.template is None or not diff:
            return False
        if self._template_lines is None:
            lines: set[str] = set()
            for path in self.template.rglob("*"):
                if path.is_file() and path.suffix in (".js", ".json", ".html", ".mjs"):
                    lines.update(x.strip() for x in path.read_text(errors="replace").splitlines())
            self._template_lines = frozenset(lines)
        changed = [ln[1:].strip() for ln in diff.splitlines()
                   if ln[:1] in "+-" and not ln.startswith(("+++", "---"))]
        return all(not c or c in self._template_lines for c in changed)

    # --- using the library -------------------------------------------------------------------------------------

    async def assist(self, seen: Seen, recall: bool = True) -> Assist:
        """Look up every failure of a failing validation; apply the fixers of exact hits (written to the project
        here: the caller re-validates and calls `settle`)."""
        out = Assist()
        if not self.policy.cases or seen.ok:
            return out
        files: Files | None = None
        planned: set[str] = set()
        for failure, sig in seen.failing:
            case = await self.library.exact(sig, self.scopes)
            if case is not None:
                await self.library.store.count(case, "hits")
                fixer = fixer_named(case.fix.fixer) if self.policy.fixers and self.policy.fixer_rounds else None
                if fixer is not None:
                    files = files if files is not None else await asyncio.to_thread(read_files, self.project)
                    plan = fixer.plan(FixContext(self.project, files, self.history, self.template), failure)
                    if plan is not None and not planned & set(plan.files):
                        planned |= set(plan.files)
                        out.applied.append(Applied(case, sig, plan))
                        continue
                if len(out.offered) < self.policy.offer_limit:
                    out.offered.append((case, sig))
                continue
            if recall and self.policy.recall == "auto" and len(out.recalled) < self.policy.offer_limit:
                for near, score in await self.library.near(sig, self.scopes, self.policy.recall_top_k,
                                                           self.policy.recall_min_score, self.policy.recall_wait_s):
                    if all(near.key != c.key for c, _, _ in out.recalled):
                        out.recalled.append((near, score, sig))
            entry = rule_for(failure.message, self.pack)
            if entry is not None and all(e.id != entry.id for e, _ in out.advised):
                out.advised.append((entry, sig))
        if out.applied:
            await asyncio.to_thread(self._write, [a.plan for a in out.applied])
            for a in out.applied:
                self.history.mark_fixer(a.signature.key, a.plan.fixer)
                await self.library.store.count(a.case, "applied")
        for case, sig in out.offered:
            await self.library.store.count(case, "offered")
            await self._hit("offered", case, sig)
        for case, score, sig in out.recalled:
            await self._hit("recalled", case, sig, score=score)
        for _entry, sig in out.advised:
            await self.emit(CaseHit(run_id=self.run_id, signature=sig.key, gate=sig.gate, shape=sig.shape,
                                    action="advised", fixer=None, files=[], estimate="none"))
        return out

    def _write(self, plans: list[FixPlan]) -> None:
        pdir = ProjectDir(self.project)  # never through a link the sandbox planted (tier2.hostio)
        for plan in plans:
            for rel, content in plan.files.items():
                try:
                    pdir.write_text(rel, content)
                except UnsafePath as exc:
                    raise ValueError(f"fixer {plan.fixer} planned a path outside the project: {rel!r} ({exc})") \
                        from None

    async def settle(self, assist: Assist, after: Seen) -> None:
        """After the re-validation: did each applied fixer make its gate pass? (counted; a fixer that fails more
        often than it fixes is dropped from its case)"""
        for a in assist.applied:
            a.fixed = a.signature.gate in after.passed and all(s.key != a.signature.key for _, s in after.failing)
            await self.library.store.count(a.case, "fixed" if a.fixed else "fix_failed")
            if not a.fixed:
                stats = await self.library.store.stats(a.case)
                if stats["fix_failed"] > stats["fixed"] + 1:
                    await self.library.store.drop_fixer(a.case)
            await self._hit("applied", a.case, a.signature, fixed=a.fixed, files=sorted(a.plan.files))

    async def _hit(self, action: HitAction, case: Case, sig: Signature, *, fixed: bool | None = None,
                   files: list[str] | None = None, score: float | None = None) -> None:
        calls, tokens = self.usage()
        estimate: Estimate
        if case.cost.model_calls:
            replaced, replaced_tokens, estimate = case.cost.model_calls, case.cost.tokens or 0, "recorded"
        else:  # at least the one call that would have had to read the failure: the run's mean call so far
            replaced, replaced_tokens, estimate = 1, (tokens // calls if calls else 0), "minimum"
        if action != "applied" or not fixed:
            replaced, replaced_tokens, estimate = 0, 0, "none"
        await self.emit(CaseHit(run_id=self.run_id, signature=sig.key, gate=sig.gate, shape=sig.shape,
                                action=action, scope=_public(case.scope), fixer=case.fix.fixer, fixed=fixed,
                                files=files or [], score=score, replaced_model_calls=replaced,
                                replaced_tokens=replaced_tokens, estimate=estimate))
        if self.trajectory is not None:
            await self.trajectory.record(self.run_id, CaseCallRecord(
                call_id=f"case-{uuid.uuid4().hex[:12]}", agent="library", state="success", started_at=time.time(),
                duration_ms=0.0, signature=sig.key, gate=sig.gate, action=action, fixer=case.fix.fixer, fixed=fixed,
                replaced_model_calls=replaced, replaced_tokens=replaced_tokens))

    async def emit(self, event: Tier2Event) -> None:
        if self.emit_to is not None:
            await self.emit_to(event)

    # --- what the writer reads ---------------------------------------------------------------------------------

    def message(self, assist: Assist) -> str:
        """The library's part of the next message to the writer (empty when it has nothing to say)."""
        lines: list[str] = []
        for a in assist.applied:
            verdict = "the gate passes now" if a.fixed else "the gate still fails"
            lines.append(f"- Applied known fix `{a.plan.fixer}` for {a.signature.gate} ({a.signature.shape}): "
                         f"{a.plan.note}; re-validated: {verdict}.")
        for case, sig in assist.offered:
            lines.append(f"- Known fix (verified {case.verified}x) for {sig.gate}: {sig.shape}\n  rule: "
                         f"{case.fix.rule or '-'}\n  files: {', '.join(case.fix.files) or '-'}"
                         + (f"\n```diff\n{case.fix.diff[:self.policy.diff_chars]}\n```" if case.fix.diff else ""))
        for case, score, _sig in assist.recalled:
            # a shared case another tenant's run recorded: its message text is that run's, not ours to show
            shown = case.shape if case.scope == self.own_scope or case.source.startswith("seed:") else "(masked)"
            lines.append(f"- Similar past failure (similarity {score:.2f}) {case.gate}: {shown}\n  its fix: "
                         f"{case.fix.rule or '-'}; files: {', '.join(case.fix.files) or '-'}"
                         + (f"\n```diff\n{case.fix.diff[:self.policy.diff_chars // 2]}\n```" if case.fix.diff else ""))
        for entry, sig in assist.advised:
            lines.append(f"- Rule for {sig.gate} ({sig.shape}): {entry.rule()}")
        if not lines:
            return ""
        return "Debug case library (fixes verified by the gates in earlier runs):\n" + "\n".join(lines)


def _public(scope: str) -> str:
    """What an event says about a scope: never the tenant's id."""
    return "engine" if scope == ENGINE_SCOPE else "tenant"

"""Seed the case library with verified engine facts: inject known defects into copies of the pack's genre
templates and record how each was fixed — only once the gates said so.

For each genre template: copy it, validate (it must pass: the last-pass state the fixers restore from), then per
defect: a fresh copy, inject the defect, validate (it must fail), apply the fixer the registry has for the failure's
class, validate again; when the failing gate passes, the case is recorded with that fixer. When the fixer does not
make it pass, the defect's known repair (restoring the template's files) is applied and validated, and the case is
recorded as advice (the diff, no fixer). Cases go to the ``engine`` scope (a template copy holds no tenant content).

Defects: the validator's mutation catalogue (passed in by the caller: `tier2.validators.mutants`) and the defect
taxonomy's classes that have a deterministic operator here (`TAXONOMY_DEFECTS`).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tier2.learning.fixers import FixContext, first_plan
from tier2.learning.history import read_files
from tier2.learning.library import CaseLibrary, LibraryRun
from tier2.packs import Genre, Pack
from tier2.settings.policy import LearningPolicy
from tier2.store.cases import ENGINE_SCOPE, Case
from tier2.validators import ValidationReport, ValidationRunner
from tier2.workspace import new_project

__all__ = ["SeedDefect", "SeedResult", "TAXONOMY_DEFECTS", "seed_cases"]


@dataclass(frozen=True)
class SeedDefect:
    name: str
    apply: Callable[[Path], None]
    #: where it comes from: ``mutants`` or ``taxonomy:<entry id>``
    source: str = "mutants"


@dataclass
class SeedResult:
    genre: str
    defect: str
    source: str
    status: str  # fixed_by_fixer | fixed_by_repair | not_failing | not_fixed | not_applicable | template_fails
    signatures: list[str] = field(default_factory=list)
    fixer: str | None = None
    cases: list[str] = field(default_factory=list)
    detail: str = ""

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def _scene_with(root: Path, method: str) -> tuple[Path, re.Match[str]]:
    for path in sorted((root / "src").rglob("*.js")):
        text = path.read_text()
        m = re.search(rf"^\s*{method}\s*\([^)]*\)\s*\{{", text, re.M)
        if m and "extends" in text:
            return path, m
    raise LookupError(f"no scene with {method}() under {root / 'src'}")


def _inject_create(code: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path, m = _scene_with(root, "create")
        text = path.read_text()
        path.write_text(text[:m.end()] + "\n" + code + "\n" + text[m.end():])
    return apply


def _drop_data_key(root: Path) -> None:
    """The first top-level number of the last data table that has one goes missing."""
    for path in sorted((root / "data").glob("*.json"), reverse=True):
        table = json.loads(path.read_text())
        key = next((k for k, v in table.items() if isinstance(v, int | float) and not isinstance(v, bool)), None) \
            if isinstance(table, dict) else None
        if key is not None:
            del table[key]
            path.write_text(json.dumps(table, indent=2) + "\n")
            return
    raise LookupError(f"no data table with a top-level number under {root / 'data'}")


#: taxonomy classes with a deterministic operator (the others stay advice: their rule matches by message pattern)
TAXONOMY_DEFECTS: tuple[SeedDefect, ...] = (
    SeedDefect("config_field_missing", _drop_data_key, "taxonomy:seed-proactive-002"),
    SeedDefect("undefined_before_init", _inject_create("    this.panelNotMadeYet.setText('x');"),
               "taxonomy:seed-reactive-003"),
    SeedDefect("call_stack_exceeded", _inject_create("    (function recurse(n) { return recurse(n + 1) + 1; })(0);"),
               "taxonomy:seed-reactive-007"),
)


async def _validate(runner: ValidationRunner, project: Path, out: Path) -> ValidationReport:
    shutil.rmtree(project / "dist", ignore_errors=True)
    return await runner.validate_project(project, out)


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, ignore=shutil.ignore_patterns("dist", "node_modules", "reports"))
    return dest


async def _seed_one(library: CaseLibrary, runner: ValidationRunner, pack: Pack, genre: Genre, base: Path,
                    base_report: ValidationReport, defect: SeedDefect, work: Path,
                    policy: LearningPolicy) -> SeedResult:
    result = SeedResult(genre.id, defect.name, defect.source, "not_applicable")
    project = _copy(base, work / f"{genre.id}-{defect.name}")
    run = LibraryRun(library, run_id=f"seed-{genre.id}-{defect.name}", tenant=None, pack=pack, project=project,
                     brief="", policy=policy.model_copy(update={"recall": "off"}), scope=ENGINE_SCOPE,
                     source=f"seed:{defect.source}:{defect.name}", claim_fixers=False)
    await run.observe_report(base_report)  # the template passes: the state the fixers restore from
    try:
        defect.apply(project)
    except (LookupError, RuntimeError, ValueError, KeyError, OSError) as exc:  # the operator does not apply here
        result.detail = str(exc)[:300]
        return result
    failing = await run.observe_report(await _validate(runner, project, work / "reports" / f"{project.name}-1"))
    if failing.ok:
        result.status = "not_failing"
        return result
    result.signatures = [f"{s.gate}: {s.shape}" for _, s in failing.failing]
    files = read_files(project)
    applied: dict[str, str] = {}
    for failure, sig in failing.failing:
        plan = first_plan(FixContext(project, files, run.history, run.template), failure)
        if plan is None or set(plan.files) & set(applied):
            continue
        for rel, content in plan.files.items():
            (project / rel).write_text(content)
            applied[rel] = plan.fixer
        run.history.mark_fixer(sig.key, plan.fixer)
        result.fixer = plan.fixer
    after = await run.observe_report(await _validate(runner, project, work / "reports" / f"{project.name}-2"))
    if after.ok and applied:
        result.status = "fixed_by_fixer"
    else:  # the known repair: the template's files back (the fixer, if any, is not credited)
        for pending in run.history.pending.values():
            pending.fixer = None
        result.fixer = None
        for rel, content in read_files(base).items():
            if read_files(project).get(rel) != content:
                (project / rel).write_text(content)
        final = await run.observe_report(await _validate(runner, project, work / "reports" / f"{project.name}-3"))
        result.status = "fixed_by_repair" if final.ok else "not_fixed"
    result.cases = [f"{c.gate}: {c.shape} -> {c.fix.fixer or 'diff'}" for c in _unique(run.recorded)]
    return result


def _unique(cases: list[Case]) -> list[Case]:
    return list({c.key: c for c in cases}.values())


async def seed_cases(library: CaseLibrary, runner: ValidationRunner, pack: Pack, defects: Sequence[SeedDefect],
                     policy: LearningPolicy, genres: Sequence[str] | None = None,
                     progress: Callable[[SeedResult], None] | None = None) -> list[SeedResult]:
    """Seed the engine scope from every genre template (or ``genres``) × defect; one result per pair."""
    results: list[SeedResult] = []
    chosen = [pack.genres[g] for g in genres] if genres else list(pack.genres.values())
    with tempfile.TemporaryDirectory(prefix="tier2-seed-") as tmp:
        work = Path(tmp)
        for genre in chosen:
            base = Path(new_project(pack, work / f"{genre.id}-base", genre=genre.id).path)
            base_report = await _validate(runner, base, work / "reports" / f"{genre.id}-base")
            if not base_report.passed:
                results.append(SeedResult(genre.id, "-", "-", "template_fails",
                                          detail=", ".join(g.id for g in base_report.failures)))
                continue
            for defect in defects:
                res = await _seed_one(library, runner, pack, genre, base, base_report, defect, work, policy)
                results.append(res)
                if progress is not None:
                    progress(res)
    return results

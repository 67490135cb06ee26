"""`tier2 packs check`: prove a capability pack works, genre by genre, on real components.

For each genre: its schemas are valid JSON Schemas; the offline builder's tables for several briefs are
deterministic, validate against them and pass the genre's own checks; a project made from the template with those
tables builds and passes every gate in Chromium — the genre probe wins it by playing and loses it by playing, and
the genre gate's witnesses show. Pack-wide: the manifest and genre manifests load, the toolchain is installed at
the pinned engine version, and every skill an agent of the pack gets — the core skills (``skills/``) and the ones
the manifest names — really loads in AgentScope (which skips a broken skill silently).
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema

from tier2.browser import BrowserPool, find_chromium
from tier2.errors import PackError, Tier2Error
from tier2.packs import Genre, Pack, load_pack
from tier2.packs.docs import sync_skill
from tier2.packs.retrieval import load_docs_index, load_facet
from tier2.settings.loader import PolicyStore, Settings, load_security
from tier2.validators import ValidationRunner
from tier2.validators.data.pack_checks import genre_data_gates
from tier2.validators.l2.genre import observed_genre
from tier2.workspace import project_workspace
from tier2.workspace.projects import new_project

__all__ = ["CheckLine", "SAMPLE_BRIEFS", "check_pack"]

#: briefs that vary theme and difficulty words; the genre's own first brief word is added to each
SAMPLE_BRIEFS = ("a {word} game set in a neon city at night, hard",
                 "a relaxing {word} game with cute animals in a snowy forest",
                 "{word}: ancient desert ruins, three lives, fast and challenging")


@dataclass
class CheckLine:
    what: str
    ok: bool
    detail: str = ""


async def _skills(pack: Pack, home: Path) -> CheckLine:
    """`Pack.agent_skill_dirs` (the core skills, then the pack's) seeded into a workspace as the writer's is, and
    every one listed by AgentScope under its own name."""
    ws = project_workspace("pack-check", home / "project", home / "agent", pack.agent_skill_dirs)
    (home / "project").mkdir(parents=True, exist_ok=True)
    await ws.initialize()
    try:
        loaded = {s.name for s in await ws.list_skills()}
    finally:
        await ws.close()
    missing = [d.name for d in pack.agent_skill_dirs if d.name not in loaded]
    return CheckLine("skills load in AgentScope", not missing,
                     f"missing: {', '.join(missing)}" if missing else ", ".join(sorted(loaded)))


def _tables_lines(genre: Genre, briefs: list[str]) -> tuple[list[CheckLine], dict[str, dict[str, Any]]]:
    lines: list[CheckLine] = []
    for table, schema in genre.schemas.items():
        try:
            jsonschema.Draft202012Validator.check_schema(schema)
        except jsonschema.SchemaError as exc:
            lines.append(CheckLine(f"{genre.id}: schema {table}", False, exc.message[:300]))
    built: dict[str, dict[str, Any]] = {}
    for brief in briefs:
        tables = genre.build_tables(brief)
        again = genre.build_tables(brief)
        problems = [] if json.dumps(tables, sort_keys=True) == json.dumps(again, sort_keys=True) else [
            "not deterministic: the same brief gave different tables"]
        problems += [f"{g.id}: {g.summary}" for g in genre_data_gates(genre, tables) if not g.passed]
        lines.append(CheckLine(f"{genre.id}: tables for “{brief}”", not problems, "; ".join(problems)[:600]))
        built[brief] = tables
    titles = {json.dumps(t.get("theme.json", {}).get("title")) for t in built.values()}
    lines.append(CheckLine(f"{genre.id}: different briefs make different games", len(titles) == len(built),
                           f"{len(titles)} distinct titles for {len(built)} briefs"))
    return lines, built


async def _play_line(runner: ValidationRunner, pack: Pack, genre: Genre, brief: str, tables: dict[str, Any],
                     work: Path) -> CheckLine:
    project = work / f"{genre.id}-project"
    shutil.rmtree(project, ignore_errors=True)
    new_project(pack, project, genre=genre.id)
    for name, table in tables.items():
        (project / "data" / name).write_text(json.dumps(table, indent=2, ensure_ascii=False) + "\n")
    report = await runner.validate_project(project, work / f"{genre.id}-report")
    failing = [f"{g.id}: {g.summary}" for g in report.gates if g.blocking]
    latch = next((g.evidence.get("outcomes") for g in report.gates if g.id == "l1.latch_split"), None)
    trace = runner.last_trace
    witness, seen = observed_genre(trace, pack, genre.id) if trace is not None else (None, [])
    ok = not failing and witness == genre.id
    detail = (f"won/lost by playing: {latch}; genre witnesses: {'; '.join(seen) or 'none shown'}; "
              f"{report.duration_ms} ms; screenshot {report.screenshots[-1] if report.screenshots else '-'}")
    return CheckLine(f"{genre.id}: template plays (win, lose, witnesses)", ok,
                     detail + ("; FAILING " + " | ".join(failing)[:900] if failing else ""))


def _docs_line(pack: Pack, settings: Settings) -> CheckLine:
    """The docs facet's index builds (or loads from its cache) and answers the facet's own check query."""
    what = "engine docs index builds and answers"
    try:
        facet = load_facet(pack)
        index = load_docs_index(pack, settings.docs_cache)
    except (PackError, OSError) as exc:
        return CheckLine(what, False, str(exc)[:300])
    meta = index.meta
    detail = (f"{meta['engine']} {meta['engine_version']}: {meta['sections']} sections, types sha256 "
              f"{meta['types_sha256'][:12]}, {meta['cache']}")
    query, expect = facet.spec.check.get("query"), facet.spec.check.get("expect")
    if not query or not expect:
        return CheckLine(what, True, detail + "; no check query in the facet")
    got = [h.section.id for h in index.search(query, 3)]
    ok = bool(got) and got[0] == expect
    return CheckLine(what, ok, detail + f"; “{query}” → {got[0] if got else 'nothing'}"
                     + ("" if ok else f" (expected {expect})"))


async def check_pack(settings: Settings, pack_id: str, genres: list[str] | None = None, play: bool = True,
                     out: Path | None = None, progress: Callable[[CheckLine], None] | None = None) -> list[CheckLine]:
    """Every check as a line (see the module doc); never raises for a broken pack — it fails a line."""
    lines: list[CheckLine] = []

    def add(line: CheckLine) -> None:
        lines.append(line)
        if progress is not None:
            progress(line)

    try:
        pack = load_pack(settings.packs_dir, pack_id, settings.skills_dir)
    except PackError as exc:
        add(CheckLine("manifest and genres load", False, str(exc)))
        return lines
    add(CheckLine("manifest and genres load", True, f"{pack.ref}: {', '.join(pack.genres)}"))
    try:
        pack.check_toolchain()
        add(CheckLine("toolchain (node, esbuild, engine pin)", True, f"{pack.manifest.engine.name} "
                      f"{pack.manifest.engine.version}"))
    except Tier2Error as exc:
        add(CheckLine("toolchain (node, esbuild, engine pin)", False, str(exc)))
        play = False
    work = out or Path(tempfile.mkdtemp(prefix="tier2-pack-check-"))
    add(await _skills(pack, work / "skills-home"))
    try:
        stale = sync_skill(pack, check=True)
        add(CheckLine("data-tables skill matches the schemas", not stale,
                      f"stale: run `tier2 packs docs {pack.id}`" if stale else ""))
    except PackError as exc:
        add(CheckLine("data-tables skill matches the schemas", False, str(exc)))
    add(_docs_line(pack, settings))
    chosen = [pack.genre(g) for g in genres] if genres else list(pack.genres.values())
    security = load_security(settings.config_dir)
    pool = BrowserPool(find_chromium(settings.chromium, security.browser.executables), security.browser.args,
                       isolation=security.sandbox.isolation) if play else None
    try:
        for genre in chosen:
            briefs = [b.format(word=genre.spec.brief_words[0]) for b in SAMPLE_BRIEFS]
            try:
                table_lines, built = _tables_lines(genre, briefs)
            except Exception as exc:  # a builder that crashes fails its genre, the others still run
                add(CheckLine(f"{genre.id}: builder", False, f"{type(exc).__name__}: {exc}"))
                continue
            for line in table_lines:
                add(line)
            if pool is not None:
                runner = ValidationRunner(pool, pack, PolicyStore(settings.config_dir).snapshot())
                add(await _play_line(runner, pack, genre, briefs[0], built[briefs[0]], work))
    finally:
        if pool is not None:
            await pool.close()
    return lines

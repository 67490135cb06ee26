"""Use cases that read files of a tenant's run project: the artifacts (the game under ``dist/``, the screenshot,
the validation screenshots), the design documents and spec as the design phase writes them, the validation report
(the latest check while the run goes on, the delivered one after).

What may be read is an allow-list per use case, and every file is resolved with the project path policy
(`tier2.workspace.paths.resolve_inside`: its real path, symlinks followed, must be inside the project) before it is
opened — a symlink a game or an upload planted never reaches a file outside its project. Another tenant's run is
`NotFound` (`require_run`), like a name that is not allowed or does not exist.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from tier2.errors import NotFound
from tier2.events import TERMINAL_STATUSES
from tier2.runs.design_phase import DOCS_DIR, SPEC_FILE
from tier2.runs.queries import project_dir, require_run
from tier2.runs.runtime import Runtime
from tier2.workspace.paths import PathRefused, resolve_inside

__all__ = ["ARTIFACT_FILES", "DesignDoc", "DesignFiles", "REPORTS_DIR", "ValidationReport", "artifact_path",
           "design_files", "play_file", "validation_report"]

#: files of a project that may be downloaded, besides anything under ``dist/`` and the reports' screenshots
ARTIFACT_FILES = frozenset({"delivery.json", "screenshot.png"})
#: where the validator writes its reports (``<check>/report.json`` and the screenshots beside it)
REPORTS_DIR: Final = ".tier2/reports"
MAX_DESIGN_DOCS: Final = 40
MAX_DOC_BYTES: Final = 256_000
MAX_SPEC_BYTES: Final = 1_000_000
MAX_REPORT_BYTES: Final = 8_000_000
_BAD_NAME = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


@dataclass(frozen=True)
class DesignDoc:
    path: str  # project-relative
    text: str
    bytes: int
    truncated: bool


@dataclass(frozen=True)
class DesignFiles:
    docs: list[DesignDoc]
    #: ``design/spec.json`` parsed (None: not written yet, or unreadable: ``spec_error`` says which)
    spec: dict[str, Any] | None
    spec_error: str | None
    project_dir: str


@dataclass(frozen=True)
class ValidationReport:
    path: str  # project-relative
    report: dict[str, Any]
    project_dir: str


def _clean_name(name: str) -> bool:
    """Whether ``name`` can name a file at all (short, clean text, relative)."""
    return 0 < len(name) <= 512 and not name.startswith("/") and _BAD_NAME.search(name) is None


def _inside(root: Path, rel: str) -> Path | None:
    """The real path of ``root/rel`` when the path policy puts it inside the project, else None."""
    try:
        return Path(resolve_inside(str(root), str(root / rel)))
    except PathRefused:
        return None


def _under(path: Path, root: Path, sub: str) -> bool:
    return path.is_relative_to(_real(root / sub))


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


async def _root(rt: Runtime, tenant: str, run_id: str) -> Path:
    """The real path of the tenant's run's project (`NotFound` for another tenant's run)."""
    return _real(project_dir(await require_run(rt.store, tenant, run_id)))


async def artifact_path(rt: Runtime, tenant: str, run_id: str, name: str) -> Path:
    """The file ``name`` of the run's project if it may be downloaded — ``dist/*``, ``screenshot.png``, a PNG of
    a validation report (``.tier2/reports/*/*.png``) — else `NotFound` (``delivery.json`` is served as its public
    view: `tier2.runs.queries.run_delivery`)."""
    root = await _root(rt, tenant, run_id)
    missing = NotFound("no such artifact (available: delivery.json, screenshot.png, dist/*, the validation "
                       "report's screenshots)")
    target = _inside(root, name) if _clean_name(name) else None
    if target is None or not target.is_file():
        raise missing
    allowed = (target.relative_to(root).as_posix() in ARTIFACT_FILES and name in ARTIFACT_FILES) \
        or _under(target, root, "dist") or (_under(target, root, REPORTS_DIR) and target.suffix == ".png")
    if not allowed:
        raise missing
    return target


async def play_file(rt: Runtime, tenant: str, run_id: str, name: str) -> Path:
    """A file of the run's built game (``dist/<name>``), else `NotFound`."""
    root = await _root(rt, tenant, run_id)
    target = _inside(root, f"dist/{name}") if _clean_name(name) else None
    if target is None or not target.is_file() or not _under(target, root, "dist"):
        raise NotFound("no such file in the game")
    return target


def _read_docs(root: Path) -> list[DesignDoc]:
    folder = _inside(root, DOCS_DIR)
    if folder is None or not folder.is_dir():
        return []
    names = sorted((p.name for p in folder.iterdir() if p.suffix == ".md"), key=lambda n: (n != "GDD.md", n))
    docs: list[DesignDoc] = []
    for name in names[:MAX_DESIGN_DOCS]:
        path = _inside(root, f"{DOCS_DIR}/{name}")
        if path is None or not path.is_file():
            continue
        with path.open("rb") as fh:
            raw = fh.read(MAX_DOC_BYTES + 1)
        size = path.stat().st_size
        docs.append(DesignDoc(f"{DOCS_DIR}/{name}", raw[:MAX_DOC_BYTES].decode("utf-8", "replace"), size,
                              len(raw) > MAX_DOC_BYTES))
    return docs


def _read_json(path: Path, limit: int, what: str) -> tuple[dict[str, Any] | None, str | None]:
    if path.stat().st_size > limit:
        return None, f"{what} is larger than {limit} bytes"
    try:
        data = json.loads(path.read_bytes())
    except (ValueError, UnicodeDecodeError):
        return None, f"{what} is not valid JSON (it may be being written)"
    return (data, None) if isinstance(data, dict) else (None, f"{what} is not a JSON object")


def _read_design(root: Path) -> tuple[list[DesignDoc], dict[str, Any] | None, str | None]:
    spec_path = _inside(root, SPEC_FILE)
    spec, error = (None, None)
    if spec_path is not None and spec_path.is_file():
        spec, error = _read_json(spec_path, MAX_SPEC_BYTES, SPEC_FILE)
    return _read_docs(root), spec, error


async def design_files(rt: Runtime, tenant: str, run_id: str) -> DesignFiles:
    """The design documents (``docs/design/*.md``, the GDD first) and ``design/spec.json`` as they are now: while
    the design phase runs, what it has written so far."""
    root = await _root(rt, tenant, run_id)
    docs, spec, error = await asyncio.to_thread(_read_design, root)
    return DesignFiles(docs, spec, error, str(root))


def _report_candidates(root: Path, named: str | None) -> list[Path]:
    reports = _inside(root, REPORTS_DIR)
    if reports is None or not reports.is_dir():
        return []
    found = _inside(root, named) if named else None
    if found is not None and found.is_file() and _under(found, root, REPORTS_DIR):
        return [found]
    checks = [p for d in reports.iterdir() if (p := _inside(root, f"{REPORTS_DIR}/{d.name}/report.json"))]
    found_checks = [p for p in checks if p.is_file() and _under(p, root, REPORTS_DIR)]
    return sorted(found_checks, key=lambda p: p.stat().st_mtime, reverse=True)


def _read_report(root: Path, named: str | None) -> tuple[str, dict[str, Any]] | None:
    for path in _report_candidates(root, named):
        report, _ = _read_json(path, MAX_REPORT_BYTES, "report.json")
        if report is not None:
            return path.relative_to(root).as_posix(), report
    return None


async def validation_report(rt: Runtime, tenant: str, run_id: str) -> ValidationReport:
    """The run's validation report (``.tier2/reports/<check>/report.json``): once the run has ended, the one its
    delivery names; before, the latest check so far. `NotFound` when there is none (yet)."""
    record = await require_run(rt.store, tenant, run_id)
    root = _real(project_dir(record))
    named: str | None = None
    if record.status in TERMINAL_STATUSES:
        delivery = _inside(root, "delivery.json")
        if delivery is not None and delivery.is_file():
            data, _ = _read_json(delivery, MAX_REPORT_BYTES, "delivery.json")
            path = ((data or {}).get("verification") or {}).get("report")
            if isinstance(path, str) and path:
                named = os.path.relpath(os.path.realpath(path), root) if os.path.isabs(path) else path
    found = await asyncio.to_thread(_read_report, root, named)
    if found is None:
        raise NotFound("no validation report yet")
    return ValidationReport(found[0], found[1], str(root))

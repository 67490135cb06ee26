"""Use cases that read files of a tenant's run project: the artifacts (the game under ``dist/``, the screenshot,
the validation screenshots), the design documents and spec as the design phase writes them, the validation report
(the latest check while the run goes on, the delivered one after).

What may be read is an allow-list per use case, and every file is read through `tier2.hostio.ProjectDir`: opened
relative to the project root's descriptor with ``O_NOFOLLOW`` at every component, a regular file with one name only
— a symlink, FIFO or hard link a game, the sandbox or an upload planted is refused (404 / an error in the view),
never followed, never blocks. Another tenant's run is
`NotFound` (`require_run`), like a name that is not allowed or does not exist.
"""

from __future__ import annotations

import asyncio
import json
import mimetypes
import os
import re
import stat
from dataclasses import dataclass
from typing import Any, Final

from tier2.design.paths import DOCS_DIR, SPEC_FILE
from tier2.errors import NotFound
from tier2.events import TERMINAL_STATUSES
from tier2.hostio import ProjectDir, UnsafePath
from tier2.runs.process.runtime import Runtime
from tier2.runs.queries import project_dir, require_run

__all__ = ["ARTIFACT_FILES", "DesignDoc", "DesignFiles", "REPORTS_DIR", "ServedFile", "ValidationReport",
           "artifact_file", "design_files", "play_file", "validation_report"]

#: files of a project that may be downloaded, besides anything under ``dist/`` and the reports' screenshots
ARTIFACT_FILES = frozenset({"delivery.json", "screenshot.png"})
#: where the validator writes its reports (``<check>/report.json`` and the screenshots beside it)
REPORTS_DIR: Final = ".tier2/reports"
MAX_DESIGN_DOCS: Final = 40
MAX_DOC_BYTES: Final = 256_000
MAX_SPEC_BYTES: Final = 1_000_000
MAX_REPORT_BYTES: Final = 8_000_000
#: the largest project file served over HTTP (a game's bundle and assets)
MAX_ARTIFACT_BYTES: Final = 64_000_000
_BAD_NAME = re.compile("[\x00-\x1f\x7f\ud800-\udfff]")


@dataclass(frozen=True)
class ServedFile:
    """A project file read for HTTP: its project-relative path, bytes and media type."""

    path: str
    data: bytes
    media_type: str


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


def _rel(root: ProjectDir, name: str) -> str | None:
    """``name`` as a checked project-relative path (None: it cannot name a project file)."""
    if not _clean_name(name):
        return None
    try:
        return root.rel(name)
    except UnsafePath:
        return None


async def _root(rt: Runtime, tenant: str, run_id: str) -> ProjectDir:
    """The tenant's run's project (`NotFound` for another tenant's run)."""
    return ProjectDir(project_dir(await require_run(rt.store, tenant, run_id)))


def _served(root: ProjectDir, rel: str, missing: NotFound) -> ServedFile:
    try:
        data = root.read_bytes(rel, max_bytes=MAX_ARTIFACT_BYTES)
    except FileNotFoundError:
        raise missing from None
    except UnsafePath as exc:  # a link, FIFO, device, directory, hard link or an oversized file: never followed
        raise NotFound(f"{rel} cannot be served: {exc}") from None
    except OSError:
        raise missing from None
    return ServedFile(rel, data, mimetypes.guess_type(rel)[0] or "text/plain")


async def artifact_file(rt: Runtime, tenant: str, run_id: str, name: str) -> ServedFile:
    """The file ``name`` of the run's project if it may be downloaded — ``dist/*``, ``screenshot.png``, a PNG of
    a validation report (``.tier2/reports/*/*.png``) — else `NotFound` (``delivery.json`` is served as its public
    view: `tier2.runs.queries.run_delivery`). Read through `ProjectDir`: a link is refused, never followed."""
    root = await _root(rt, tenant, run_id)
    missing = NotFound("no such artifact (available: delivery.json, screenshot.png, dist/*, the validation "
                       "report's screenshots)")
    rel = _rel(root, name)
    allowed = rel is not None and (
        (rel in ARTIFACT_FILES and name in ARTIFACT_FILES) or rel.startswith("dist/")
        or (rel.startswith(REPORTS_DIR + "/") and rel.endswith(".png")))
    if rel is None or not allowed:
        raise missing
    return await asyncio.to_thread(_served, root, rel, missing)


async def play_file(rt: Runtime, tenant: str, run_id: str, name: str) -> ServedFile:
    """A file of the run's built game (``dist/<name>``), else `NotFound`."""
    root = await _root(rt, tenant, run_id)
    rel = _rel(root, f"dist/{name}") if _clean_name(name) else None
    missing = NotFound("no such file in the game")
    if rel is None or not rel.startswith("dist/"):
        raise missing
    return await asyncio.to_thread(_served, root, rel, missing)


def _read_docs(root: ProjectDir) -> list[DesignDoc]:
    names = sorted((n for n, st in root.listdir(DOCS_DIR) if n.endswith(".md") and stat.S_ISREG(st.st_mode)),
                   key=lambda n: (n != "GDD.md", n))
    docs: list[DesignDoc] = []
    for name in names[:MAX_DESIGN_DOCS]:
        try:
            with root.open_read(f"{DOCS_DIR}/{name}", max_bytes=None) as fh:
                raw = fh.read(MAX_DOC_BYTES + 1)
                size = os.fstat(fh.fileno()).st_size
        except OSError:
            continue  # gone, or no longer a regular file
        docs.append(DesignDoc(f"{DOCS_DIR}/{name}", raw[:MAX_DOC_BYTES].decode("utf-8", "replace"), size,
                              len(raw) > MAX_DOC_BYTES))
    return docs


def _read_json(root: ProjectDir, rel: str, limit: int, what: str) -> tuple[dict[str, Any] | None, str | None]:
    try:
        raw = root.read_bytes(rel, max_bytes=None if limit <= 0 else limit)
    except FileNotFoundError:
        return None, f"{what} is missing"
    except UnsafePath as exc:
        return None, (f"{what} is larger than {limit} bytes" if "over the limit" in str(exc) else
                      f"{what} cannot be read: {exc}")
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None, f"{what} is not valid JSON (it may be being written)"
    return (data, None) if isinstance(data, dict) else (None, f"{what} is not a JSON object")


def _read_design(root: ProjectDir) -> tuple[list[DesignDoc], dict[str, Any] | None, str | None]:
    spec, error = (None, None)
    st = root.lstat(SPEC_FILE)
    if st is not None:
        spec, error = _read_json(root, SPEC_FILE, MAX_SPEC_BYTES, SPEC_FILE)
    return _read_docs(root), spec, error


async def design_files(rt: Runtime, tenant: str, run_id: str) -> DesignFiles:
    """The design documents (``docs/design/*.md``, the GDD first) and ``design/spec.json`` as they are now: while
    the design phase runs, what it has written so far."""
    root = await _root(rt, tenant, run_id)
    docs, spec, error = await asyncio.to_thread(_read_design, root)
    return DesignFiles(docs, spec, error, str(root.root))


def _report_candidates(root: ProjectDir, named: str | None) -> list[str]:
    if not root.is_dir(REPORTS_DIR):
        return []
    if named and named.startswith(REPORTS_DIR + "/") and root.is_file(named):
        return [named]
    checks = [(st.st_mtime, f"{REPORTS_DIR}/{d}/report.json") for d, _ in root.listdir(REPORTS_DIR)
              if (st := root.lstat(f"{REPORTS_DIR}/{d}/report.json")) is not None and stat.S_ISREG(st.st_mode)]
    return [rel for _, rel in sorted(checks, reverse=True)]


def _read_report(root: ProjectDir, named: str | None) -> tuple[str, dict[str, Any]] | None:
    for rel in _report_candidates(root, named):
        report, _ = _read_json(root, rel, MAX_REPORT_BYTES, "report.json")
        if report is not None:
            return rel, report
    return None


def _named_report(root: ProjectDir) -> str | None:
    """The report ``delivery.json`` names (project-relative), read without following links."""
    data, _ = _read_json(root, "delivery.json", MAX_REPORT_BYTES, "delivery.json")
    path = ((data or {}).get("verification") or {}).get("report")
    if not isinstance(path, str) or not path:
        return None
    try:
        return root.rel(path)
    except UnsafePath:
        return None


async def validation_report(rt: Runtime, tenant: str, run_id: str) -> ValidationReport:
    """The run's validation report (``.tier2/reports/<check>/report.json``): once the run has ended, the one its
    delivery names; before, the latest check so far. `NotFound` when there is none (yet)."""
    record = await require_run(rt.store, tenant, run_id)
    root = ProjectDir(project_dir(record))
    named = await asyncio.to_thread(_named_report, root) if record.status in TERMINAL_STATUSES else None
    found = await asyncio.to_thread(_read_report, root, named)
    if found is None:
        raise NotFound("no validation report yet")
    return ValidationReport(found[0], found[1], str(root.root))

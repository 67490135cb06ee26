"""What one run's validations saw, in order: the files at each failure and at each gate's last pass.

`History.observe` takes one validation (a Build, a RunGame check, the session's own validation): failures not seen
before become *pending* with the files as they were; a pending failure whose gate passes now is *verified* —
the diff between the files at the failure and the files now is the fix that made that gate pass. It also keeps,
per gate, the files of the last validation where the gate passed (the deterministic fixers restore from it).
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path

from tier2.hostio import ProjectDir
from tier2.learning.signature import Failure, Signature

__all__ = ["Files", "History", "Pending", "Verified", "read_files", "unified_diff"]

Files = dict[str, str]
_SKIP_DIRS = frozenset({"dist", "node_modules", ".tier2", ".git", "design", "docs"})
_SUFFIXES = frozenset({".js", ".mjs", ".ts", ".json", ".html", ".css"})
_MAX_FILE = 256_000
_MAX_TOTAL = 4_000_000


def read_files(project: Path) -> Files:
    """The project's source files (code, data tables, page), as text; build output and tier2's own files left out."""
    out: Files = {}
    total = 0
    if not project.is_dir():
        return out
    pdir = ProjectDir(project)  # never through a link (tier2.hostio)
    for rel, st in sorted(pdir.walk(), key=lambda e: e[0].split("/")):
        if rel.split("/", 1)[0] in _SKIP_DIRS or Path(rel).suffix not in _SUFFIXES:
            continue
        if st.st_size > _MAX_FILE or total + st.st_size > _MAX_TOTAL:
            continue
        try:
            out[rel] = pdir.read_text(rel, max_bytes=_MAX_FILE, errors="replace")
        except OSError:
            continue
        total += st.st_size
    return out


def unified_diff(before: Files, after: Files, context: int = 2) -> tuple[str, list[str]]:
    """The diff of every file that changed (added, removed or edited) and their names."""
    parts: list[str] = []
    names: list[str] = []
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a == b:
            continue
        names.append(name)
        parts.extend(difflib.unified_diff((a or "").splitlines(keepends=True), (b or "").splitlines(keepends=True),
                                          f"a/{name}" if a is not None else "/dev/null",
                                          f"b/{name}" if b is not None else "/dev/null", n=context))
    return "".join(p if p.endswith("\n") else p + "\n" for p in parts), names


@dataclass
class Pending:
    signature: Signature
    failure: Failure
    files: Files
    model_calls: int
    tokens: int
    #: the library fixer applied to it (None: the writer fixed it, or nothing did yet)
    fixer: str | None = None


@dataclass(frozen=True)
class Verified:
    """A failure whose gate passed at a later validation, and what changed in between."""

    pending: Pending
    diff: str
    files: list[str]
    model_calls: int
    tokens: int


_VERSIONS = 8


@dataclass
class History:
    pending: dict[str, Pending] = field(default_factory=dict)
    last_pass: dict[str, Files] = field(default_factory=dict)
    #: the distinct contents each file had at the validations (and the baseline) of this run, oldest first
    versions: dict[str, list[str]] = field(default_factory=dict)

    def remember(self, files: Files) -> None:
        for rel, content in files.items():
            seen = self.versions.setdefault(rel, [])
            if not seen or seen[-1] != content:
                seen.append(content)
                del seen[:-_VERSIONS]

    def observe(self, failures: list[tuple[Failure, Signature]], passed: set[str], files: Files,
                model_calls: int = 0, tokens: int = 0) -> list[Verified]:
        verified: list[Verified] = []
        for key, p in list(self.pending.items()):
            if p.signature.gate in passed:
                del self.pending[key]
                diff, names = unified_diff(p.files, files)
                if names:  # nothing changed: the gate passing again proves no fix
                    verified.append(Verified(p, diff, names, max(0, model_calls - p.model_calls),
                                             max(0, tokens - p.tokens)))
        self.remember(files)
        for failure, sig in failures:
            self.pending.setdefault(sig.key, Pending(sig, failure, files, model_calls, tokens))
        for gate in passed:
            self.last_pass[gate] = files
        return verified

    def mark_fixer(self, signature_key: str, fixer: str) -> None:
        if signature_key in self.pending:
            self.pending[signature_key].fixer = fixer

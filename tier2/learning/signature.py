"""Failure signatures: every failure a run sees, normalised so the same defect in two projects compares equal.

A `Failure` is one thing that went wrong in one validation: an esbuild error (``build``), an error the page threw
or logged (``page``), or a gate that failed for another reason (``gate``). Only the first layer present is
signed — a build error hides everything after it, and a page that threw makes every later gate fail as a
consequence (``did not boot``), so those are not separate defects.

`shape` masks what differs between projects: URLs, quoted strings, paths and file names, ids and hashes, numbers
(line and column included) and code names (``camelCase``, ``snake_case``, ``a.b.c``, the subject of a JS error
such as ``foo is not defined``). A `Signature` is (engine name + version, gate, stage, shape) and its key is a
hash of them. `names_content` says whether the shape still carries words of the tenant's own game (its brief, its
data's text): such a signature is never shared outside that tenant (`tier2.learning.cases`).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from tier2.hostio import ProjectDir
from tier2.toolchain import BuildResult
from tier2.validators import ValidationReport

__all__ = ["Failure", "Signature", "Stage", "failures_of_build", "failures_of_report", "project_vocabulary", "shape",
           "sign"]

Stage = Literal["build", "page", "gate"]
_MAX_SHAPE = 300

_URL = re.compile(r"\b(?:https?|file|data|blob):[^\s'\"<>)]+", re.I)
_QUOTED = re.compile(r"'[^'\n]{0,200}'|\"[^\"\n]{0,200}\"|`[^`\n]{0,200}`|“[^”\n]{0,200}”")
_PATH = re.compile(r"(?:[\w.@~-]*/)+[\w.@-]+|\b[\w-]+\.(?:m?js|ts|tsx|jsx|json|html?|css|png|jpe?g|gif|svg|webp|mp3|"
                   r"ogg|wav|md|ya?ml|txt)\b", re.I)
_ID = re.compile(r"\b(?:[rp]-[0-9a-f]{6,}|call_[0-9a-z]+|[0-9a-f]{12,}|[0-9a-f]{8}-[0-9a-f-]{27,})\b", re.I)
#: the subjects of the common JS error shapes ("foo is not defined", "x.y is not a function", ...)
_SUBJECT = re.compile(r"(?P<name>[A-Za-z_$][\w$.]*)(?P<tail>\s+is not (?:defined|a function|a constructor|iterable|"
                      r"an object)|\s+has already been declared)")
_CODE_NAME = re.compile(r"\b(?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*\b|\b\w*_\w*\b|\b[a-z]+[A-Z][\w$]*\b|"
                        r"\b[A-Z][a-z0-9]+[A-Z][\w$]*\b|\$\w+")
_NUMBER = re.compile(r"(?<![<\w])[-+]?\d+(?:\.\d+)?(?:e[-+]?\d+)?(?:ms|s|px|%)?(?![\w>])", re.I)
_SPACES = re.compile(r"\s+")
#: page-error prefixes the validators put before the message the page threw ("[default] pageerror: ...")
_PAGE = re.compile(r"^(?:\[[\w-]+\]\s*)?(?:pageerror|console(?:\.error)?|uncaught|error)\s*:\s*", re.I)
#: gate findings that only say an earlier failure stopped this gate from looking
_CONSEQUENCE = re.compile(r"did not boot|could not be observed|not sampled|no screenshot taken|stopped answering", re.I)
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]{3,}")


def shape(message: str) -> str:
    """The message with everything project-specific masked (deterministic; idempotent on its own output)."""
    text = _PAGE.sub("", message.strip())
    text = _URL.sub("<url>", text)
    text = _QUOTED.sub("<str>", text)
    text = _PATH.sub("<path>", text)
    text = _ID.sub("<id>", text)
    text = _SUBJECT.sub(lambda m: "<name>" + m["tail"], text)
    text = _CODE_NAME.sub("<name>", text)
    text = _NUMBER.sub("<n>", text)
    return _SPACES.sub(" ", text).strip()[:_MAX_SHAPE]


@dataclass(frozen=True)
class Failure:
    """One failure of one validation, as seen (``message`` unmasked: fixers read it; it never leaves the run)."""

    stage: Stage
    gate: str
    message: str
    file: str | None = None


@dataclass(frozen=True)
class Signature:
    engine: str  # "<engine package>@<pinned version>" (the pack's manifest)
    gate: str
    stage: Stage
    shape: str
    names_content: bool = False

    @property
    def key(self) -> str:
        raw = json.dumps([self.engine, self.gate, self.stage, self.shape])
        return hashlib.sha256(raw.encode()).hexdigest()[:24]

    def text(self) -> str:
        """What near-match recall embeds: the gate and the masked message."""
        return f"{self.gate} ({self.stage}): {self.shape}"


def sign(failure: Failure, engine: str, vocabulary: Iterable[str] = ()) -> Signature:
    masked = shape(failure.message)
    words = {w.lower() for w in _WORD.findall(masked)}
    return Signature(engine=engine, gate=failure.gate, stage=failure.stage, shape=masked,
                     names_content=bool(words & set(vocabulary)))


def failures_of_build(build: BuildResult) -> list[Failure]:
    if build.ok:
        return []
    errors = build.errors or []
    if not errors:
        return [Failure("build", "l1.builds", (build.log or "build failed").strip().splitlines()[-1][:500])]
    return [Failure("build", "l1.builds", e.message, e.file) for e in errors[:10]]


def _page_errors(messages: Iterable[str]) -> list[str]:
    out: list[str] = []
    for m in messages:
        if _PAGE.match(m.strip()) and (text := _PAGE.sub("", m.strip())) and text not in out:
            out.append(text)
    return out


def failures_of_report(report: ValidationReport) -> list[Failure]:
    """The failures of the first layer present: build errors, else what the page threw, else failing gates."""
    blocking = report.failures
    if not blocking:
        return []
    build = next((g for g in blocking if g.id == "l1.builds"), None)
    if build is not None:
        errs = [str(e) for e in (report.build or {}).get("errors") or []] or [f.message for f in build.findings]
        return [Failure("build", "l1.builds", _strip_loc(e), _loc_file(e)) for e in errs[:10]] or \
            [Failure("build", "l1.builds", build.summary)]
    page: list[Failure] = []
    for g in blocking:
        for text in _page_errors(f.message for f in g.findings):
            if not any(p.message == text for p in page):
                page.append(Failure("page", g.id, text))
    if page:
        return page
    out: list[Failure] = []
    for g in blocking:
        message = next((f.message for f in g.findings if f.severity == "error"), "") or g.summary
        if not _CONSEQUENCE.search(message):
            out.append(Failure("gate", g.id, message))
    return out


_LOC = re.compile(r"^(?P<file>[^\s:]+):\d+:\d+:\s*")


def _strip_loc(error: str) -> str:
    return _LOC.sub("", error)


def _loc_file(error: str) -> str | None:
    m = _LOC.match(error)
    return m["file"] if m else None


_TEMPLATE_SUFFIXES = (".js", ".json", ".html", ".mjs", ".ts")


def _words_of(value: object, out: set[str]) -> None:
    if isinstance(value, str):
        out.update(w.lower() for w in _WORD.findall(value))
    elif isinstance(value, dict):
        for v in value.values():
            _words_of(v, out)
    elif isinstance(value, list):
        for v in value:
            _words_of(v, out)


@functools.lru_cache(maxsize=16)
def _template_words(template: Path) -> frozenset[str]:
    common: set[str] = set()
    for path in template.rglob("*"):
        if path.is_file() and path.suffix in _TEMPLATE_SUFFIXES:
            common.update(w.lower() for w in _WORD.findall(path.read_text(errors="replace")))
    return frozenset(common)


def project_vocabulary(project: Path, brief: str, template: Path | None) -> frozenset[str]:
    """Words of the tenant's own game: the brief and the text values of its data tables, minus every word the pack
    template already has (engine and pack words are not the tenant's content)."""
    words: set[str] = set()
    _words_of(brief, words)
    pdir = ProjectDir(project)  # never through a link (tier2.hostio)
    for name, _st in pdir.listdir("data"):
        if not name.endswith(".json"):
            continue
        try:
            _words_of(json.loads(pdir.read_text(f"data/{name}", errors="replace")), words)
        except (OSError, ValueError, RecursionError):
            continue
    common = _template_words(template) if template is not None and template.is_dir() else frozenset()
    return frozenset(words - common)

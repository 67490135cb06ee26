"""Is a folder with an ``index.html`` a built site (serve it exactly as it is) or a source project (bundle it)?

Decided by evidence, never by the mere presence of ``<script type="module">`` (every Vite ``dist/`` has one):

* source: the page's module entry is TypeScript/JSX, or the entry (or a file it imports, followed relatively)
  imports a bare specifier such as the engine's npm package or a path without an extension — a browser cannot
  run either without a bundler;
* built: every module the page loads runs in a browser as is; further evidence is recorded (the bundle already
  contains an engine a pack's adapter recognises, hashed file names such as ``index-BxYz12_a.js``, no
  ``package.json`` beside the page).

`engine_evidence` gives the texts of the scripts a page loads, for `tier2.packs.choose_adapter`.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from urllib.parse import urljoin, urlparse

from tier2.packs.engine import EngineAdapter

__all__ = ["SiteKind", "classify_site", "engine_evidence", "module_entries", "url_evidence"]

_MODULE_SRC = re.compile(r"<script\b[^>]*\btype=[\"']module[\"'][^>]*\bsrc=[\"']([^\"']+)[\"']", re.I)
_SRC_FIRST = re.compile(r"<script\b[^>]*\bsrc=[\"']([^\"']+)[\"'][^>]*\btype=[\"']module[\"']", re.I)
#: a static import/export ends its statement after the specifier (``;``, a line end, ``,`` or ``)`` in minified
#: code, a comment, an import attribute): ``import 'x'`` inside a message text (a warning telling the reader what
#: to import, in a built bundle) is not one
_IMPORTS = re.compile(r"""(?:^|[;\s})])(?:import|export)\s*(?:[\w*{}\s,$]+\s*from\s*)?["']([^"']+)["']"""
                      r"""(?=[ \t]*(?:[;,)\r\n/]|$|(?:assert|with)\b))"""
                      r"""|\bimport\s*\(\s*["']([^"']+)["']\s*\)""", re.M)
_HASHED = re.compile(r"[-.][A-Za-z0-9_-]{8,}\.(?:m?js|css)$")
_SCRIPT_SRC = re.compile(r"<script\b[^>]*\bsrc=[\"']([^\"']+)[\"']", re.I)
_MAX_EVIDENCE_FILES = 20
_MAX_EVIDENCE_BYTES = 16_000_000
_SOURCE_EXT = (".ts", ".tsx", ".jsx", ".mts", ".vue", ".svelte")
_MAX_FILES = 60


@dataclass
class SiteKind:
    """``kind`` with the evidence for it (shown in the report)."""

    kind: Literal["built", "source"]
    evidence: list[str] = field(default_factory=list)
    entries: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "evidence": self.evidence, "entries": self.entries}


def module_entries(html: str) -> list[str]:
    """The ``src`` of every ``<script type="module" src=...>`` of a page, in order."""
    out = _MODULE_SRC.findall(html) + _SRC_FIRST.findall(html)
    return list(dict.fromkeys(u for u in out if not u.startswith(("http:", "https:", "//", "data:"))))


def _resolve(root: Path, base: Path, ref: str) -> Path:
    return (root / ref.lstrip("/")) if ref.startswith("/") else (base.parent / ref)


def _needs_bundler(root: Path, entry: Path) -> str | None:
    """Why ``entry`` cannot run unbundled (None when it and what it imports relatively can)."""
    seen: set[Path] = set()
    todo = [entry]
    while todo and len(seen) < _MAX_FILES:
        path = todo.pop().resolve()
        if path in seen or not path.is_relative_to(root) or not path.is_file():
            continue
        seen.add(path)
        rel = path.relative_to(root).as_posix()
        if path.suffix in _SOURCE_EXT:
            return f"{rel} is {path.suffix} source (needs a compiler)"
        text = path.read_text(errors="replace")[:2_000_000]
        if "import.meta.env" in text:
            return f"{rel} reads import.meta.env (a Vite source file)"
        for m in _IMPORTS.finditer(text):
            spec = m.group(1) or m.group(2)
            if spec.startswith(("http:", "https:", "data:")):
                continue
            if not spec.startswith((".", "/")):
                return f"{rel} imports the bare module {spec!r} (needs a bundler)"
            target = _resolve(root, path, spec)
            if not target.suffix or (not target.exists() and Path(str(target) + ".js").exists()):
                return f"{rel} imports {spec!r} without a file extension (needs a bundler)"
            if target.suffix in (".js", ".mjs", *_SOURCE_EXT):
                todo.append(target)
    return None


def classify_site(folder: Path, html: str, adapters: Sequence[EngineAdapter] = ()) -> SiteKind:
    """Classify ``folder`` (which holds ``index.html`` with text ``html``); ``adapters`` recognise a bundled engine."""
    root = folder.resolve()
    entries = module_entries(html)
    reasons: list[str] = []
    for entry in entries:
        why = _needs_bundler(root, _resolve(root, root / "index.html", entry.split("?")[0]))
        if why:
            return SiteKind("source", [why] + (["package.json beside index.html"]
                                               if (root / "package.json").is_file() else []), entries)
    if not entries:
        reasons.append("no module entry: plain script tags")
    for entry in entries:
        path = _resolve(root, root / "index.html", entry.split("?")[0])
        if not path.is_file():
            reasons.append(f"module {entry} is missing")
            continue
        if _HASHED.search(entry):
            reasons.append(f"hashed asset name {entry}")
        text = path.read_text(errors="replace")
        reasons += [f"{entry} already contains {a.title}" for a in adapters if a.detects(text)]
    if entries:
        reasons.append("every module runs unbundled")
    if not (root / "package.json").is_file():
        reasons.append("no package.json beside index.html")
    return SiteKind("built", reasons, entries)


def engine_evidence(roots: Sequence[Path]) -> list[str]:
    """The texts of the local scripts each root's ``index.html`` loads (bounded: files and bytes), in page order."""
    texts: list[str] = []
    for root in roots:
        index = root / "index.html"
        if not index.is_file():
            continue
        for ref in _SCRIPT_SRC.findall(index.read_text(errors="replace")):
            if len(texts) >= _MAX_EVIDENCE_FILES or ref.startswith(("http:", "https:", "//", "data:")):
                continue
            path = _resolve(root.resolve(), root.resolve() / "index.html", ref.split("?")[0]).resolve()
            if path.is_relative_to(root.resolve()) and path.is_file():
                with path.open("rb") as f:
                    texts.append(f.read(_MAX_EVIDENCE_BYTES).decode(errors="replace"))
    return texts


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:  # a redirect is never followed
        return None


def url_evidence(url: str, timeout_s: float = 5.0) -> list[str]:
    """`engine_evidence` for a page served at a loopback ``url``: the page and the scripts it loads from its own
    origin, fetched (bounded: files and bytes; no redirect followed); [] when the page does not answer."""
    origin = urlparse(url)
    opener = urllib.request.build_opener(_NoRedirect)

    def get(u: str) -> str | None:
        try:
            with opener.open(u, timeout=timeout_s) as resp:
                return bytes(resp.read(_MAX_EVIDENCE_BYTES)).decode(errors="replace")
        except (OSError, ValueError, urllib.error.URLError):
            return None

    html = get(url)
    if html is None:
        return []
    texts: list[str] = []
    for ref in _SCRIPT_SRC.findall(html)[:_MAX_EVIDENCE_FILES]:
        target = urlparse(urljoin(url, ref))
        if (target.scheme, target.netloc) != (origin.scheme, origin.netloc):
            continue
        text = get(target.geturl())
        if text is not None:
            texts.append(text)
    return texts

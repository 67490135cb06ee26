"""The pack's docs index as tools and hints use it: loaded once, in a thread, on first use; sections rendered as
bounded text (id, kind, signature, short doc, parameters, source)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Final

from tier2.errors import PackError
from tier2.packs.registry import Pack
from tier2.packs.retrieval.index import DocsIndex, Hit, load_docs_index

__all__ = ["DocsSource", "MAX_OUTPUT_CHARS", "format_hit", "format_hits"]

MAX_OUTPUT_CHARS: Final = 6000
_SIGNATURE_CHARS: Final = 400


class DocsSource:
    """The pack's docs index, loaded on first use (None when the pack has no docs facet or its type file is
    missing: the tool then says so)."""

    def __init__(self, pack: Pack, cache_dir: Path | None = None) -> None:
        self.pack, self.cache_dir = pack, cache_dir
        self._index: DocsIndex | None = None
        self._error = ""
        self._lock = asyncio.Lock()

    async def index(self) -> DocsIndex | None:
        async with self._lock:
            if self._index is None and not self._error:
                try:
                    self._index = await asyncio.to_thread(load_docs_index, self.pack, self.cache_dir)
                except (PackError, OSError) as exc:
                    self._error = str(exc)
            return self._index

    @property
    def error(self) -> str:
        return self._error


def format_hit(hit: Hit, doc_chars: int = 320) -> str:
    sec = hit.section
    sig = sec.signature if len(sec.signature) <= _SIGNATURE_CHARS else sec.signature[:_SIGNATURE_CHARS] + "…"
    head = f"## {sec.id} ({sec.kind}{', DEPRECATED' if sec.deprecated else ''}) — {sec.source}"
    lines = [head]
    if sig and sec.kind != "guide":
        lines.append("    " + sig.replace("\n", "\n    "))
    doc = sec.short_doc(doc_chars) if sec.kind != "guide" else _guide_text(sec.doc, doc_chars * 2)
    if doc:
        lines.append(doc)
    if sec.params and sec.kind != "guide":
        lines += [f"  - {p[:160]}" for p in sec.params[:6]]
    return "\n".join(lines)


def _guide_text(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def format_hits(hits: list[Hit], limit: int = MAX_OUTPUT_CHARS) -> str:
    out: list[str] = []
    used = 0
    for hit in hits:
        block = format_hit(hit)
        if used + len(block) > limit:
            out.append(f"[{len(hits) - len(out)} more section(s) left out: output bound]")
            break
        out.append(block)
        used += len(block) + 2
    return "\n\n".join(out)

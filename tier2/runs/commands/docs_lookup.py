"""``tier2 packs lookup PACK QUERY``: the pack's engine-docs index searched from the command line."""

from __future__ import annotations

import json
import sys

from tier2.errors import PackError
from tier2.packs import Pack
from tier2.packs.retrieval import format_hits, load_docs_index
from tier2.settings.loader import Settings
from tier2.tools.docs import MAX_QUERY_CHARS, MAX_TOP_K

__all__ = ["lookup_command"]


def lookup_command(settings: Settings, pack: Pack, query: str, top_k: int, as_json: bool) -> int:
    """The top sections (exit 0), 1 when nothing matches, 2 for bad input."""
    if not query.strip() or len(query) > MAX_QUERY_CHARS or not 1 <= top_k <= MAX_TOP_K:
        print(f"error: the query must be 1-{MAX_QUERY_CHARS} characters and --top-k 1-{MAX_TOP_K}", file=sys.stderr)
        return 2
    try:
        index = load_docs_index(pack, settings.docs_cache)
    except PackError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    hits = index.search(query, top_k)
    if as_json:
        print(json.dumps({"meta": {k: v for k, v in index.meta.items() if k != "deprecated"},
                          "hits": [{"score": h.score, "why": h.why, **h.section.to_json()} for h in hits]},
                         indent=2, ensure_ascii=False))
    else:
        meta = index.meta
        print(f"{meta['pack']}: {meta['engine']} {meta['engine_version']} docs, {meta['sections']} sections "
              f"(types sha256 {meta['types_sha256'][:12]}, index {meta['cache']})\n")
        print(format_hits(hits) if hits else "no section matches")
    return 0 if hits else 1

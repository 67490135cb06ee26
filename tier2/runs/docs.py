"""Engine docs in a run — the writer's docs-hint layer (`tier2.learning.docs_hints`) over the pack's docs index,
put in the ``learning`` slot outside the case library so it reads the result the library leaves — and
``tier2 packs lookup``."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from tier2.errors import PackError
from tier2.learning.docs_hints import EngineDocsMiddleware
from tier2.middleware import RunLayers
from tier2.packs import Pack
from tier2.packs.retrieval import DocsSource, format_hits, load_docs_index
from tier2.packs.retrieval.facet import FACET_FILE
from tier2.settings.loader import Settings
from tier2.tools.docs import MAX_QUERY_CHARS, MAX_TOP_K

if TYPE_CHECKING:
    from tier2.runs.session import RunSession

__all__ = ["attach_docs", "lookup_command"]


def attach_docs(session: RunSession, layers: RunLayers) -> EngineDocsMiddleware | None:
    """Add the docs-hint layer (None when the policy turns hints off or the pack has no docs facet)."""
    rt, policy = session.rt, session.policy.engine_docs
    pack = rt.pack
    if not policy.hints or not (pack.root / pack.manifest.docs / FACET_FILE).is_file():
        return None
    layer = EngineDocsMiddleware(DocsSource(pack, rt.settings.docs_cache), policy, session.run_id, session.emit)
    layers.learning = [layer, *layers.learning]
    return layer


def lookup_command(settings: Settings, pack: Pack, query: str, top_k: int, as_json: bool) -> int:
    """``tier2 packs lookup PACK QUERY``: the top sections (exit 0), 1 when nothing matches, 2 for bad input."""
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

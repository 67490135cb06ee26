"""The writer's EngineDocs tool: ranked sections of the pack's engine docs (the engine API reference generated from
the installed package's type declarations, and the pack's guides) for a question or an error message.

Arguments are hostile: ``query`` must be a non-empty string of at most `MAX_QUERY_CHARS`, ``top_k`` an integer in
1..`MAX_TOP_K`; the answer is bounded (`MAX_OUTPUT_CHARS`). The index loads once per process (disk cache keyed by
the type file's hash, `tier2.packs.retrieval`), in a thread: the event loop never waits on a build.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Final

from agentscope.message import TextBlock, ToolResultState
from agentscope.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agentscope.tool import ToolBase, ToolChunk

from tier2.packs import Pack
from tier2.packs.retrieval.facet import FACET_FILE
from tier2.packs.retrieval.source import DocsSource, format_hits

__all__ = ["EngineDocsTool", "MAX_QUERY_CHARS", "MAX_TOP_K", "make_docs_tools"]

MAX_QUERY_CHARS: Final = 2000
MAX_TOP_K: Final = 8


def _chunk(text: str, ok: bool = True, meta: dict[str, Any] | None = None) -> ToolChunk:
    return ToolChunk(content=[TextBlock(text=text)], state=ToolResultState.SUCCESS if ok else ToolResultState.ERROR,
                     metadata=meta or {})


class EngineDocsTool(ToolBase):
    name = "EngineDocs"
    description = (
        "Look up the engine's API reference (generated from the installed engine's own type declarations) and the "
        "pack's guides. `query`: an error message (e.g. \"this.physics.add.sprit is not a function\"), an "
        "expression (\"this.input.keyboard\") or a question. Returns the top sections: id, "
        "signature, short doc, source. Use it before calling an API you are not sure exists."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": f"error text, expression or question (≤ {MAX_QUERY_CHARS} "
                                                        "characters)"},
            "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K, "default": 3},
        },
        "required": ["query"],
    }
    is_concurrency_safe = True
    is_read_only = True

    def __init__(self, source: DocsSource) -> None:
        super().__init__()
        self.source = source

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, message="EngineDocs only reads the pack's docs")

    async def call(self, query: Any = None, top_k: Any = 3, **extra: Any) -> ToolChunk:
        if extra:
            return _chunk(f"Refused: unknown argument(s) {', '.join(sorted(map(str, extra)))[:200]}; "
                          "EngineDocs takes `query` and `top_k`.", ok=False)
        if not isinstance(query, str) or not query.strip():
            return _chunk("Refused: `query` must be a non-empty string.", ok=False)
        if len(query) > MAX_QUERY_CHARS:
            return _chunk(f"Refused: `query` has {len(query)} characters (at most {MAX_QUERY_CHARS}); send the "
                          "error's first line or the expression.", ok=False)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= MAX_TOP_K:
            return _chunk(f"Refused: `top_k` must be an integer from 1 to {MAX_TOP_K}.", ok=False)
        index = await self.source.index()
        if index is None:
            return _chunk(f"Engine docs are not available: {self.source.error}", ok=False)
        hits = await asyncio.to_thread(index.search, query, top_k)
        if not hits:
            return _chunk(f"No section of the {index.meta['engine']} {index.meta['engine_version']} docs matches "
                          "this query: rephrase with the API's name or the error's exact words.",
                          meta={"sections": []})
        head = f"Engine docs ({index.meta['engine']} {index.meta['engine_version']}), top {len(hits)}:"
        return _chunk(head + "\n\n" + format_hits(hits), meta={"sections": [h.section.id for h in hits]})


def make_docs_tools(pack: Pack, cache_dir: Path | None = None, source: DocsSource | None = None) -> list[ToolBase]:
    """The writer's EngineDocs tool over the pack's docs facet (``[]`` when the pack declares no facet)."""
    if source is None and not (pack.root / pack.manifest.docs / FACET_FILE).is_file():
        return []
    return [EngineDocsTool(source or DocsSource(pack, cache_dir))]

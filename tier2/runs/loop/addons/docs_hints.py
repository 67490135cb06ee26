"""Engine docs in a run: the writer's docs-hint layer (`tier2.learning.docs_hints`) over the pack's docs index, in
the ``learning`` slot before (outside) the case library, so it reads the result the library leaves."""

from __future__ import annotations

from tier2.learning.docs_hints import EngineDocsMiddleware
from tier2.packs.retrieval import DocsSource
from tier2.packs.retrieval.facet import FACET_FILE
from tier2.runs.loop.context import RunContext
from tier2.runs.loop.layers import Additions

__all__ = ["docs_hints"]


def docs_hints(ctx: RunContext) -> Additions:
    """The docs-hint layer (nothing when the policy turns hints off or the pack has no docs facet)."""
    rt, policy = ctx.rt, ctx.policy.engine_docs
    pack = ctx.pack
    if not policy.hints or not (pack.root / pack.manifest.docs / FACET_FILE).is_file():
        return Additions()
    return Additions(learning=(EngineDocsMiddleware(DocsSource(pack, rt.settings.docs_cache), policy, ctx.run_id,
                                                    ctx.emit),))

"""Engine-doc hints in the writer's onion (slot ``learning``, outside the case library): when a Build or RunGame
result the writer is about to read failed and its text names an engine API — ``this.physics.add.sprit is not a
function``, ``Cannot read properties of undefined (reading 'setVelocityX')``, the engine-call gate's "… has no
member 'setOrign'" — the docs sections that API resolves to (`tier2.packs.retrieval`) are appended to the result.

It runs after the case library has done its work (it sits outside it), so it reads the final result. A hint is
recorded as a `DocsHint` event and in the response's metadata (``engine_docs``). Only a mention that *resolves*
(a declared member of the class the expression walks to, or a member of that name) gives a hint: a failure that
names no API is left as it is. Like the library, it is an aid: its own failure never fails the tool call.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from agentscope.message import TextBlock, ToolResultState
from agentscope.tool import ToolResponse

from tier2.events import DocsHint, Tier2Event
from tier2.middleware.after_tool import AfterToolMiddleware, response_text
from tier2.packs.retrieval import DocsIndex, DocsSource, Hit, api_mentions, format_hit
from tier2.settings.policy import EngineDocsPolicy

__all__ = ["EngineDocsMiddleware", "HINT_TOOLS", "docs_hint"]

log = logging.getLogger(__name__)

HINT_TOOLS = frozenset({"Build", "RunGame"})
_SCAN_CHARS = 20_000  # of a failing result's text scanned for API mentions


def docs_hint(index: DocsIndex, text: str, sections: int = 2, limit: int = 2500) -> tuple[str, list[str], list[str]]:
    """The note for a failing result's text: (note, mentions, section ids); an empty note when nothing resolves."""
    mentions: list[str] = []
    ids: list[str] = []
    hits: list[Hit] = []
    for mention in api_mentions(text[:_SCAN_CHARS], limit=8):
        if mention.kind == "expression":  # only what an error form names: a report's other dotted words are noise
            continue
        resolved = index.resolve(mention)
        if not resolved:
            continue
        mentions.append(mention.text[:120])
        for sid in resolved:
            sec = index.get(sid)
            if sec is not None and sid not in ids and len(ids) < sections:
                ids.append(sid)
                hits.append(Hit(sec, 0.0, "resolved"))
        if len(ids) >= sections:
            break
    if not hits:
        return "", [], []
    head = (f"Engine docs for the API this failure names ({', '.join(f'`{m}`' for m in mentions)}; "
            f"{index.meta['engine']} {index.meta['engine_version']}, from its type declarations — more with the "
            "EngineDocs tool):")
    body: list[str] = []
    used = len(head)
    for hit in hits:
        block = format_hit(hit, doc_chars=280)
        if used + len(block) > limit:
            break
        body.append(block)
        used += len(block) + 2
    if not body:
        return "", [], []
    return head + "\n\n" + "\n\n".join(body), mentions, ids[: len(body)]


class EngineDocsMiddleware(AfterToolMiddleware):
    """``emit``: the run's event sink (None: no event, the metadata still says what was appended)."""

    def __init__(self, source: DocsSource, policy: EngineDocsPolicy, run_id: str = "",
                 emit: Callable[[Tier2Event], Awaitable[None]] | None = None) -> None:
        self.source, self.policy, self.run_id, self.emit = source, policy, run_id, emit

    def applies(self, call: Any) -> bool:
        return call.name in HINT_TOOLS and self.policy.hints

    async def after(self, call: Any, final: ToolResponse) -> ToolResponse:
        if final.state != ToolResultState.ERROR or (final.metadata or {}).get("replayed"):
            return final
        try:
            return await self._hint(call.name, final)
        except (OSError, ValueError, RuntimeError) as exc:  # an aid: never fails the tool call
            log.warning("engine docs hint skipped after %s: %s: %s", call.name, type(exc).__name__, exc)
            return final

    async def _hint(self, tool: str, final: ToolResponse) -> ToolResponse:
        index = await self.source.index()
        if index is None:
            return final
        text = response_text(final)
        note, mentions, ids = await asyncio.to_thread(docs_hint, index, text, self.policy.hint_sections,
                                                      self.policy.hint_chars)
        if not note:
            return final
        if self.emit is not None and self.run_id:
            await self.emit(DocsHint(run_id=self.run_id, tool=tool, mentions=mentions, sections=ids))
        meta = {**(final.metadata or {}), "engine_docs": {"mentions": mentions, "sections": ids}}
        return final.model_copy(update={"content": [TextBlock(text=f"{text}\n\n{note}")], "metadata": meta})

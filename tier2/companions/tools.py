"""The companions' tools: ``Index`` and ``Checks`` (read-only, bound to one project, for the explorer and the
reviewer) and the writer's ``Explore`` (asks the explorer; the asking is injected by the run).

None of them takes a path from the model: they are bound to the project root when built, so the path guard has
nothing to confine. Every argument is parsed strictly and bounded; every output is bounded.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Final

from agentscope.message import TextBlock, ToolResultState
from agentscope.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agentscope.tool import ToolBase, ToolChunk

from tier2.companions.checks import run_checks
from tier2.companions.index import ProjectIndex
from tier2.packs.engine import EngineAdapter

__all__ = ["ChecksTool", "ExploreTool", "IndexTool", "COMPANION_TOOLS", "MAX_TOOL_OUTPUT"]

MAX_TOOL_OUTPUT: Final = 12_000
MAX_QUERY: Final = 1000
#: the tools a companion may call besides Read, Glob and Grep (`tier2.middleware.read_only`)
COMPANION_TOOLS: Final = frozenset({"Index", "Checks"})


def _chunk(text: str, ok: bool = True) -> ToolChunk:
    return ToolChunk(content=[TextBlock(text=text)], state=ToolResultState.SUCCESS if ok else ToolResultState.ERROR)


def _allow(name: str, why: str) -> PermissionDecision:
    return PermissionDecision(behavior=PermissionBehavior.ALLOW, message=f"{name} {why}")


def _bounded(text: str, limit: int = MAX_TOOL_OUTPUT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n[... cut at {limit} characters]"


class IndexTool(ToolBase):
    name = "Index"
    description = ("Look things up in the project's index: give a data key ('economy.start_money'), a file "
                   "('Play.js'), an identifier ('showOrder'), a scene key or a short question. Returns JSON: where "
                   "each is defined, read or used, as 'path:line: excerpt'.")
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"query": {"type": "string", "description": "what to look up", "maxLength": MAX_QUERY}},
        "required": ["query"],
    }
    is_concurrency_safe = True
    is_read_only = True

    def __init__(self, project: Path) -> None:
        super().__init__()
        self.project = project.resolve()

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return _allow(self.name, "reads only the project's own index")

    async def call(self, query: str = "", **_: Any) -> ToolChunk:
        if not isinstance(query, str) or not query.strip() or len(query) > MAX_QUERY:
            return _chunk(f"query is required (a string of at most {MAX_QUERY} characters)", ok=False)
        idx = await asyncio.to_thread(ProjectIndex.build, self.project)
        found = idx.lookup(query)
        if not found:
            return _chunk(f"Nothing in the index matches {query!r}: try a data key, a file or an identifier")
        return _chunk(_bounded(json.dumps(found, indent=1, ensure_ascii=False)))


class ChecksTool(ToolBase):
    name = "Checks"
    description = ("Run tier2's deterministic review checks on the project (data keys read but missing, scene keys "
                   "started but not registered, modules never imported, parse errors, unknown engine APIs). "
                   "Returns JSON {\"findings\": [{file, line, rule, message, severity}], \"note\": ...}.")
    input_schema: dict[str, Any] = {"type": "object", "properties": {}, "required": []}
    is_concurrency_safe = True
    is_read_only = True

    def __init__(self, project: Path, adapter: EngineAdapter | None) -> None:
        super().__init__()
        self.project, self.adapter = project.resolve(), adapter

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return _allow(self.name, "only reads the project")

    async def call(self, **_: Any) -> ToolChunk:
        findings, note = await run_checks(self.project, self.adapter)
        body = {"findings": [f.model_dump(exclude_none=True) for f in findings], "note": note}
        return _chunk(_bounded(json.dumps(body, ensure_ascii=False)))


#: the run's explorer: question -> (answered?, text for the writer)
Ask = Callable[[str], Awaitable[tuple[bool, str]]]


class ExploreTool(ToolBase):
    name = "Explore"
    description = ("Ask a read-only explorer a question about this project, e.g. 'where is the order queue drawn' "
                   "or 'which files read data key economy.start_money'. It answers with file paths, line numbers "
                   "and short excerpts. It never changes files; a run allows only a few questions.")
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"question": {"type": "string", "description": "one precise question about the project"}},
        "required": ["question"],
    }
    is_concurrency_safe = False  # one question at a time: its model calls share the run's ledger with the writer
    is_read_only = True

    def __init__(self, ask: Ask, max_question_chars: int = MAX_QUERY) -> None:
        super().__init__()
        self.ask, self.max_question_chars = ask, max_question_chars

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return _allow(self.name, "asks a read-only explorer")

    async def call(self, question: str = "", **_: Any) -> ToolChunk:
        if not isinstance(question, str) or not question.strip():
            return _chunk("question is required: one precise question about the project", ok=False)
        if len(question) > self.max_question_chars:
            return _chunk(f"question is over {self.max_question_chars} characters: ask one precise question",
                          ok=False)
        ok, text = await self.ask(question.strip())
        return _chunk(text, ok=ok)

"""Check every tool call's arguments exactly as the tool will receive them, before it runs.

Three holes this closes (issue #9):

* **Parsing.** AgentScope repairs malformed JSON arguments (``json_repair``) before calling a tool, so a guard
  that gave up on a parse error let a call through that the tool then ran with repaired arguments. Here the
  arguments must parse strictly as a JSON object, or the call is refused; the call's ``input`` is then replaced
  by the canonical JSON of what was checked, so the tool parses exactly the checked value.
* **Paths.** AgentScope matches Read/Write/Edit allow rules with ``fnmatch``, where ``*`` also matches ``/`` and
  ``..``. Every argument that names a path is resolved here (absolute, symlinks followed) and must be inside the
  project (`tier2.workspace.paths`); Glob and Grep must name their ``path`` (no default to the server's working
  directory); Glob patterns may not be absolute or climb with ``..``.
* **Writes.** Write and Edit may not touch the project's reserved names (``.mcp``, ``.tier2/``, ``dist/``,
  ``delivery.json``...) and their payload is capped in size.

Tools without path arguments (Build, RunGame, Skill) pass through after the strict parse.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Callable
from typing import Any, Final

from agentscope.message import TextBlock, ToolResultState
from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolChunk, ToolResponse

from tier2.middleware._kwargs import ActingNext, acting_kwargs
from tier2.workspace.paths import PathRefused, check_glob_pattern, check_writable, resolve_inside

__all__ = ["PathGuardMiddleware", "MAX_WRITE_BYTES", "check_call", "inside"]

#: Ceiling on the bytes one Write/Edit may carry (the security config may only lower it).
MAX_WRITE_BYTES: Final = 2_000_000

Check = Callable[[str, dict[str, Any], int], None]


def inside(root: str, candidate: str) -> bool:
    """Whether an absolute ``candidate`` resolves inside ``root``."""
    try:
        resolve_inside(root, candidate)
    except PathRefused:
        return False
    return True


def _size(args: dict[str, Any], key: str, limit: int) -> None:
    value = args.get(key)
    if isinstance(value, str) and len(value.encode("utf-8", "surrogatepass")) > limit:
        raise PathRefused(f"{key} is over the {limit}-byte limit of one write")


def _read(root: str, args: dict[str, Any], limit: int) -> None:
    resolve_inside(root, args.get("file_path"), what="file_path")


def _write(root: str, args: dict[str, Any], limit: int) -> None:
    check_writable(root, args.get("file_path"))
    _size(args, "content", limit)


def _edit(root: str, args: dict[str, Any], limit: int) -> None:
    check_writable(root, args.get("file_path"))
    _size(args, "new_string", limit)


def _glob(root: str, args: dict[str, Any], limit: int) -> None:
    resolve_inside(root, args.get("path"))
    check_glob_pattern(args.get("pattern"))


def _grep(root: str, args: dict[str, Any], limit: int) -> None:
    resolve_inside(root, args.get("path"))
    if args.get("glob") is not None:
        check_glob_pattern(args["glob"])


#: tool name -> the check of its arguments
CHECKS: dict[str, Check] = {"Read": _read, "Write": _write, "Edit": _edit, "Glob": _glob, "Grep": _grep}


def check_call(root: str | None, name: str, raw: object, write_limit: int = MAX_WRITE_BYTES) -> dict[str, Any]:
    """The strictly parsed arguments of a call to ``name``, or `PathRefused` saying why it may not run
    (``root`` None: the agent has no project, every path tool is refused)."""
    if isinstance(raw, dict):
        args: object = raw
    else:
        try:
            args = json.loads(raw or "{}") if isinstance(raw, str) else None
        except (json.JSONDecodeError, RecursionError):
            args = None
    if not isinstance(args, dict):
        raise PathRefused("the arguments are not one valid JSON object: send complete, valid JSON")
    check = CHECKS.get(name)
    if check is not None:
        if root is None:
            raise PathRefused(f"{name}: this agent has no project files")
        check(root, args, write_limit)
    return args


class PathGuardMiddleware(MiddlewareBase):
    """Stateless: the project root (None: no files at all) and the write limit are fixed for the whole run."""

    def __init__(self, project_root: str | None, write_limit: int = MAX_WRITE_BYTES) -> None:
        self.root = project_root
        self.write_limit = min(write_limit, MAX_WRITE_BYTES)

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: ActingNext,
                        ) -> AsyncGenerator[ToolChunk | ToolResponse, None]:
        call = acting_kwargs(input_kwargs)["tool_call"]
        try:
            args = check_call(self.root, call.name, call.input, self.write_limit)
        except PathRefused as exc:
            yield ToolResponse(content=[TextBlock(text=f"Refused: {exc}")], state=ToolResultState.ERROR, id=call.id)
            return
        call.input = json.dumps(args, ensure_ascii=False)  # the tool parses exactly what was checked
        async for chunk in next_handler(**input_kwargs):
            yield chunk

"""The writer's Bash and BashLog tools: shell commands as command sessions inside the run's sandbox.

Only given when the run's workspace is a sandbox (``isolated`` or ``docker``): a ``local`` workspace has no Bash.
`tier2.sandbox.commands` owns the sessions (time slices, stdin, interrupt, bounded output + full log).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

from agentscope.message import TextBlock, ToolResultState
from agentscope.middleware import MiddlewareBase
from agentscope.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agentscope.tool import ToolBase, ToolChunk, ToolResponse

from tier2.sandbox import CommandSessions, UnknownSession

__all__ = ["BashTool", "BashLogTool", "CommandQuiesceMiddleware", "HOST_SIDE_TOOLS", "make_command_tools"]


def _chunk(text: str, ok: bool = True, **meta: Any) -> ToolChunk:
    state = ToolResultState.SUCCESS if ok else ToolResultState.ERROR
    return ToolChunk(content=[TextBlock(text=text)], state=state, metadata=meta)


def _args(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    return json.loads(raw) if isinstance(raw, str) and raw else {}


class BashTool(ToolBase):
    name = "Bash"
    description = (
        "Run a shell command (bash -c) in the project's sandbox: the project directory is the working directory "
        "and the only writable place; there is no network. A command still running after its time slice returns "
        "a session id: call Bash again with session_id to read new output, send stdin, or interrupt it. Long "
        "output is truncated; page through the full log with BashLog."
    )
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "the command to start (omit when continuing a session)"},
            "session_id": {"type": "string", "description": "continue this running command session"},
            "stdin": {"type": "string", "description": "text written to the session's stdin"},
            "interrupt": {"type": "boolean", "description": "interrupt the session's command (Ctrl-C)"},
            "wait_s": {"type": "number", "description": "seconds to wait for output/exit (default: the slice)"},
        },
        "required": [],
    }
    is_concurrency_safe = False
    is_read_only = False

    def __init__(self, sessions: CommandSessions) -> None:
        super().__init__()
        self.sessions = sessions

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return PermissionDecision(behavior=PermissionBehavior.ALLOW,
                                  message="Bash runs inside the run's sandbox (no network, only the project writable)")

    async def call(self, **kwargs: Any) -> ToolChunk:
        command, sid = kwargs.get("command"), kwargs.get("session_id")
        wait = kwargs.get("wait_s")
        wait_s = float(wait) if isinstance(wait, int | float) and not isinstance(wait, bool) else None
        try:
            if isinstance(command, str) and command.strip() and not sid:
                report = await self.sessions.start(command, wait_s)
            elif isinstance(sid, str) and sid:
                stdin = kwargs.get("stdin")
                report = await self.sessions.poll(sid, stdin=stdin if isinstance(stdin, str) else None,
                                                  interrupt=kwargs.get("interrupt") is True, wait_s=wait_s)
            else:
                return _chunk("Bash needs either `command` (start one) or `session_id` (continue one).", ok=False)
        except UnknownSession as exc:
            return _chunk(str(exc.args[0]), ok=False)
        except RuntimeError as exc:
            return _chunk(str(exc), ok=False)
        ok = report.running or report.exit_code == 0
        return _chunk(report.text(), ok=ok, session_id=report.session_id, running=report.running,
                      exit_code=report.exit_code, truncated=report.truncated)


class BashLogTool(ToolBase):
    name = "BashLog"
    description = "Page through the full output log of a Bash command session: lines offset..offset+limit."
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"session_id": {"type": "string"}, "offset": {"type": "integer", "minimum": 0},
                       "limit": {"type": "integer", "minimum": 1, "maximum": 2000}},
        "required": ["session_id"],
    }
    is_concurrency_safe = True
    is_read_only = True

    def __init__(self, sessions: CommandSessions) -> None:
        super().__init__()
        self.sessions = sessions

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return PermissionDecision(behavior=PermissionBehavior.ALLOW, message="reads a command log of this run")

    async def call(self, session_id: str = "", offset: int = 0, limit: int = 200, **_: Any) -> ToolChunk:
        try:
            return _chunk(self.sessions.page(str(session_id), int(offset), int(limit)))
        except (UnknownSession, ValueError, TypeError) as exc:
            return _chunk(str(exc.args[0]) if exc.args else str(exc), ok=False)


def make_command_tools(sessions: CommandSessions) -> list[ToolBase]:
    return [BashTool(sessions), BashLogTool(sessions)]


#: tools that read or write project files from the host (or serve them to the browser): never while a command in
#: the sandbox could change those files under them (e.g. swap a file for a symlink to a host path mid-call)
HOST_SIDE_TOOLS = frozenset({"Read", "Write", "Edit", "Glob", "Grep", "Build", "RunGame", "RequestAsset"})


class CommandQuiesceMiddleware(MiddlewareBase):
    """Host-side tools run only when no command runs in the sandbox: a call made while a command session is still
    running is refused (the agent waits for it or interrupts it); otherwise the sandbox is settled first (no
    process a finished command left behind). At the end of each writer reply every session is stopped, so the
    run's own validation never races a command either."""

    def __init__(self, sessions: CommandSessions, tools: frozenset[str] = HOST_SIDE_TOOLS) -> None:
        self.sessions, self.tools = sessions, tools

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any,
                        ) -> AsyncGenerator[ToolChunk | ToolResponse, None]:
        call = input_kwargs["tool_call"]
        if call.name in self.tools:
            live = self.sessions.live()
            if live:
                text = (f"Refused: command session(s) {', '.join(live)} still running in the sandbox; they could "
                        f"change the project while {call.name} works. Wait for them (Bash with session_id) or "
                        "interrupt them first.")
                yield ToolResponse(content=[TextBlock(text=text)], state=ToolResultState.ERROR, id=call.id)
                return
            await self.sessions.sandbox.settle()
        async for chunk in next_handler(**input_kwargs):
            yield chunk

    async def on_reply(self, agent: Any, input_kwargs: dict[str, Any], next_handler: Any,
                       ) -> AsyncGenerator[Any, None]:
        try:
            async for item in next_handler(**input_kwargs):
                yield item
        finally:
            await self.sessions.stop_all()

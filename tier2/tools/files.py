"""The agents' file tools, bound to one project: tier2's Glob and Grep, and AgentScope's Read/Write/Edit on tier2's
project backend (`tier2.tools.project_io`).

AgentScope's own Glob and Grep default ``path`` to the server's working directory, run helper programs with the
service's whole environment, and pass ``path`` to ripgrep without ``--`` (``"path": "--pre=/bin/sh"`` runs a
program). These replacements require ``path`` (an absolute path inside the project, re-checked here whatever
the guard did), never start a program that parses model arguments on its command line, and run the regex
search in a separate process with an empty environment and a timeout (a pathological pattern is killed).
Output formats follow AgentScope's tools (one path or ``path:line:text`` per line, newest-first for Glob).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any, Final

from agentscope.message import TextBlock, ToolResultState
from agentscope.permission import PermissionBehavior, PermissionContext, PermissionDecision
from agentscope.tool import Edit, Read, ToolBase, ToolChunk, Write

from tier2.tools.project_io import FileLimits, ProjectFiles, run_tool_io
from tier2.workspace.paths import PathRefused, check_glob_pattern, resolve_inside

__all__ = ["ProjectGlob", "ProjectGrep", "make_file_tools", "make_rw_tools", "glob_regex"]

MAX_RESULTS: Final = 500
#: one Glob call looks at no more directory entries than this, and for no longer (its walk runs on `TOOL_IO`)
GLOB_MAX_ENTRIES: Final = 50_000
GLOB_DEADLINE_S: Final = 5.0
GREP_TIMEOUT_S: Final = 20.0
_HELPER = Path(__file__).with_name("grep_helper.py")
_SKIP = {".git", "node_modules", ".tier2"}


def _chunk(text: str, ok: bool = True) -> ToolChunk:
    return ToolChunk(content=[TextBlock(text=text)], state=ToolResultState.SUCCESS if ok else ToolResultState.ERROR)


def _allow(name: str) -> PermissionDecision:
    return PermissionDecision(behavior=PermissionBehavior.ALLOW, message=f"{name} reads only inside the project")


def _page(lines: list[str], head_limit: int | None, offset: int) -> str:
    limit = MAX_RESULTS if head_limit in (None, 0) else min(int(head_limit), MAX_RESULTS)
    page = lines[max(0, offset):max(0, offset) + limit]
    more = len(lines) - max(0, offset) - len(page)
    return "\n".join(page) + (f"\n\n[{more} more result(s): use offset/head_limit]" if more > 0 else "")


class ProjectGlob(ToolBase):
    name = "Glob"
    description = ("Find files in the project by glob pattern (e.g. 'src/**/*.js', 'data/*.json'), relative to "
                   "`path` (an absolute directory inside the project). Returns matching paths, newest first.")
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {"pattern": {"type": "string", "description": "glob pattern relative to path"},
                       "path": {"type": "string", "description": "absolute directory inside the project"}},
        "required": ["pattern", "path"],
    }
    is_concurrency_safe = True
    is_read_only = True

    def __init__(self, project: Path, max_entries: int = GLOB_MAX_ENTRIES, deadline_s: float = GLOB_DEADLINE_S,
                 ) -> None:
        super().__init__()
        self.root = str(project.resolve())
        self.max_entries, self.deadline_s = max_entries, deadline_s

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return _allow(self.name)

    async def call(self, pattern: str = "", path: str = "", **_: Any) -> ToolChunk:
        try:
            base = Path(resolve_inside(self.root, path))
            check_glob_pattern(pattern)
        except PathRefused as exc:
            return _chunk(f"Refused: {exc}", ok=False)
        found, stopped = await run_tool_io(self._glob, base, pattern)
        if found is None:
            return _chunk(f"Directory not found: {path}", ok=False)
        if not found:
            return _chunk(f"No files found matching pattern: {pattern}" + stopped)
        return _chunk("\n".join(found[:MAX_RESULTS]) + stopped)

    def _glob(self, base: Path, pattern: str) -> tuple[list[str] | None, str]:
        """Matching files under ``base`` (newest first) and a note when the walk stopped at its budget. The walk
        never follows a directory link, looks at most at ``max_entries`` entries and stops at ``deadline_s``."""
        if not base.is_dir() or base.is_symlink():
            return None, ""
        match = glob_regex(pattern).fullmatch
        depth = None if "**" in pattern else len([s for s in pattern.split("/") if s not in ("", ".")])
        deadline = time.monotonic() + self.deadline_s
        hits: list[tuple[float, str]] = []
        seen, stack, stopped = 0, [(str(base), "", 0)], ""
        while stack and not stopped:
            top, rel, level = stack.pop()
            try:
                with os.scandir(top) as it:
                    for entry in it:
                        seen += 1
                        if seen > self.max_entries or time.monotonic() > deadline:
                            stopped = (f"\n\n[search stopped after {seen - 1} entries"
                                       f"{'' if seen > self.max_entries else f' and {self.deadline_s:g} s'}: "
                                       "narrow the pattern or the path]")
                            break
                        name = f"{rel}{entry.name}"
                        if entry.name in _SKIP:
                            continue
                        if entry.is_dir(follow_symlinks=False):
                            if depth is None or level + 1 < depth:
                                stack.append((entry.path, name + "/", level + 1))
                        elif match(name) and len(hits) < 10 * MAX_RESULTS and self._inside_file(entry):
                            hits.append((entry.stat().st_mtime, entry.path))
            except OSError:
                continue
        return [p for _, p in sorted(hits, key=lambda t: (-t[0], t[1]))], stopped

    def _inside_file(self, entry: os.DirEntry[str]) -> bool:
        try:
            if not entry.is_file():  # follows a file link: its target must be a file inside the project
                return False
        except OSError:
            return False
        real = os.path.realpath(entry.path)
        return real == self.root or real.startswith(self.root + os.sep)


def _class_end(seg: str, j: int) -> int:
    """Index of the ``]`` closing the class opened at ``seg[j]``, or -1 (then ``[`` is a literal)."""
    start = j + 1 + (seg[j + 1:j + 2] == "!")
    start += seg[start:start + 1] == "]"
    return seg.find("]", start)


def glob_regex(pattern: str) -> re.Pattern[str]:
    """The regex a relative glob pattern matches relative paths with (``**`` = any directories, ``*`` and ``?``
    within one name, ``[...]`` a class) — pathlib's semantics without its unbounded recursion."""
    out: list[str] = []
    segments = [s for s in pattern.split("/") if s not in ("", ".")]
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        if seg == "**":
            out.append(".*" if last else "(?:[^/]+/)*")
            continue
        j, part = 0, []
        while j < len(seg):
            c = seg[j]
            if c == "*":
                part.append("[^/]*")
            elif c == "?":
                part.append("[^/]")
            elif c == "[" and (k := _class_end(seg, j)) > 0:
                body = seg[j + 1:k].replace("\\", "\\\\")
                part.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                j = k
            else:
                part.append(re.escape(c))
            j += 1
        out.append("".join(part) + ("" if last else "/"))
    return re.compile("".join(out))


class ProjectGrep(ToolBase):
    name = "Grep"
    description = ("Search file contents in the project with a regular expression (Python syntax). `path` (an "
                   "absolute file or directory inside the project) is required. output_mode: "
                   "files_with_matches (default), content (path:line:text, with -A/-B/-C context) or count.")
    input_schema: dict[str, Any] = {
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "regular expression"},
            "path": {"type": "string", "description": "absolute file or directory inside the project"},
            "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"]},
            "glob": {"type": "string", "description": "only files matching this glob, e.g. '*.js'"},
            "type": {"type": "string", "description": "file type: js, ts, json, html, css, md"},
            "i": {"type": "boolean", "description": "case-insensitive"},
            "n": {"type": "boolean", "description": "line numbers (content mode), default true"},
            "-A": {"type": "integer", "minimum": 0, "maximum": 50},
            "-B": {"type": "integer", "minimum": 0, "maximum": 50},
            "-C": {"type": "integer", "minimum": 0, "maximum": 50},
            "multiline": {"type": "boolean"},
            "head_limit": {"type": "integer", "minimum": 0},
            "offset": {"type": "integer", "minimum": 0},
        },
        "required": ["pattern", "path"],
    }
    is_concurrency_safe = True
    is_read_only = True

    def __init__(self, project: Path, timeout_s: float = GREP_TIMEOUT_S) -> None:
        super().__init__()
        self.root, self.timeout_s = str(project.resolve()), timeout_s

    async def check_permissions(self, tool_input: dict[str, Any], context: PermissionContext) -> PermissionDecision:
        return _allow(self.name)

    async def call(self, pattern: str = "", path: str = "", **kw: Any) -> ToolChunk:
        try:
            base = resolve_inside(self.root, path)
            if kw.get("glob") is not None:
                check_glob_pattern(kw["glob"])
        except PathRefused as exc:
            return _chunk(f"Refused: {exc}", ok=False)
        if not isinstance(pattern, str) or not pattern or len(pattern) > 2000:
            return _chunk("pattern is required (at most 2000 characters)", ok=False)
        ctx = kw.get("-C")
        req = {"root": self.root, "path": base, "pattern": pattern, "output_mode": kw.get("output_mode"),
               "glob": kw.get("glob"), "type": kw.get("type"), "i": bool(kw.get("i")), "n": kw.get("n", True),
               "multiline": bool(kw.get("multiline")),
               "before": kw.get("-B") if ctx is None else ctx, "after": kw.get("-A") if ctx is None else ctx}
        result = await self._run(req)
        if "error" in result:
            return _chunk(str(result["error"]), ok=False)
        lines = [str(x) for x in result.get("lines", [])]
        if not lines:
            return _chunk(f"No matches found for pattern: {pattern}")
        return _chunk(_page(lines, kw.get("head_limit"), int(kw.get("offset") or 0)))

    async def _run(self, req: dict[str, Any]) -> dict[str, Any]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-I", str(_HELPER), stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, env={}, cwd=self.root)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(json.dumps(req).encode()), self.timeout_s)
        except TimeoutError:
            proc.kill()
            await proc.wait()
            return {"error": f"search timed out after {self.timeout_s:.0f} s: simplify the pattern or the path"}
        except asyncio.CancelledError:
            proc.kill()
            await proc.wait()
            raise
        try:
            parsed = json.loads(out or b"{}")
        except json.JSONDecodeError:
            return {"error": "search failed"}
        return parsed if isinstance(parsed, dict) else {"error": "search failed"}


def make_file_tools(project: Path) -> list[ToolBase]:
    """tier2's Glob and Grep bound to ``project``."""
    return [ProjectGlob(project), ProjectGrep(project)]


def make_rw_tools(project: Path, limits: FileLimits | None = None, *, writes: bool = True) -> list[ToolBase]:
    """AgentScope's Read (and, with ``writes``, Write and Edit) on `ProjectFiles`: the only file backend any agent
    role's tools use (bounded executor, regular files only, capped writes)."""
    files = ProjectFiles(project, limits)
    return [Read(backend=files), *([Write(backend=files), Edit(backend=files)] if writes else [])]

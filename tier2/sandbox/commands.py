"""Command sessions (seed 000 §2.5): the writer's shell commands, run inside the sandbox.

A command runs for at most one *time slice*; if it has not finished by then, the call returns a **session id** and
the command keeps running. Later calls on that id read the output that arrived since the last read, write to its
stdin, or interrupt it; the exit code is reported once it ends. What a call shows is bounded (head + tail around a
``[... truncated ...]`` marker); the **full log** is kept outside the project (the agent home) and paged with
`CommandSessions.page`.

**Across attempts** (seed 000 §2.6), with a `CommandJournal` (`tier2.store.commands`): a session an earlier attempt
started is answered from its record and its log (the logs of every attempt of a run share one directory), from
where the output shown to the model stopped (the journal keeps that offset on every read: nothing repeated, nothing
skipped; the whole log stays pageable with BashLog): ended →
its exit code and output; still running when its attempt died → *lost* (its executor was stopped at the hand-over),
with its output until then and what to do by the command's kind (a build, test or read-only command can simply be
re-run; one that changes files: look at the project first); no record → *unknown*, said as such, never guessed.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from tier2.sandbox.base import Sandbox
from tier2.settings.sandbox import CommandConfig

__all__ = ["CommandJournal", "CommandReport", "CommandSessions", "UnknownSession", "rerun_advice"]

log = logging.getLogger(__name__)

_SID = re.compile(r"^c[0-9]{1,6}-[0-9a-f]{4}$")
#: commands that only read, build or test: re-running one that was lost changes nothing a person made
_RERUNNABLE = frozenset({"ls", "cat", "head", "tail", "wc", "grep", "find", "du", "stat", "file", "echo", "pwd",
                         "true", "test", "sleep", "node", "npx", "esbuild", "tsc", "eslint", "diff", "sort", "uniq",
                         "tree", "date", "which", "env", "printf", "cd"})
_NPM_SAFE = frozenset({"test", "t", "run", "ls", "view", "outdated", "audit"})
_WRITES = re.compile(r"(^|[^<>&0-9])>{1,2}\s*[^&\s]|\btee\b|\bsed\s+-i")


class CommandJournal(Protocol):
    """Where an attempt records its command sessions and reads an earlier attempt's (`tier2.store.commands`)."""

    async def started(self, sid: str, command: str) -> None: ...

    async def ended(self, sid: str, exit_code: int | None, *, stopped: bool = False) -> None: ...

    async def lookup(self, sid: str) -> dict[str, Any] | None: ...

    async def shown(self, sid: str, chars: int) -> None: ...


def rerun_advice(command: str) -> str:
    """What to do about a command that was lost mid-run, by its kind (§2.6: a test can be re-run; what changes
    things needs a look first)."""
    stages = [part.strip().split() for part in re.split(r"&&|\|\||;|\|", command) if part.strip()]
    safe = bool(stages) and not _WRITES.search(command) and all(
        words[0] in _RERUNNABLE or (words[0] == "npm" and len(words) > 1 and words[1] in _NPM_SAFE)
        for words in stages)
    if safe:
        return "it only reads, builds or tests: start it again to get its result"
    return ("it may have changed files before it stopped: look at the project (Read, Glob, git-free diffs) "
            "before starting it again")


class UnknownSession(KeyError):
    """A session id this sandbox does not know (never started, or lost with an earlier sandbox)."""


@dataclass
class CommandReport:
    session_id: str
    command: str
    output: str
    running: bool
    exit_code: int | None
    elapsed_ms: int
    truncated: int = 0  # characters left out of ``output`` (they are in the log)
    log_chars: int = 0
    #: a session of an earlier attempt: what became of it ("ended in attempt 1", "lost with attempt 1 ...")
    earlier: str = ""

    def text(self) -> str:
        head = f"$ {self.command}  [session {self.session_id}]"
        body = self.output if self.output else "(no new output)"
        if self.earlier:
            tail = f"[{self.earlier}]"
        elif self.running:
            tail = (f"[still running after {self.elapsed_ms / 1000:.1f} s: session {self.session_id}; call Bash "
                    f"with session_id={self.session_id!r} to read new output, send stdin or interrupt]")
        else:
            tail = f"[exit code {self.exit_code}]"
        return f"{head}\n{body.rstrip()}\n{tail}"


@dataclass
class _Session:
    id: str
    command: str
    proc: asyncio.subprocess.Process
    log: Path
    started: float
    reader: asyncio.Task[None] | None = None
    shown: int = 0  # characters of the log already returned
    size: int = 0
    cut: bool = False
    done: asyncio.Event = field(default_factory=asyncio.Event)


class CommandSessions:
    """The command sessions of one run's sandbox (``log_dir`` is outside the project)."""

    def __init__(self, sandbox: Sandbox, log_dir: Path, config: CommandConfig | None = None,
                 journal: CommandJournal | None = None) -> None:
        self.sandbox, self.log_dir, self.config = sandbox, log_dir, config or CommandConfig()
        self.journal = journal
        self._closing = False
        self._sessions: dict[str, _Session] = {}
        self._prefix = uuid.uuid4().hex[:4]  # ids of another attempt's sandbox never match this one's
        self._n = 0

    def _live(self) -> int:
        return sum(1 for s in self._sessions.values() if not s.done.is_set())

    async def start(self, command: str, wait_s: float | None = None) -> CommandReport:
        if self._live() >= self.config.max_sessions:
            raise RuntimeError(f"{self.config.max_sessions} command sessions are still running: wait for one, "
                               "or interrupt it, before starting another")
        self._n += 1
        sid = f"c{self._n}-{self._prefix}"
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log = self.log_dir / f"{sid}.log"
        log.write_bytes(b"")
        proc = await self.sandbox.spawn(["/bin/bash", "-c", command], env={"TIER2_CMD": sid}, stdin=True)
        setattr(proc, "tier2_marker", sid)  # noqa: B010 - lets a kind find the command's processes
        session = _Session(sid, command, proc, log, time.monotonic())
        await self._journal("started", sid, command)
        session.reader = asyncio.create_task(self._read(session))
        self._sessions[sid] = session
        return await self._report(session, wait_s)

    async def poll(self, sid: str, *, stdin: str | None = None, interrupt: bool = False,
                   wait_s: float | None = None) -> CommandReport:
        if sid not in self._sessions:
            return await self._earlier(sid)
        session = self._get(sid)
        if stdin is not None and not session.done.is_set() and session.proc.stdin is not None:
            data = stdin[: self.config.stdin_chars].encode()
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                session.proc.stdin.write(data)
                await session.proc.stdin.drain()
        if interrupt and not session.done.is_set():
            await self.sandbox.interrupt(session.proc)
            try:
                await asyncio.wait_for(asyncio.shield(session.done.wait()), 3)
            except TimeoutError:
                await self.sandbox.kill(session.proc)
        return await self._report(session, wait_s if wait_s is not None else (0.5 if stdin or interrupt else None))

    def live(self) -> list[str]:
        """Ids of the sessions whose command is still running."""
        return [sid for sid, s in self._sessions.items() if not s.done.is_set()]

    async def stop_all(self) -> list[str]:
        """Kill every running command (their logs stay pageable) and settle the sandbox; returns the ids."""
        stopped = self.live()
        for sid in stopped:
            await self.sandbox.kill(self._sessions[sid].proc)
            await self._sessions[sid].done.wait()
        await self.sandbox.settle()
        return stopped

    def page(self, sid: str, offset: int = 0, limit: int = 200) -> str:
        """Lines ``offset``..``offset+limit`` of a session's full log (0-based), with where to continue."""
        session = self._sessions.get(sid)
        path = session.log if session is not None else self._earlier_log(sid)
        lines = path.read_text(errors="replace").splitlines()
        limit = max(1, min(limit, 2000))
        part = lines[max(0, offset): max(0, offset) + limit]
        more = offset + limit < len(lines)
        tail = (f"[lines {offset}-{offset + len(part)} of {len(lines)}; next: offset={offset + limit}]" if more
                else f"[lines {offset}-{offset + len(part)} of {len(lines)}; end of log"
                     f"{' (cut at the log limit)' if session is not None and session.cut else ''}]")
        return "\n".join(part + [tail])

    async def close(self) -> None:
        self._closing = True  # what is still running now is stopped with its attempt, not ended by itself
        for session in self._sessions.values():
            if not session.done.is_set():
                await self.sandbox.kill(session.proc)
            if session.reader is not None:
                session.reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await session.reader

    def _get(self, sid: str) -> _Session:
        session = self._sessions.get(sid)
        if session is None:
            raise UnknownSession(f"no command session {sid!r} in this sandbox (sessions do not survive a lost "
                                 "sandbox or a resumed run: start the command again)")
        return session

    async def _read(self, session: _Session) -> None:
        assert session.proc.stdout is not None
        try:
            with session.log.open("ab") as out:
                while chunk := await session.proc.stdout.read(65536):
                    room = self.config.log_bytes - session.size
                    if room > 0:
                        out.write(chunk[:room])
                        out.flush()
                        session.size += min(room, len(chunk))
                    if len(chunk) > room and not session.cut:
                        session.cut = True
            await session.proc.wait()
        finally:
            try:
                await self.sandbox.reclaim()  # no set-id file the command made stays in the project
            except Exception:  # noqa: BLE001 - the next command's hand-over strips them again
                log.warning("stripping set-id bits after %s failed", session.id, exc_info=True)
            finally:
                session.done.set()
                await self._journal("stopped" if self._closing else "ended", session.id, session.proc.returncode)

    async def _journal(self, what: str, sid: str, arg: str | int | None) -> None:
        """Record a session's start, end or the output shown so far; a store that cannot be written leaves it
        unknown to later attempts (logged), never the command failed."""
        if self.journal is None:
            return
        try:
            if what == "started":
                await self.journal.started(sid, str(arg))
            elif what == "shown":
                await self.journal.shown(sid, int(arg or 0))
            else:
                await self.journal.ended(sid, arg if isinstance(arg, int) else None, stopped=what == "stopped")
        except Exception:  # noqa: BLE001 - a store outage must not fail the command
            log.warning("could not record command session %s %s", sid, what, exc_info=True)

    def _earlier_log(self, sid: str) -> Path:
        path = self.log_dir / f"{sid}.log"
        if not _SID.match(sid) or not path.is_file() or path.is_symlink():
            raise UnknownSession(f"no command session {sid!r} in this run (start the command again)")
        return path

    async def _earlier(self, sid: str) -> CommandReport:
        """A session this attempt did not start: answered from its record and its log (§2.6)."""
        record: dict[str, Any] | None = None
        if self.journal is not None and _SID.match(sid):
            try:
                record = await self.journal.lookup(sid)
            except Exception:  # noqa: BLE001 - unknown stays unknown
                raise UnknownSession(f"command session {sid!r}: its state is unknown (the run's records could not "
                                     "be read); ask again, do not assume it ran or failed") from None
        if record is None:
            raise UnknownSession(f"no command session {sid!r} in this run (never started, or started where no "
                                 "record was kept): start the command again")
        command, attempt = str(record.get("command", "")), record.get("attempt")
        try:
            text = self._earlier_log(sid).read_text(errors="replace")
        except UnknownSession:
            text = ""
        before = record.get("shown")
        start = before if isinstance(before, int) and 0 <= before <= len(text) else 0
        new, limit = text[start:], self.config.output_chars
        cut = max(0, len(new) - limit)
        shown = new if not cut else f"[... {cut} characters before; the full log: BashLog session_id={sid!r}]\n" + \
            new[-limit:]
        if start:
            shown = (f"[the first {start} characters of its output were shown before; BashLog "
                     f"session_id={sid!r} pages the whole log]\n{shown}")
        await self._journal("shown", sid, len(text))  # a second look shows only what is new (nothing, once ended)
        if record.get("state") == "stopped":
            return CommandReport(sid, command, shown, False, None, 0, cut, len(text),
                                 earlier=f"stopped when attempt {attempt} ended (its worker shut down) before it "
                                         f"finished — {rerun_advice(command)}")
        if record.get("state") == "exited":
            code = record.get("exit_code")
            return CommandReport(sid, command, shown, False, code if isinstance(code, int) else None, 0, cut,
                                 len(text), earlier=f"ended in attempt {attempt} with exit code {code}")
        return CommandReport(sid, command, shown, False, None, 0, cut, len(text),
                             earlier=f"lost: it was still running when attempt {attempt}'s worker stopped; its "
                                     f"processes were stopped before this attempt began, so it never finished — "
                                     f"{rerun_advice(command)}")

    async def _report(self, session: _Session, wait_s: float | None) -> CommandReport:
        slice_s = min(wait_s if wait_s is not None else self.config.slice_s, self.config.max_slice_s)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(session.done.wait()), max(0.0, slice_s))
        text = session.log.read_text(errors="replace")
        new = text[session.shown:]
        session.shown = len(text)
        await self._journal("shown", session.id, session.shown)
        limit = self.config.output_chars
        truncated = 0
        if len(new) > limit:
            truncated = len(new) - limit
            head, tail = new[: limit // 2], new[-(limit - limit // 2):]
            first = text.count("\n", 0, len(text) - len(new))
            new = (f"{head}\n[... {truncated} characters truncated; the full log: BashLog "
                   f"session_id={session.id!r} offset={first}]\n{tail}")
        done = session.done.is_set()
        code = session.proc.returncode if done else None
        return CommandReport(session.id, session.command, new, not done, code,
                             int((time.monotonic() - session.started) * 1000), truncated, len(text))

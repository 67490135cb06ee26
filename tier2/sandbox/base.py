"""The workspace contract every kind implements: files, exec, build, browser, skills.

* **files** — the project directory is the same absolute path on the host and inside the sandbox, and it is the
  only writable place: the host-side file tools (behind the path guard) and commands in the sandbox see the same
  files;
* **exec** — `Sandbox.wrap` turns a command into the host argv that runs it inside the sandbox (with its own
  environment and working directory); `Sandbox.exec` runs one to completion, `Sandbox.spawn` starts one with pipes
  (command sessions, `tier2.sandbox.commands`);
* **build** — `Sandbox.launcher` is the toolchain's launcher: esbuild runs inside the sandbox;
* **browser** — `Sandbox.chromium` is an executable Playwright launches instead of Chromium: it starts Chromium
  inside the sandbox and keeps Playwright's pipe (fds 3/4) as the only channel — no socket, no network;
* **identity** — nothing in a sandbox runs as root on the host (`tier2.sandbox.identity`): `Sandbox.hand_over`
  before each command gives the project to the sandbox's unprivileged uid and strips set-id bits, `Sandbox.reclaim`
  after it strips them again;
* **skills** — the pack's skill directories (and the toolchain) are visible read-only at their host paths.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shlex
import signal
import stat
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

from tier2.sandbox.identity import hand_over
from tier2.settings.identity import CONFINED_LAUNCHER_MARK, HostIdentity
from tier2.settings.sandbox import CgroupConfig, IsolationConfig, Kind, SandboxLimits

__all__ = ["ExecResult", "Sandbox", "SandboxOwner", "SandboxSpec", "BASE_ENV"]

#: The environment of every command in a sandbox (nothing from the service's environment).
BASE_ENV: dict[str, str] = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}


@dataclass(frozen=True)
class SandboxOwner:
    """The run attempt a sandbox works for (its fencing token is the attempt number) and the store it is recorded
    in (the key prefix: a sweep only judges containers of its own store, on a daemon other installs may share)."""

    run_id: str
    attempt: int
    store: str = ""


@dataclass(frozen=True)
class SandboxSpec:
    """What a sandbox needs: the project (rw), read-only extras (toolchain, pack packages, skills), limits and
    where tier2 keeps its own files for it (wrapper scripts, command logs) — outside the project."""

    project: Path
    home: Path
    read_only: tuple[Path, ...] = ()
    limits: SandboxLimits = field(default_factory=SandboxLimits)
    label: str = "tier2"
    #: the run and attempt whose executor this is (None: a sandbox outside a run — validate, packs check): the
    #: docker kind labels its containers with them so a new attempt can stop the superseded attempt's executors
    owner: SandboxOwner | None = None
    isolation: IsolationConfig = field(default_factory=IsolationConfig)
    cgroups: CgroupConfig = field(default_factory=CgroupConfig)


@dataclass
class ExecResult:
    code: int | None
    output: str
    duration_ms: int
    timed_out: bool = False


class Sandbox(ABC):
    kind: Kind
    #: the unprivileged host identity commands run as (None: the kind runs them as tier2 itself — local)
    ident: HostIdentity | None = None

    def __init__(self, spec: SandboxSpec) -> None:
        self.spec = spec
        self.project = spec.project.resolve()

    # --- lifecycle ---------------------------------------------------------------------------------------------

    async def start(self) -> None:  # noqa: B027 - optional for kinds without a long-lived part
        """Bring up what the kind needs (a container); idempotent, and again after the sandbox was lost."""

    async def close(self) -> None:  # noqa: B027
        """Stop everything the sandbox started."""

    async def settle(self) -> None:  # noqa: B027
        """Make sure no process a finished command left behind still runs in the sandbox (host-side tools then read
        and write project files that nothing inside can change under them). bubblewrap needs nothing: a command's
        pid namespace dies with it."""

    async def hand_over(self) -> None:
        """Before a command: the project's entries owned by the sandbox's uid (tier2's host-side writes leave
        root-owned files), every set-id bit stripped (a kind whose commands run as tier2 itself: nothing)."""
        if self.ident is not None:
            await asyncio.to_thread(hand_over, self.project, self.ident)

    async def reclaim(self) -> None:
        """After a command: every set-id bit in the project stripped (no set-id file stays on the host)."""
        if self.ident is not None:
            await asyncio.to_thread(hand_over, self.project, self.ident)

    async def __aenter__(self) -> Sandbox:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # --- exec --------------------------------------------------------------------------------------------------

    @abstractmethod
    def wrap(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
             interactive: bool = False) -> list[str]:
        """The host argv that runs ``argv`` inside the sandbox with ``env`` (on top of `BASE_ENV`) in ``cwd``
        (default: the project). ``interactive``: keep stdin open (docker needs to be told)."""

    def host_env(self) -> dict[str, str]:
        """The environment of the host process that starts the sandbox (never the service's secrets)."""
        return {"PATH": os.environ.get("PATH", BASE_ENV["PATH"]), "LANG": "C.UTF-8"}

    async def spawn(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
                    stdin: bool = True) -> asyncio.subprocess.Process:
        """Start ``argv`` in the sandbox: stdout+stderr merged into one pipe, a new process group. The caller
        calls `reclaim` once it has ended (`exec` and the command sessions do)."""
        await self.start()
        await self.hand_over()
        return await asyncio.create_subprocess_exec(
            *self.wrap(argv, env=env, cwd=cwd, interactive=stdin), cwd=self.project, env=self.host_env(),
            stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT, start_new_session=True)

    async def exec(self, argv: list[str], *, timeout_s: float = 60.0, stdin: bytes | None = None,
                   env: dict[str, str] | None = None, cwd: Path | None = None) -> ExecResult:
        """Run ``argv`` to completion (killed after ``timeout_s``); output is stdout+stderr."""
        t0 = time.monotonic()
        proc = await self.spawn(argv, env=env, cwd=cwd, stdin=stdin is not None)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(stdin), timeout_s)
        except TimeoutError:
            await self.kill(proc)
            out = b""
            return ExecResult(None, f"timed out after {timeout_s:g}s", int((time.monotonic() - t0) * 1000), True)
        finally:
            await self.reclaim()
        return ExecResult(proc.returncode, out.decode(errors="replace"), int((time.monotonic() - t0) * 1000))

    async def kill(self, proc: asyncio.subprocess.Process) -> None:
        """Kill a spawned command and everything it started."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            await asyncio.wait_for(proc.wait(), 10)

    async def interrupt(self, proc: asyncio.subprocess.Process) -> None:
        """Ask a spawned command to stop (SIGINT to its process group), as Ctrl-C would."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGINT)

    # --- build -------------------------------------------------------------------------------------------------

    def launcher(self, argv: list[str], env: dict[str, str], cwd: Path) -> list[str]:
        """`tier2.toolchain.esbuild.Launcher`: run the confined esbuild runner inside the sandbox (which may then
        write ``dist/`` even where tier2 wrote it as root)."""
        if self.ident is not None:
            hand_over(self.project, self.ident)
        return self.wrap(argv, env=env, cwd=cwd, interactive=True)

    # --- browser -----------------------------------------------------------------------------------------------

    def chromium(self, executable: str) -> str:
        """An executable that starts ``executable`` inside this sandbox, for Playwright's ``executable_path``.

        Playwright talks to Chromium over ``--remote-debugging-pipe`` (fds 3 and 4); the wrapper keeps them, so the
        sandboxed browser needs no socket at all. Pages come from Playwright's request interception, so the
        browser needs no project files either. Chromium's own sandbox is off (``--no-sandbox``) only here: the
        kind's sandbox confines it, and that sandbox forbids the namespaces Chromium's would need."""
        argv = self.wrap_browser([executable])
        script = f"#!/bin/sh\n{CONFINED_LAUNCHER_MARK} (tier2.sandbox: Chromium inside the run's sandbox)\nexec " + \
            " ".join(shlex.quote(a) for a in argv) + ' "$@" --no-sandbox' + self.browser_redirects() + "\n"
        digest = hashlib.sha256(script.encode()).hexdigest()[:12]
        path = self.spec.home / "bin" / f"chromium-{self.kind}-{digest}"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".tmp")
            tmp.write_text(script)
            tmp.chmod(stat.S_IRWXU)
            tmp.replace(path)
        return str(path)

    def wrap_browser(self, argv: list[str]) -> list[str]:
        return self.wrap(argv, env={"HOME": "/tmp"}, cwd=Path("/tmp"), interactive=True)

    def browser_redirects(self) -> str:
        return ""

"""Honest markers (tests/README.md): a test's markers say what it starts, checked for every test, so they cannot drift.

Three rules, each failing the test that breaks it (hooked in from ``tests/conftest.py``):

- **fixtures**: a test whose fixture closure holds ``redis_server`` (so ``redis_url``, ``settings``, ``runtime``...)
  carries ``redis``; ``pool`` (the Chromium pool) ``browser``; ``docker_host`` (a private dockerd) ``slow``. Checked
  before any fixture is set up, so the server is never started for an unmarked test.
- **processes**: what the test starts while it sets up and runs, seen through a ``sys.audit`` hook:
  ``redis-server`` needs ``redis``; Playwright's driver or a Chromium ``browser``; bubblewrap, docker, a tier2
  service or CLI (``python -m tier2``), a nested pytest, a Python script other than ``-c`` and ``ci/``, a fork
  (multiprocessing) need ``slow`` or ``e2e``. One-shot tools (``node``, ``npm``, ``python -c``, the ``ci/`` checks,
  tier2's own helper scripts such as the Grep tool's) are allowed in a pure unit.
- **folders**: a test under ``tests/unit/`` is a pure unit (never ``redis``, ``browser`` or ``e2e``); a test under
  ``tests/e2e/`` carries ``e2e``.

``make test-fast`` runs every test with none of the four markers: these rules are what keeps that tier pure.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

#: fixture in a test's closure → the marker the test must carry
FIXTURE_MARKERS = {"redis_server": "redis", "pool": "browser", "docker_host": "slow"}
#: the markers that keep a test out of `make test-fast`
HEAVY = ("redis", "browser", "slow", "e2e")
#: what a started process needs: any one of these markers
NEEDS_REDIS = ("redis",)
NEEDS_BROWSER = ("browser",)
NEEDS_PROCESSES = ("slow", "e2e")
_SANDBOXES = {"bwrap", "docker", "dockerd", "containerd", "runc"}
_BROWSERS = {"chromium", "chrome", "chromium-browser", "headless_shell", "chrome-headless-shell"}
_TESTS = Path(__file__).resolve().parent


def process_needs(exe: str, argv: Sequence[str]) -> tuple[str, tuple[str, ...]] | None:
    """What starting ``argv`` (``exe`` is its program) asks of a test's markers: ``(what, any_of)``, or None for a
    one-shot tool a pure unit may run."""
    name = Path(str(exe)).name
    args = [str(a) for a in argv]
    if name == "redis-server" or (args and Path(args[0]).name == "redis-server"):
        return "redis-server", NEEDS_REDIS
    if name in _BROWSERS or any("playwright" in a or "ms-playwright" in a for a in args[:3]):
        return "Chromium (Playwright)", NEEDS_BROWSER
    if name in _SANDBOXES:
        return name, NEEDS_PROCESSES
    if name.startswith("python"):
        rest = args[1:]
        while rest and rest[0].startswith("-") and rest[0] not in ("-c", "-m"):  # -I, -u, -X opt, -W opt...
            rest = rest[2:] if rest[0] in ("-X", "-W") else rest[1:]
        if not rest or rest[0] == "-c":
            return None
        if rest[0] == "-m":
            module = rest[1] if len(rest) > 1 else ""
            if module.split(".")[0] in ("tier2", "pytest", "uvicorn"):
                return f"python -m {module}", NEEDS_PROCESSES
            return None
        script = Path(rest[0])
        if script.parent.name == "ci" or script.resolve().is_relative_to(_TESTS.parent / "tier2"):  # tier2's helpers
            return None
        return f"python {script.name}", NEEDS_PROCESSES
    if name == "tier2":
        return "tier2 " + (args[1] if len(args) > 1 else ""), NEEDS_PROCESSES
    return None


def fixture_problems(fixturenames: Iterable[str], markers: set[str]) -> list[str]:
    return [f"uses the `{fixture}` fixture but has no `{marker}` marker"
            for fixture, marker in FIXTURE_MARKERS.items() if fixture in fixturenames and marker not in markers]


def folder_problems(path: Path, markers: set[str]) -> list[str]:
    try:
        parts = path.resolve().relative_to(_TESTS).parts
    except ValueError:
        return []
    if parts[:1] == ("unit",):
        wrong = sorted(markers & {"redis", "browser", "e2e"})
        if wrong:
            return [f"is under tests/unit/ (pure units) but marked {', '.join(wrong)}: move it to tests/integration/"]
    if parts[:1] == ("e2e",) and "e2e" not in markers:
        return ["is under tests/e2e/ but has no `e2e` marker"]
    return []


class ProcessWatch:
    """The audit hook: while a test sets up and runs, each process it starts is checked against its markers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._markers: set[str] | None = None
        self._problems: list[str] = []

    def install(self) -> None:
        sys.addaudithook(self._hook)

    def begin(self, markers: set[str]) -> None:
        with self._lock:
            self._markers, self._problems = markers, []

    def end(self) -> list[str]:
        with self._lock:
            problems, self._markers, self._problems = self._problems, None, []
        return problems

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if self._markers is None or event not in ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty"):
            return
        if event in ("os.fork", "os.forkpty"):
            need: tuple[str, tuple[str, ...]] | None = ("a fork (multiprocessing)", NEEDS_PROCESSES)
        else:
            exe, argv = args[0], args[1] if len(args) > 1 and args[1] is not None else [args[0]]
            need = process_needs(exe, argv)
        if need is None:
            return
        what, any_of = need
        with self._lock:
            if self._markers is not None and not self._markers & set(any_of):
                self._problems.append(f"starts {what} but has no `{'` or `'.join(any_of)}` marker")


def fast_first(values: Sequence[Any], n: int) -> list[Any]:
    """``values`` as test parameters: the first ``n`` in the fast tier, the rest marked ``slow`` (the whole suite
    runs them all): a table of briefs keeps its breadth without making `make test-fast` wait on every row."""
    import pytest  # the one pytest import here: the hooks above run without it

    return [v if i < n else pytest.param(v, marks=pytest.mark.slow) for i, v in enumerate(values)]

"""Plant what a hostile sandbox can leave at a name tier2 later touches from the host, and prove nothing outside the
project changed: a symlink to a file outside, a symlink to a directory outside, a dangling symlink, a FIFO, a hard
link to a file outside (issue #21 C1/M1). Shared by the unit, integration and service tests."""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")

KINDS = ["link-file", "link-dir", "dangling", "fifo", "hardlink"]
#: files tier2 writes or reads in a project from the host
FILE_NAMES = ["delivery.json", "screenshot.png", ".tier2/project.json", ".tier2/design/state.json",
              ".tier2/reports/final/report.json", ".tier2/reports/final/report.html",
              ".tier2/reports/final/01-menu.png", "design/spec.json", "docs/design/GDD.md", "data/economy.json"]
#: directories tier2 creates in a project from the host
DIR_NAMES = [".tier2", ".tier2/reports", ".tier2/reports/final", ".tier2/design", ".tier2/artifacts", "docs",
             "docs/design", "design", "data"]
VICTIM = b'{"victim": "a file outside the project"}\n'


class Outside:
    """A directory outside the project with a victim file in it, and its fingerprint to compare against."""

    def __init__(self, root: Path) -> None:
        self.dir = root
        self.dir.mkdir(parents=True, exist_ok=True)
        self.file = self.dir / "victim.json"
        self.file.write_bytes(VICTIM)
        self.before = self.fingerprint()

    def fingerprint(self) -> dict[str, tuple[str, bytes | str]]:
        out: dict[str, tuple[str, bytes | str]] = {}
        for dirpath, dirnames, filenames in os.walk(self.dir):
            for name in dirnames + filenames:
                p = Path(dirpath) / name
                rel = str(p.relative_to(self.dir))
                out[rel] = ("link", os.readlink(p)) if p.is_symlink() else \
                    ("dir", "") if p.is_dir() else ("file", p.read_bytes())
        return out

    def unchanged(self) -> bool:
        return self.fingerprint() == self.before


def plant(kind: str, at: Path, outside: Outside) -> None:
    """Replace whatever is at ``at`` with ``kind`` (its parent is made a real directory)."""
    at.parent.mkdir(parents=True, exist_ok=True)
    if at.is_symlink() or at.is_file() or at.is_fifo():
        at.unlink()
    elif at.is_dir():
        shutil.rmtree(at)
    if kind == "link-file":
        at.symlink_to(outside.file)
    elif kind == "link-dir":
        at.symlink_to(outside.dir)
    elif kind == "dangling":
        at.symlink_to(outside.dir / "nowhere" / "x")
    elif kind == "fifo":
        os.mkfifo(at)
    elif kind == "hardlink":
        os.link(outside.file, at)
    else:
        raise ValueError(kind)


def bounded(fn: Callable[[], T], timeout_s: float = 20.0) -> T:
    """``fn()`` in a daemon thread, failing the test if it does not return in ``timeout_s`` (a FIFO open that
    blocks would hang forever: the harness bounds it, not the code under test)."""
    out: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            out.append(fn())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            error.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(timeout_s)
    if worker.is_alive():
        raise AssertionError(f"{fn} blocked for {timeout_s} s (a FIFO opened for reading?)")
    if error:
        raise error[0]
    return out[0]

"""Real games nobody here wrote: the three MIT demos of npm ``@phaserjs/create-game@1.3.2``.

Fetched with ``npm pack`` (the npm registry is the only source) into a cache directory once (the tests use the
git-ignored ``workspaces/.cache/``); a file lock makes concurrent fetches (parallel test workers) wait for one.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

__all__ = ["CREATE_GAME", "DEMOS", "fetch_create_game_demos"]

CREATE_GAME = "@phaserjs/create-game@1.3.2"
DEMOS = ("coin-clicker", "memory-card-game", "phasers-revenge")


def fetch_create_game_demos(cache_dir: Path, timeout_s: float = 120.0) -> dict[str, Path]:
    """name -> demo project directory (index.html + src/ + public/); raises RuntimeError if npm cannot fetch."""
    root = cache_dir / "create-game-1.3.2"
    demo_root = root / "package" / "scaffolding" / "demo"
    cache_dir.mkdir(parents=True, exist_ok=True)
    with (cache_dir / "create-game-1.3.2.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not all((demo_root / d / "index.html").is_file() for d in DEMOS):
            _fetch(root, timeout_s)
    return {d: demo_root / d for d in DEMOS}


def _fetch(root: Path, timeout_s: float) -> None:
    """``npm pack`` the package and unpack it into ``root`` (replacing a partial earlier attempt)."""
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed")
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.run([npm, "pack", CREATE_GAME, "--silent", "--pack-destination", tmp],
                              capture_output=True, text=True, timeout=timeout_s)
        tgz = next(Path(tmp).glob("*.tgz"), None)
        if proc.returncode != 0 or tgz is None:
            raise RuntimeError(f"npm pack {CREATE_GAME} failed: {proc.stderr.strip()[-400:]}")
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        with tarfile.open(tgz) as tar:
            tar.extractall(root, filter="data")

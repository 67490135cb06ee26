"""The Phaser pack's real-game corpus from npm (packages whose licences allow it), fetched into a cache directory.

* the three MIT demos of ``@phaserjs/create-game@1.3.2`` (Vite projects, Phaser 3.80.1 in their lockfiles), as
  source projects and **built as their authors build them** (``npm ci`` from their lockfile, ``vite build``);
* ``pac-man-phaser@1.0.10`` (MIT; a Pac-Man game on Phaser 3.90 published as a React component), rendered by a
  small host page as its README shows and built with Vite.

The npm registry is the only source (``npm pack``, ``npm ci``, ``npm install``); everything stays under the
cache directory (git-ignored ``workspaces/.cache``). The machinery is `tier2.testing.corpus`.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

from tier2.testing.corpus import RealGame, build_like_author, npm, vite_build_sandboxed

__all__ = ["CREATE_GAME", "DEMOS", "PAC_MAN", "fetch_create_game_demos", "fetch_pac_man", "real_game_corpus"]

CREATE_GAME = "@phaserjs/create-game@1.3.2"
DEMOS = ("coin-clicker", "memory-card-game", "phasers-revenge")
PAC_MAN = "pac-man-phaser@1.0.10"


def fetch_create_game_demos(cache_dir: Path, timeout_s: float = 120.0) -> dict[str, Path]:
    """name -> demo project directory (index.html + src/ + public/); raises RuntimeError if npm cannot fetch.
    A file lock makes concurrent fetches (parallel test workers) wait for one."""
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


_PAC_MAN_HOST = {
    "package.json": json.dumps({
        "name": "pac-man-host", "private": True, "type": "module",
        "dependencies": {"pac-man-phaser": "1.0.10", "react": "19.1.1", "react-dom": "19.1.1"},
        "devDependencies": {"vite": "5.2.6"}}, indent=2),
    "index.html": ('<!doctype html>\n<html lang="en">\n<head><meta charset="UTF-8" /><link rel="icon" href="data:," />'
                   '<title>Pac-Man (pac-man-phaser)</title></head>\n<body><div id="root"></div>'
                   '<script type="module" src="/main.js"></script></body>\n</html>\n'),
    "main.js": ("// Host page for the published <PacMan /> React component (pac-man-phaser), as its README shows.\n"
                "import { createElement } from 'react';\nimport { createRoot } from 'react-dom/client';\n"
                "import { PacMan } from 'pac-man-phaser';\n\n"
                "createRoot(document.getElementById('root')).render(createElement(PacMan));\n"),
}


def fetch_pac_man(cache_dir: Path, timeout_s: float = 600.0) -> Path:
    """Install ``pac-man-phaser`` with React into a host page and ``vite build`` it; returns the ``dist/``."""
    work = cache_dir / "author-builds" / "pac-man"
    dist = work / "dist"
    if (dist / "index.html").is_file():
        return dist
    work.mkdir(parents=True, exist_ok=True)
    for name, text in _PAC_MAN_HOST.items():
        (work / name).write_text(text)
    npm(["install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], work, timeout_s)
    vite_build_sandboxed(work, cache_dir, timeout_s)
    if not (dist / "index.html").is_file():
        raise RuntimeError("vite build of the pac-man host produced no dist/index.html")
    return dist


def real_game_corpus(cache_dir: Path, with_pac_man: bool = True) -> list[RealGame]:
    """The npm part of the corpus (fetching and building what the cache lacks)."""
    demos = fetch_create_game_demos(cache_dir)
    games = [RealGame(d, f"{CREATE_GAME} scaffolding/demo/{d}", "MIT", "source", p) for d, p in demos.items()]
    games += [RealGame(f"{d}.dist", f"{CREATE_GAME} scaffolding/demo/{d} + phaser@3.80.1 (lockfile)", "MIT",
                       "vite build", build_like_author(p, cache_dir)) for d, p in demos.items()]
    if with_pac_man:
        games.append(RealGame("pac-man.dist", f"{PAC_MAN} + react@19.1.1 (host page)", "MIT", "vite build",
                              fetch_pac_man(cache_dir)))
    return games

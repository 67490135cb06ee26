"""Real games nobody here wrote, and the machinery that builds them into a cache directory (git-ignored
``workspaces/.cache``): `RealGame`, author builds from a project's own lockfile (`build_like_author`, ``npm ci`` +
``vite build`` in the sandbox), and the games rebuilt from public repositories at a pinned commit
(``tests/fixtures/real/<name>/recipe.yaml``: `load_recipes`, `recipe_games`). Which npm packages of an engine make
its corpus is the pack's (``capability_packs/<id>/corpus.py``); the npm registry is the only source there.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from tier2.sandbox.base import Sandbox
from tier2.sandbox.factory import make_sandbox
from tier2.settings.sandbox import SandboxLimits

__all__ = ["RECIPES_DIR", "RealGame", "Recipe", "build_like_author", "build_recipe", "build_sandbox", "install_argv",
           "load_recipes", "mirror_of", "npm", "recipe_games", "vite_build_sandboxed"]

@dataclass(frozen=True)
class RealGame:
    """One game of the corpus: where it came from, its licence, how it was built, and the folder to validate."""

    name: str
    package: str
    licence: str
    build: str  # "source" (validated from its sources) | "vite build" (the author's toolchain, dist/ validated)
    path: Path
    label: str = "working"  # "working" | "broken" (judged by playing it: tests/fixtures/real/README.md)
    broken_gate: str | None = None  # a broken game: the gate meant to fail it
    defects: tuple[str, ...] | None = None  # the planted defect classes (None: every one that applies)


def npm(args: list[str], cwd: Path, timeout_s: float) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed")
    proc = subprocess.run([npm, *args], cwd=cwd, capture_output=True, text=True, timeout=timeout_s)
    if proc.returncode != 0:
        raise RuntimeError(f"npm {' '.join(args)} failed in {cwd}: {proc.stderr.strip()[-400:]}")


def build_like_author(project: Path, cache_dir: Path, timeout_s: float = 600.0) -> Path:
    """``npm ci`` (the project's own lockfile) + ``vite build`` in a cached copy; returns its ``dist/``."""
    work = cache_dir / "author-builds" / project.name
    dist = work / "dist"
    if (dist / "index.html").is_file():
        return dist
    if not (project / "package-lock.json").is_file() or "vite" not in (project / "package.json").read_text():
        raise RuntimeError(f"{project} has no lockfile or no vite build")
    shutil.rmtree(work, ignore_errors=True)
    shutil.copytree(project, work, ignore=shutil.ignore_patterns("node_modules", "dist"))
    npm(["ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"], work, timeout_s)
    vite_build_sandboxed(work, cache_dir, timeout_s)
    if not (dist / "index.html").is_file():
        raise RuntimeError(f"vite build of {project.name} produced no dist/index.html")
    return dist


def vite_build_sandboxed(work: Path, cache_dir: Path, timeout_s: float) -> None:
    """``vite build`` runs the package's own config and plugins (third-party code): in the isolated sandbox like
    every recipe's build step (an unprivileged uid, no capabilities, no network), never as root on the host. On
    its own event loop in a worker thread, so a caller inside a running loop (a test) can use it too."""
    home = cache_dir / "author-builds" / f".home-{work.name}"
    step = _sandboxed(["node", "node_modules/vite/bin/vite.js", "build", "--logLevel", "warn"], work, home, {},
                      timeout_s)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, step).result()


async def recipe_games(cache_dir: Path, recipes_dir: Path | None = None,
                       names: set[str] | None = None) -> list[RealGame]:
    """The public repositories' games of ``tests/fixtures/real`` (built into the cache from the local mirror)."""
    games = []
    for recipe in load_recipes(recipes_dir or RECIPES_DIR):
        if names and recipe.name not in names:
            continue
        games.append(RealGame(recipe.name, f"{recipe.repo}@{recipe.commit[:10]}", recipe.licence,
                              recipe.build_kind, await build_recipe(recipe, cache_dir), recipe.label,
                              recipe.broken_gate, tuple(recipe.defects)))
    return games


# --- games built from public repositories (tests/fixtures/real/<name>/recipe.yaml) -------------------------------

RECIPES_DIR = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "real"
MIRROR_DIR = Path("/work/.mirror")
BuildKind = Literal["vite", "webpack", "parcel", "script-tag", "npm-script"]
Installer = Literal["npm", "pnpm", "yarn", "npm-no-lockfile", "none"]
_INSTALL: dict[str, list[str]] = {
    "npm": ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
    "pnpm": ["pnpm", "install", "--frozen-lockfile", "--ignore-scripts", "--reporter=silent"],
    # a game without a lockfile (its direct dependencies pinned exactly; the recipe's install_notes say so): the
    # resolved tree is written to the cached copy's package-lock.json
    "npm-no-lockfile": ["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"],
    "yarn": ["yarn", "install", "--frozen-lockfile", "--ignore-scripts", "--silent", "--non-interactive"],
}
_LOCKFILE = {"npm": "package-lock.json", "pnpm": "pnpm-lock.yaml", "yarn": "yarn.lock"}


class Recipe(BaseModel):
    """How one public game is rebuilt from a pinned commit, its licence, and how it was judged."""

    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{1,40}$")
    repo: str = Field(pattern=r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
    commit: str = Field(pattern=r"^[0-9a-f]{40}$")
    subdir: str = ""  # the game's folder inside the repository
    licence: str  # SPDX id, from licence_file at that commit
    licence_file: str
    genre: str
    engine: str = Field(pattern=r"^\d+\.\d+(\.\d+)?$")  # the engine version as shipped (lockfile, or a vendored banner)
    engine_evidence: str
    build_kind: BuildKind
    installer: Installer = "npm"  # dependencies from the game's own lockfile, scripts never run
    install_notes: str = ""  # why a game has no lockfile / needs more than --ignore-scripts
    build: list[list[str]] = []  # argv of each build step (run in the sandbox: no root, no network)
    env: dict[str, str] = {}
    output: str  # folder to validate, relative to the game's folder
    label: Literal["working", "broken"]
    judged: str  # how the label was decided (what was played and seen)
    broken_gate: str | None = None  # a broken game: the gate meant to fail it
    defects: dict[str, str] = {}  # planted defect class -> intended gate
    #: how it was played for its label (tests/fixtures/real/play.py): "click X,Y [MS]", "press X,Y MS", "key K",
    #: "hold K MS", "drag X,Y X,Y", "wait MS", "shot" (a screenshot); empty: the generic clicks and keys
    controls: list[str] = []
    notes: str = ""

    @field_validator("subdir", "output", "licence_file")
    @classmethod
    def _relative(cls, v: str) -> str:
        if v.startswith("/") or ".." in Path(v).parts:
            raise ValueError(f"{v!r} must be a relative path inside the repository")
        return v

    def key(self) -> str:
        """The cache key: (repo, commit, the hash of the recipe's build fields — a label change rebuilds nothing)."""
        build = self.model_dump_json(include={"repo", "commit", "subdir", "installer", "build", "env", "output"})
        return hashlib.sha256(build.encode()).hexdigest()[:12]


def load_recipes(root: Path = RECIPES_DIR) -> list[Recipe]:
    """Every ``<root>/<name>/recipe.yaml`` (strict: an unknown field or a wrong type is an error)."""
    recipes = []
    for path in sorted(root.glob("*/recipe.yaml")):
        recipe = Recipe.model_validate(yaml.safe_load(path.read_text()))
        if recipe.name != path.parent.name:
            raise ValueError(f"{path}: name {recipe.name!r} is not its folder's")
        if recipe.label == "broken" and recipe.broken_gate is None:
            raise ValueError(f"{path}: a broken game names the gate meant to fail it (broken_gate)")
        recipes.append(recipe)
    return recipes


def mirror_of(recipe: Recipe, mirror_dir: Path = MIRROR_DIR) -> Path:
    repo = mirror_dir / recipe.repo.replace("/", "+") / "repo"
    return repo / ".git" if (repo / ".git").is_dir() else repo


def install_argv(recipe: Recipe) -> list[str] | None:
    """The dependency install (on the host, from the game's lockfile, no lifecycle scripts), or None."""
    return None if recipe.installer == "none" else list(_INSTALL[recipe.installer])


def build_sandbox_limits() -> SandboxLimits:
    return SandboxLimits(memory_mb=3072, pids=256, cpu_s=600, file_mb=256, nofile=4096)


def _run(argv: list[str], cwd: Path, timeout_s: float, env: dict[str, str] | None = None) -> None:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=timeout_s,
                          env={**os.environ, **(env or {})})
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed in {cwd}: {(proc.stderr or proc.stdout).strip()[-600:]}")


def export_source(recipe: Recipe, dest: Path, mirror_dir: Path = MIRROR_DIR) -> list[str]:
    """Write the pinned commit's files from the mirror into ``dest`` (raises when the mirror lacks the commit);
    returns the paths whose content the mirror lacks (its snapshots leave out files of 4 MiB and more)."""
    git_dir = mirror_of(recipe, mirror_dir)
    if not git_dir.is_dir():
        raise FileNotFoundError(f"no mirror of {recipe.repo} under {mirror_dir}")
    git = ["git", "--git-dir", str(git_dir)]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", recipe.commit], capture_output=True, timeout=120,
                             check=True).stdout.split(b"\0")
    entries = [(meta.split()[0], meta.split()[2].decode(), name.decode())
               for meta, _, name in (e.partition(b"\t") for e in listing if e)]
    blobs = [(mode, sha, name) for mode, sha, name in entries if mode in (b"100644", b"100755")]
    batch = subprocess.run([*git, "cat-file", "--batch"], input="".join(f"{sha}\n" for _, sha, _ in blobs).encode(),
                           capture_output=True, timeout=600, check=True).stdout
    missing: list[str] = []
    pos = 0
    for mode, _sha, name in blobs:
        header_end = batch.index(b"\n", pos)
        header = batch[pos:header_end].split()
        pos = header_end + 1
        if header[-1] == b"missing":
            missing.append(name)
            continue
        size = int(header[2])
        target = dest / name
        if ".." in Path(name).parts or name.startswith("/"):
            raise RuntimeError(f"{recipe.repo}: unsafe path {name!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(batch[pos:pos + size])
        if mode == b"100755":
            target.chmod(0o755)
        pos += size + 1
    return missing


async def build_recipe(recipe: Recipe, cache_dir: Path, mirror_dir: Path = MIRROR_DIR,
                       timeout_s: float = 900.0) -> Path:
    """The game's output folder, built once per (repo, commit, recipe hash) under
    ``cache_dir/real/<name>@<sha12>-<key>/``: the source exported from the mirror at the pinned commit, the
    dependencies installed from its lockfile with scripts off (host), each build step in the isolated sandbox (an
    unprivileged uid, all capabilities dropped, no network, only the game's folder writable, CPU/memory limits)."""
    root = cache_dir / "real" / f"{recipe.name}@{recipe.commit[:12]}-{recipe.key()}"
    game = root / "src" / recipe.subdir if recipe.subdir else root / "src"
    out = game / recipe.output
    stamp = root / "built.json"
    if stamp.is_file() and out.is_dir():
        return out
    (cache_dir / "real").mkdir(parents=True, exist_ok=True)
    with (cache_dir / "real" / f"{recipe.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file() and out.is_dir():
            return out
        shutil.rmtree(root, ignore_errors=True)
        missing = export_source(recipe, root / "src", mirror_dir)
        install = install_argv(recipe)
        if install is not None:
            lockfile = _LOCKFILE.get(recipe.installer)
            if (lockfile is None or not (game / lockfile).is_file()) and not recipe.install_notes:
                raise RuntimeError(f"{recipe.name}: no {lockfile or 'lockfile'} and no install_notes saying why")
            if install[0] in TOOLS and shutil.which(install[0]) is None:
                install[0] = _tool(install[0], cache_dir / "real" / ".tools", timeout_s)
            await asyncio.to_thread(_run, install, game, timeout_s)
        for step in recipe.build:
            await _sandboxed(step, game, root / "sandbox-home", recipe.env, timeout_s)
        if not (out / "index.html").is_file():
            raise RuntimeError(f"{recipe.name}: the build left no {recipe.output}/index.html")
        stamp.write_text(json.dumps({"recipe": recipe.model_dump(), "key": recipe.key(),
                                     "missing_from_mirror": missing}, indent=1))
    return out


#: package managers the host lacks, pinned, installed from npm into the cache (not onto the system)
TOOLS = {"pnpm": "pnpm@8.15.9", "yarn": "yarn@1.22.22"}  # pnpm 8 reads lockfile v6; yarn 1 reads yarn.lock v1


def _tool(name: str, tools: Path, timeout_s: float) -> str:
    exe = tools / name / "node_modules" / ".bin" / name
    if not exe.exists():
        (tools / name).mkdir(parents=True, exist_ok=True)
        _run(["npm", "install", "--prefix", str(tools / name), "--no-audit", "--no-fund", "--loglevel=error",
              TOOLS[name]], tools, timeout_s)
    return str(exe)


def build_sandbox(project: Path, home: Path) -> Sandbox:
    """The isolated (bubblewrap) sandbox a build step runs in: only ``project`` writable, no network, an
    unprivileged uid with every capability dropped, the corpus's limits."""
    home.mkdir(parents=True, exist_ok=True)
    return make_sandbox("isolated", project, home, limits=build_sandbox_limits(), label="tier2-corpus")


async def _sandboxed(argv: list[str], project: Path, home: Path, env: dict[str, str], timeout_s: float) -> None:
    """One build step in the isolated sandbox over ``project`` (raises with its output's tail when it fails)."""
    sandbox = build_sandbox(project, home)
    async with sandbox:
        await sandbox.hand_over()
        try:
            result = await sandbox.exec(argv, timeout_s=timeout_s, env={"CI": "1", **env})
        finally:
            await sandbox.reclaim()
    if result.code != 0 or result.timed_out:
        raise RuntimeError(f"{' '.join(argv)} in {project} ({'timed out' if result.timed_out else result.code}): "
                           f"{result.output.strip()[-800:]}")

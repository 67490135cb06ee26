"""Which Phaser a game nobody here wrote ships, by evidence, and that version's type data.

Evidence, first match wins: a script the page loads or a vendored/bundled file carrying Phaser's version
(``VERSION:"3.55.2"`` or the ``Phaser v3.55.2`` banner), else the lockfile's ``node_modules/phaser`` entry, else
``package.json``'s dependency (its lowest version). The type data of that version is the ``phaser`` npm package's
``types/`` (`fetch_phaser_types`: ``npm pack phaser@X`` into the cache, under a file lock so parallel validations
fetch once); without npm or a network the caller reports the version as unverified instead of failing the game.
"""

from __future__ import annotations

import fcntl
import json
import re
import shutil
import stat
import subprocess
import tarfile
import tempfile
from pathlib import Path

from tier2.hostio import ProjectDir, UnsafePath

__all__ = ["shipped_phaser", "fetch_phaser_types", "installed_version"]

_VERSION = re.compile(r"^3\.\d{1,3}\.\d{1,3}$")
_IN_FILE = re.compile(rb"""VERSION\s*:\s*["'](3\.\d{1,3}\.\d{1,3})["']|Phaser v(3\.\d{1,3}\.\d{1,3})""")
_SCRIPT = re.compile(r"<script\b[^>]*\bsrc=[\"']([^\"']+)[\"']", re.I)
_SCAN_DIRS = ("", "lib", "libs", "vendor", "js", "assets", "dist", "build", "src/lib", "public/lib")
_MAX_FILES = 80
_MAX_BYTES = 16_000_000


def _banner(data: bytes) -> str | None:
    m = _IN_FILE.search(data)
    return (m.group(1) or m.group(2)).decode() if m else None


def _candidates(root: ProjectDir) -> list[str]:
    """The page's local scripts, then ``.js`` files in the usual vendor/bundle folders (bounded)."""
    out: list[str] = []
    try:
        html = root.read_text("index.html")
    except (OSError, UnsafePath):
        html = ""
    for src in _SCRIPT.findall(html):
        if not src.startswith(("http:", "https:", "//", "data:")):
            out.append(src.split("?")[0].lstrip("/"))
    for folder in _SCAN_DIRS:
        out += [f"{folder}/{n}".lstrip("/") for n, st in root.listdir(folder)
                if n.endswith(".js") and stat.S_ISREG(st.st_mode)]
    return list(dict.fromkeys(out))[:_MAX_FILES]


def shipped_phaser(project: Path) -> tuple[str, str] | None:
    """(version, evidence) of the Phaser ``project`` ships, or None when nothing says."""
    root = ProjectDir(project)
    for rel in _candidates(root):
        try:
            found = _banner(root.read_bytes(rel, max_bytes=_MAX_BYTES))
        except (OSError, UnsafePath, ValueError):
            continue
        if found:
            return found, f"{rel} carries Phaser {found}"
    try:
        lock = json.loads(root.read_text("package-lock.json"))
        version = str(lock.get("packages", {}).get("node_modules/phaser", {}).get("version", ""))
        if _VERSION.match(version):
            return version, f"package-lock.json locks phaser {version}"
    except (OSError, UnsafePath, ValueError, AttributeError):
        pass
    try:
        pkg = json.loads(root.read_text("package.json"))
        spec = str({**pkg.get("devDependencies", {}), **pkg.get("dependencies", {})}.get("phaser", ""))
        m = re.search(r"3\.\d{1,3}\.\d{1,3}", spec)
        if m:
            return m.group(0), f"package.json depends on phaser {spec}"
    except (OSError, UnsafePath, ValueError, AttributeError):
        pass
    return None


def installed_version(node_modules: Path) -> str | None:
    try:
        return str(json.loads((node_modules / "phaser" / "package.json").read_text())["version"])
    except (OSError, ValueError, KeyError):
        return None


def npm_path() -> str | None:
    """The npm client (None: not installed — the shipped version is then reported unverified)."""
    return shutil.which("npm")


def fetch_phaser_types(version: str, cache_dir: Path, timeout_s: float = 180.0,
                       extra: tuple[str, ...] = ()) -> Path | None:
    """A ``node_modules`` directory holding ``phaser/package.json`` and ``phaser/types/`` of ``version`` (fetched
    with ``npm pack`` into ``cache_dir`` once, under a file lock), or None when it cannot be had. ``extra``: more
    files of the package to keep (``dist/phaser.min.js`` for a test game that ships that version)."""
    if not _VERSION.match(version) or any(".." in e.split("/") or e.startswith("/") for e in extra):
        return None

    def ready(modules: Path) -> bool:
        return installed_version(modules) == version and all((modules / "phaser" / e).is_file() for e in extra)

    cache_dir = cache_dir.resolve()
    home = cache_dir / f"phaser-{version}"
    modules = home / "node_modules"
    if ready(modules):
        return modules
    npm = npm_path()
    if npm is None:
        return None
    cache_dir.mkdir(parents=True, exist_ok=True)
    with (cache_dir / f"phaser-{version}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if ready(modules):  # another process fetched it meanwhile
            return modules
        with tempfile.TemporaryDirectory(dir=cache_dir) as tmp:
            try:
                proc = subprocess.run([npm, "pack", f"phaser@{version}", "--silent", "--pack-destination", tmp],
                                      cwd=tmp, capture_output=True, text=True, timeout=timeout_s, check=False)
            except (OSError, subprocess.TimeoutExpired):
                return None
            tarballs = list(Path(tmp).glob("phaser-*.tgz"))
            if proc.returncode != 0 or len(tarballs) != 1:
                return None
            staged = Path(tmp) / "node_modules" / "phaser"
            with tarfile.open(tarballs[0]) as tar:
                for member in tar.getmembers():
                    name = member.name.removeprefix("package/")
                    if not member.isfile() or ".." in name.split("/") or not (
                            name == "package.json" or name in extra
                            or re.fullmatch(r"types/[\w.-]+\.(?:json|d\.ts)", name)):
                        continue
                    data = tar.extractfile(member)
                    if data is not None:
                        (staged / name).parent.mkdir(parents=True, exist_ok=True)
                        (staged / name).write_bytes(data.read())
            if not ready(staged.parent):
                return None
            shutil.rmtree(home, ignore_errors=True)
            home.mkdir(parents=True)
            (Path(tmp) / "node_modules").rename(modules)
    return modules

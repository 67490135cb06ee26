"""A genre's template, composed: the pack's shared parts (``<pack>/common/template/``: ``index.html``, the test hook,
the boot scene, the asset loader) overlaid by the genre's own ``template/`` (a genre file of the same path wins) —
for rules shared by packs, the rules' template (``state.js``, ``data/``) and then the pack's view of them.

Shared parts live once in the pack; every reader of a template — project creation, a genre switch, the offline
model's originals, the fixers' template lines, benches and tests — sees the whole composed tree at
`tier2.packs.genres.Genre.template_dir`. The tree is built once per content (a sha256 of both sources names its
directory) in a private cache (``$TIER2_TEMPLATE_CACHE``, else ``$XDG_CACHE_HOME/tier2/templates``, else
``~/.cache/tier2/templates``; 0700, refused when another user owns it, since templates become project code), built
beside its final name and renamed into place, so concurrent processes never see half a template; compositions a
pack change left behind are pruned (all but the two newest older ones, once a day old).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from tier2.errors import PackError

__all__ = ["compose_template", "template_cache_root"]

_SKIP = frozenset({"dist", "node_modules", "__pycache__"})


def template_cache_root() -> Path:
    explicit = os.environ.get("TIER2_TEMPLATE_CACHE")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tier2" / "templates"


def _files(root: Path) -> dict[str, Path]:
    """Relative posix path -> file, for every regular file under ``root`` (links refused: a template is plain)."""
    out: dict[str, Path] = {}
    if not root.is_dir():
        return out
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if _SKIP & set(rel.parts):
            continue
        if path.is_symlink():
            raise PackError(f"template {root}: {rel} is a link (templates are plain files)")
        if path.is_file():
            out[rel.as_posix()] = path
    return out


def _private(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = root.lstat()
    if root.is_symlink() or st.st_uid != os.getuid():
        raise PackError(f"template cache {root} is not a directory of this user: refusing to use it "
                        "(set TIER2_TEMPLATE_CACHE to a private directory)")
    if st.st_mode & 0o077:
        root.chmod(0o700)
    return root


def compose_template(name: str, layers: Sequence[Path], cache: Path | None = None) -> Path:
    """The composed template of ``layers``, each over the ones before it (the pack's common parts first; see the
    module docstring); ``name`` (pack and genre) prefixes its cache directory. The last layer (the genre's own)
    must exist and hold files."""
    if not layers or not _files(layers[-1]):
        raise PackError(f"template {layers[-1] if layers else '(none)'} is missing or empty")
    files: dict[str, Path] = {}
    for layer in layers:
        files.update(_files(layer))
    digest = hashlib.sha256()
    for rel, path in sorted(files.items()):
        digest.update(rel.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    root = _private(cache or template_cache_root())
    final = root / f"{name}-{digest.hexdigest()[:20]}"
    if final.is_dir() and not final.is_symlink():
        return final
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=root))
    try:
        for rel, path in files.items():
            dest = staging / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
        staging.chmod(0o755)
        try:
            staging.rename(final)
        except OSError:
            if not final.is_dir():  # not a concurrent twin that won the rename
                raise
    finally:
        if staging.exists():
            shutil.rmtree(staging, ignore_errors=True)
    _prune(root, name, final)
    return final


#: compositions of one pack genre kept besides the newest, and how old an extra one must be to go (a process that
#: loaded its pack before the pack's files changed may still read its older composition for a while)
KEEP_OLDER = 2
PRUNE_AFTER_S = 24 * 3600


def _prune(root: Path, name: str, newest: Path) -> None:
    """Drop the compositions of ``name`` a pack change left behind: all but the newest ``KEEP_OLDER`` older ones,
    and only those unused for a day (the cache would otherwise grow with every edit of a pack)."""
    now = time.time()
    older = sorted((p for p in root.glob(f"{name}-*") if p != newest and p.is_dir() and not p.is_symlink()
                    and re.fullmatch(rf"{re.escape(name)}-[0-9a-f]{{20}}", p.name)),
                   key=lambda p: p.stat().st_mtime, reverse=True)
    for stale in older[KEEP_OLDER:]:
        if now - stale.stat().st_mtime > PRUNE_AFTER_S:
            shutil.rmtree(stale, ignore_errors=True)

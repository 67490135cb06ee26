"""Edited copies of a capability pack for tests: the pack's folder and the shared genre rules it views."""

from __future__ import annotations

import shutil
from pathlib import Path

from tier2.packs.registry import Pack

__all__ = ["copy_pack"]


def copy_pack(pack: Pack, packs_dir: Path) -> Path:
    """``pack`` copied to ``packs_dir/<id>`` (no node_modules, links kept) with the shared rules its genres view
    (``packs_dir/genres/<id>``), so ``load_pack(packs_dir, id)`` loads the copy; returns the copy's root."""
    root = packs_dir / pack.id
    shutil.copytree(pack.root, root, ignore=shutil.ignore_patterns("node_modules", "__pycache__"), symlinks=True)
    for genre in pack.genres.values():
        if genre.view is not None and not (packs_dir / "genres" / genre.id).exists():
            shutil.copytree(genre.root, packs_dir / "genres" / genre.id,
                            ignore=shutil.ignore_patterns("__pycache__"))
    return root

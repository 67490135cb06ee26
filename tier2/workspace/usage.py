"""How many bytes a project directory takes: what a tenant's disk quota counts (`tier2.store.quotas`).

The measure is the apparent size of every regular file (``st_size``) plus the length of every symlink, whatever
its name — build output, reports, screenshots and ``delivery.json`` count like sources. The walk never follows a
symlink and never opens a file (a FIFO or a device planted in the project is measured by its ``lstat``, i.e. 0),
so what the writer leaves in the project cannot make the measure block or read outside it.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["tree_bytes"]


def tree_bytes(root: Path) -> int | None:
    """The bytes under ``root`` (None when ``root`` is not a real directory: gone, or replaced by a link)."""
    try:
        if not stat.S_ISDIR(os.lstat(root).st_mode):
            return None
    except FileNotFoundError:
        return None
    total = 0
    for _dirpath, dirnames, filenames, dirfd in os.fwalk(root, follow_symlinks=False):
        for name in [*filenames, *dirnames]:
            try:
                st = os.stat(name, dir_fd=dirfd, follow_symlinks=False)
            except OSError:
                continue  # removed under the walk
            if stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode):
                total += st.st_size
    return total

"""The project's hand-over to the unprivileged sandbox uid (`tier2.settings.identity`).

**Hand-over.** tier2's host-side writes (file tools, reports, delivery) run as root and leave root-owned files that
the sandbox uid could not edit; before each sandboxed command the project's entries are re-owned to the sandbox uid,
and before and after each command every set-id bit is stripped. The walk is ``os.fwalk`` (directories opened
relative to their parent's fd, never following a link, a swapped directory detected) and every change is made on
the entry itself (``lchown``, ``fchmod`` of a ``O_NOFOLLOW`` descriptor checked to be the entry ``lstat`` saw):
a symlink, a FIFO or a hard link planted in the project never redirects it outside.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path

from tier2.settings.identity import HostIdentity

__all__ = ["hand_over", "SETID"]

SETID = stat.S_ISUID | stat.S_ISGID


def _fix(name: str, dir_fd: int, ident: HostIdentity, chown: bool) -> int:
    """Re-own / strip set-id bits of one entry (relative to ``dir_fd``); 1 if it changed."""
    try:
        st = os.lstat(name, dir_fd=dir_fd)
    except FileNotFoundError:
        return 0
    changed = 0
    if stat.S_ISLNK(st.st_mode):
        if chown and (st.st_uid, st.st_gid) != (ident.uid, ident.gid):
            with contextlib.suppress(FileNotFoundError):
                os.chown(name, ident.uid, ident.gid, dir_fd=dir_fd, follow_symlinks=False)
        return 0
    # a regular file linked from elsewhere (st_nlink > 1) is never given away: only stripped
    mine = stat.S_ISDIR(st.st_mode) or st.st_nlink == 1
    if chown and mine and (st.st_uid, st.st_gid) != (ident.uid, ident.gid):
        with contextlib.suppress(FileNotFoundError):
            os.chown(name, ident.uid, ident.gid, dir_fd=dir_fd, follow_symlinks=False)  # clears set-id bits too
            changed = 1
        with contextlib.suppress(FileNotFoundError):
            st = os.lstat(name, dir_fd=dir_fd)
    if st.st_mode & SETID and (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY
        try:
            fd = os.open(name, flags, dir_fd=dir_fd)
        except OSError:
            return changed
        try:
            now = os.fstat(fd)
            if (now.st_dev, now.st_ino) == (st.st_dev, st.st_ino):  # the entry lstat saw, not a swapped one
                os.fchmod(fd, stat.S_IMODE(now.st_mode) & ~SETID)
                changed = 1
        finally:
            os.close(fd)
    return changed


def hand_over(project: Path, ident: HostIdentity, *, chown: bool = True) -> int:
    """Strip every set-id bit in ``project`` and (``chown``) give its entries to ``ident``; how many changed.

    Safe against a sandbox that changes the tree meanwhile (see the module doc): it never follows a link."""
    changed = _fix_root(project, ident, chown)
    for _dirpath, dirnames, filenames, dfd in os.fwalk(project, follow_symlinks=False):
        for name in (*dirnames, *filenames):
            try:
                changed += _fix(name, dfd, ident, chown)
            except OSError:
                continue  # vanished or replaced while we looked: the next walk sees it
    return changed


def _fix_root(project: Path, ident: HostIdentity, chown: bool) -> int:
    parent = os.open(project.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        return _fix(project.name, parent, ident, chown)
    finally:
        os.close(parent)

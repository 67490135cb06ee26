"""Chromium never runs as root: run as root, tier2 launches it through a small launcher that drops to the
unprivileged browser uid (``[sandbox.isolation] browser_uid``) with Chromium's own sandbox **on** (no
``--no-sandbox``: its renderers get their user/pid/net namespaces and seccomp-bpf).

Playwright runs the launcher as ``executable_path`` with the browser's arguments; the launcher gives the profile
directory Playwright made (``--user-data-dir``, a fresh 0700 directory) to the browser uid, points ``HOME`` at
it, and ``exec``-s ``setpriv`` → Chromium: Playwright's pipe (fds 3/4) and its process handling are unchanged.
A sandbox kind's own launcher (`tier2.sandbox.Sandbox.chromium`, marked `CONFINED_LAUNCHER_MARK`) confines the
browser itself and is used as is.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import stat
import tempfile
from pathlib import Path

from tier2.errors import BrowserUnavailable
from tier2.settings.identity import CONFINED_LAUNCHER_MARK, HostIdentity, drop_privileges

__all__ = ["confined_launcher", "unprivileged_launcher"]


def confined_launcher(executable: str) -> bool:
    """True for a launcher tier2 wrote that confines Chromium itself."""
    try:
        with open(executable, "rb") as f:
            head = f.read(512).decode(errors="replace").splitlines()
    except OSError:
        return False
    return len(head) > 1 and head[0].startswith("#!") and head[1].startswith(CONFINED_LAUNCHER_MARK)


def _private_dir(path: Path) -> Path:
    """``path`` as a directory only this process's user owns and can write (it may sit in a shared /tmp)."""
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        pass
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise BrowserUnavailable(f"{path} is not a private directory of uid {os.geteuid()}: refusing to keep the "
                                 "browser launcher there")
    return path


def unprivileged_launcher(executable: str, ident: HostIdentity, directory: Path | None = None) -> str:
    """The executable Playwright should launch for ``executable``: itself when nothing needs dropping (tier2 is
    not root, or it is a confined launcher already), else a launcher that runs it as ``ident``."""
    if not ident.switch or confined_launcher(executable):
        return executable
    owner = f"{ident.uid}:{ident.gid}"
    script = "\n".join([
        "#!/bin/sh",
        f"{CONFINED_LAUNCHER_MARK} (tier2.browser: Chromium as uid {ident.uid}, its own sandbox on)",
        'd=""',
        'for a in "$@"; do case "$a" in --user-data-dir=*) d="${a#--user-data-dir=}";; esac; done',
        f'if [ -n "$d" ]; then chown -R -P {owner} -- "$d" || exit 125; export HOME="$d"; fi',
        "exec " + " ".join(shlex.quote(a) for a in [*drop_privileges(ident), executable]) + ' "$@"', ""])
    where = _private_dir(directory or Path(tempfile.gettempdir()) / f"tier2-browser-{os.geteuid()}")
    path = where / f"chromium-{hashlib.sha256(script.encode()).hexdigest()[:12]}"
    if not path.is_file() or path.read_text() != script:
        tmp = where / f".{path.name}.{os.getpid()}.tmp"
        tmp.unlink(missing_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o700)
        with os.fdopen(fd, "w") as f:
            f.write(script)
        tmp.replace(path)
    return str(path)

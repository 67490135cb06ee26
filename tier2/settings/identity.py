"""The unprivileged host identities of untrusted work (the security config's ``[sandbox.isolation]``).

Run as root, tier2 never lets tenant- or model-influenced code run as root on the host: bubblewrap is started as
the configured sandbox uid/gid (``setpriv --reuid --regid --clear-groups``, no capabilities, ``no_new_privs``), so
the sandbox's user namespace maps to that uid and nothing it creates is root-owned; docker containers run with
``--user``; the local kind's Chromium runs as its own ``browser_uid`` with Chromium's sandbox on. Run as a non-root
user, tier2's own uid is already unprivileged and is used as is.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass

from tier2.settings.sandbox import IsolationConfig

__all__ = ["HostIdentity", "sandbox_identity", "browser_identity", "drop_privileges", "CONFINED_LAUNCHER_MARK"]

#: the second line of every Chromium launcher tier2 writes that confines the browser itself (a sandbox kind's
#: wrapper, or the unprivileged local launcher): the browser pool never wraps such a launcher again
CONFINED_LAUNCHER_MARK = "# tier2: confined Chromium launcher"


@dataclass(frozen=True)
class HostIdentity:
    uid: int
    gid: int

    @property
    def switch(self) -> bool:
        """True when the process must change identity to become this one (it runs as someone else: root)."""
        return os.geteuid() != self.uid or os.getegid() != self.gid


def _identity(uid: int, gid: int) -> HostIdentity:
    if os.geteuid() != 0:  # already unprivileged: setpriv could not switch anyway
        return HostIdentity(os.geteuid(), os.getegid())
    return HostIdentity(uid, gid)


def sandbox_identity(cfg: IsolationConfig | None = None) -> HostIdentity:
    cfg = cfg or IsolationConfig()
    return _identity(cfg.uid, cfg.gid)


def browser_identity(cfg: IsolationConfig | None = None) -> HostIdentity:
    cfg = cfg or IsolationConfig()
    return _identity(cfg.browser_uid, cfg.browser_gid)


def drop_privileges(ident: HostIdentity) -> list[str]:
    """The argv prefix that runs the rest as ``ident`` with no capabilities, no supplementary groups and
    ``no_new_privs`` (no set-id program can raise it again); empty when there is nothing to drop."""
    if not ident.switch:
        return []
    setpriv = shutil.which("setpriv") or "/usr/bin/setpriv"
    return [setpriv, f"--reuid={ident.uid}", f"--regid={ident.gid}", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--no-new-privs", "--"]



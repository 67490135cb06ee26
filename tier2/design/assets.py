"""Asset keys: the one name a requirement, the asset pool and the game use for an entity's asset.

``asset_key("player", "paper airplane")`` → ``player.paper_airplane``; a name with no ASCII word (``纸飞机``) gets a
stable digest instead (``player.u3f2a9c1d``), so any brief language gives a key the game's loader accepts.
"""

from __future__ import annotations

import hashlib
import re

__all__ = ["ASSET_KEY", "asset_key"]

#: what every asset key looks like (the asset pool, the manifest schema and the L1 asset gate check it)
ASSET_KEY = re.compile(r"^[a-z][a-z0-9_]{0,31}\.[a-z0-9][a-z0-9_]{0,47}$")
_WORD = re.compile(r"[a-z0-9]+")


def asset_key(role: str, name: str) -> str:
    """The asset key of the entity ``name`` playing ``role`` (player, enemy, pickup, goods, backdrop, sound...)."""
    r = "_".join(_WORD.findall(role.lower()))[:32] or "asset"
    if not r[0].isalpha():
        r = "a" + r[:31]
    words = _WORD.findall(name.lower())
    ascii_only = name.isascii()
    slug = "_".join(words)[:48].strip("_") if words and ascii_only else ""
    if not slug:
        slug = "u" + hashlib.sha256(" ".join(name.split()).encode()).hexdigest()[:8]
    return f"{r}.{slug}"

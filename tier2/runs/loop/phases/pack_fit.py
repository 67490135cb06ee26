"""Which capability pack suits a brief: the design's deterministic answer, from the packs' own data.

Every installed pack the service may run (``allowed_packs``) is read against the brief: the genre the brief reads
as for that pack (the same brief reader the design uses, with that pack's genre cues; None when the pack has no
genre for it) and whether the brief names that pack's engine (its manifest's engine title, npm name or pack id as
a word: "make it in <engine>", "用 <engine> 做"). Core names no engine: the words come from the manifests.

`pack_advice` is what the design phase says: a brief that names another pack's engine, and not this run's, is not
built with this run's engine (the run ends not delivered with the pack to submit to — never a substitute engine);
a brief this run's pack has no genre for names the packs that have one.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from tier2.design.reader import read_brief
from tier2.packs.registry import Pack

__all__ = ["PackAdvice", "PackFit", "pack_advice", "pack_fits"]


@dataclass(frozen=True)
class PackFit:
    pack: str
    ref: str
    #: the genre of this pack the brief reads as (None: this pack has none for it)
    genre: str | None
    #: the brief names this pack's engine
    named: bool


@dataclass(frozen=True)
class PackAdvice:
    #: why this run's pack does not suit the brief (None: it does, as far as packs go)
    refuse: str | None
    #: the packs that build the brief's genre (ids, best first: one the brief names, then the others)
    suited: list[str]
    note: str = ""


def _engine_words(pack: Pack) -> re.Pattern[str]:
    return _engine_pattern(pack.id, pack.manifest.engine.title, pack.manifest.engine.name)


@functools.cache
def _engine_pattern(pack_id: str, title: str, name: str) -> re.Pattern[str]:
    words = sorted({title, name, pack_id, title.replace(".", "")}, key=len, reverse=True)
    return re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, words)) + r")(?![\w-])", re.I)


def pack_fits(brief: str, packs: Sequence[Pack]) -> list[PackFit]:
    out = []
    for pack in packs:
        reading = read_brief(brief, pack.genre_cues(), pack.genres)
        out.append(PackFit(pack.id, pack.ref, reading.genre, bool(_engine_words(pack).search(brief))))
    return out


def pack_advice(brief: str, run_pack: Pack, packs: Sequence[Pack]) -> PackAdvice:
    """What the design says about packs for ``brief`` run with ``run_pack`` (``packs``: every allowed installed
    pack, the run's among them or not)."""
    fits = pack_fits(brief, [run_pack, *[p for p in packs if p.id != run_pack.id]])
    mine, others = fits[0], fits[1:]
    named = [f for f in others if f.named]
    suited = [f.pack for f in sorted(fits, key=lambda f: (not f.named, f.pack != run_pack.id)) if f.genre]
    title = run_pack.manifest.engine.title
    if named and not mine.named:
        asked = named[0]
        other = next(p for p in packs if p.id == asked.pack)
        engine = other.manifest.engine.title
        can = (f"pack {asked.pack} builds it as a {asked.genre} game: submit the brief with pack {asked.pack}"
               if asked.genre else f"pack {asked.pack} has no genre for it either")
        return PackAdvice(f"the brief asks for {engine}; this run builds {title} games with pack {run_pack.id} "
                          f"({can})", suited)
    if mine.genre is None and suited:
        return PackAdvice(None, suited, "packs that build this brief's genre: " + ", ".join(
            f"{f.pack} ({f.genre})" for f in fits if f.genre))
    return PackAdvice(None, suited)

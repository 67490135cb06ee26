"""What the offline brief reader hands back: a `Reading` of a brief and its `ContentItem`s, and the kinds an item
may have."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

#: genre id -> {"en": {cue: weight}, "zh": {cue: weight}} (`tier2.packs.Pack.genre_cues`)
GenreCues = Mapping[str, Mapping[str, Mapping[str, float]]]
Kind = Literal["player", "enemy", "pickup", "goods", "customer", "obstacle", "setting", "mechanic", "count", "win",
               "lose", "tone"]
CONTENT_KINDS: tuple[str, ...] = ("player", "enemy", "pickup", "goods", "customer", "obstacle", "setting",
                                  "mechanic", "count", "win", "lose", "tone")
#: kinds that are things drawn on screen (an asset per item); setting is drawn as the backdrop
ENTITY_KINDS: tuple[str, ...] = ("player", "enemy", "pickup", "goods", "customer", "obstacle", "setting")


@dataclass(frozen=True)
class ContentItem:
    """One thing the brief asks for: its kind, its name as the brief says it, the key term (a lemma: what a label
    matches), the [start, end) span of the brief it comes from and, for a count, the number."""

    kind: str
    name: str
    term: str
    span: tuple[int, int]
    value: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "name": self.name, "term": self.term, "span": list(self.span),
                **({"value": self.value} if self.value is not None else {})}


@dataclass(frozen=True)
class Reading:
    """What the reader made of a brief."""

    language: str  # en | zh | unreadable
    language_name: str
    genre: str | None  # a genre the pack builds, or None
    reason: str  # why this genre, or why none
    described: str | None = None  # the genre the brief describes, also when the pack cannot build it (None: unclear)
    scores: dict[str, float] = field(default_factory=dict)
    cues: dict[str, list[str]] = field(default_factory=dict)  # genre -> the brief's cue words that scored
    items: list[ContentItem] = field(default_factory=list)
    injections: list[tuple[int, int]] = field(default_factory=list)  # spans skipped as prompt injection
    names: list[str] = field(default_factory=list)  # understood nouns, in brief order: what a title may use

    @property
    def readable(self) -> bool:
        return self.language != "unreadable"

    def of(self, kind: str) -> list[ContentItem]:
        return [i for i in self.items if i.kind == kind]

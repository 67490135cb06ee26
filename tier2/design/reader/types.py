"""What the offline brief reader hands back: a `Reading` of a brief and its `ContentItem`s, and the kinds an item
may have."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

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


# --- a follow-up (`tier2.design.reader.followup.read_follow_up`) ---------------------------------------------------

ChangeKind = Literal["theme", "knob", "genre"]
Direction = Literal["up", "down", "set", "off"]


@dataclass(frozen=True)
class Span:
    """A [start, end) part of the follow-up and its text."""

    start: int
    end: int
    text: str

    def as_dict(self) -> dict[str, Any]:
        return {"span": [self.start, self.end], "text": self.text}


@dataclass(frozen=True)
class Change:
    """One change a follow-up asks for. ``kind``: ``theme`` (target: the setting/look named), ``knob`` (target: the
    genre's knob id; ``direction`` of the table's number — an ``inverse`` knob's "faster" is ``down`` — and
    ``value``: the new number for ``set``, the step for ``up``/``down`` when one was said ("two more lives"), in the
    table's unit: a duration in ms) or ``genre`` (target: the genre id). ``span``/``text``: the clause it comes from;
    ``roles``: the designers whose work it changes; ``tables``: the data tables it changes."""

    kind: ChangeKind
    target: str
    direction: Direction
    value: float | None
    span: tuple[int, int]
    text: str
    roles: tuple[str, ...]
    tables: tuple[str, ...]
    #: why the reader made it ("harder" → every difficulty knob): "" for a change said outright
    via: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "target": self.target, "direction": self.direction, "value": self.value,
                "span": list(self.span), "text": self.text, "roles": list(self.roles), "tables": list(self.tables),
                **({"via": self.via} if self.via else {})}


@dataclass(frozen=True)
class Unbuildable:
    """An ask the genre cannot build, why, and what it can change instead (``options``)."""

    span: tuple[int, int]
    text: str
    reason: str
    options: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return {"span": list(self.span), "text": self.text, "reason": self.reason, "options": list(self.options)}


@dataclass(frozen=True)
class Contradiction:
    """Two changes that cannot both hold (``b`` None: ``a`` contradicts the genre itself)."""

    a: Change
    b: Change | None
    why: str

    def as_dict(self) -> dict[str, Any]:
        return {"a": self.a.as_dict(), "b": self.b.as_dict() if self.b else None, "why": self.why}


@dataclass(frozen=True)
class FollowUp:
    """What a follow-up asks of a built game. A contradicting change is in ``contradictions`` only, never in
    ``changes`` (nothing half of a contradiction is applied); every clause the reader recognised nothing in is in
    ``uninterpreted`` (never dropped)."""

    text: str
    language: str
    changes: list[Change] = field(default_factory=list)
    unbuildable: list[Unbuildable] = field(default_factory=list)
    contradictions: list[Contradiction] = field(default_factory=list)
    uninterpreted: list[Span] = field(default_factory=list)
    #: what the genre can change (its knobs' ``what``, "a new theme"): the options of a blocked run
    options: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        """Nothing asked ("continue", "继续")."""
        return not (self.changes or self.unbuildable or self.contradictions or self.uninterpreted)

    def as_dict(self) -> dict[str, Any]:
        return {"text": self.text, "language": self.language, "changes": [c.as_dict() for c in self.changes],
                "unbuildable": [u.as_dict() for u in self.unbuildable],
                "contradictions": [c.as_dict() for c in self.contradictions],
                "uninterpreted": [s.as_dict() for s in self.uninterpreted], "options": list(self.options)}


class KnobLike(Protocol):
    """What the follow-up reader reads of a pack's knob (`tier2.packs.Knob`)."""

    @property
    def id(self) -> str: ...
    @property
    def what(self) -> str: ...
    @property
    def what_zh(self) -> str: ...
    @property
    def role(self) -> str: ...
    @property
    def table(self) -> str: ...
    @property
    def type(self) -> str: ...
    @property
    def nouns(self) -> list[str]: ...
    @property
    def nouns_zh(self) -> list[str]: ...
    @property
    def min(self) -> float: ...
    @property
    def max(self) -> float: ...
    @property
    def unit_ms(self) -> int: ...
    @property
    def off(self) -> float | None: ...
    @property
    def count_of(self) -> str | None: ...
    @property
    def inverse(self) -> bool: ...
    @property
    def difficulty(self) -> str | None: ...
    @property
    def sense(self) -> str: ...


class GenreLike(Protocol):
    """What the follow-up reader reads of the built game's genre (`tier2.packs.Genre`)."""

    @property
    def id(self) -> str: ...
    @property
    def adjust(self) -> Sequence[KnobLike]: ...


class PackLike(Protocol):
    """What the follow-up reader reads of the pack (`tier2.packs.Pack`)."""

    @property
    def genres(self) -> Mapping[str, Any]: ...
    def genre_cues(self) -> GenreCues: ...

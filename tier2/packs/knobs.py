"""A genre's adjustable numbers ("knobs", ``adjust:`` in its genre.yaml) and applying changes of them to built tables.

A knob names one number the template really reads (a table, a dotted path — ``levels[*].time_limit_ms`` is every
element's — its type, bounds and the words that name it), or the length of a list (``count_of``: the number of
levels, mazes, waves), which only the genre builder's ``adjust_count`` hook can change. `apply_knob_changes` sets
the numbers (clamped to the knob's bounds, each clamp reported), then re-holds the tables with the genre builder's
own gates (``hold_tables``: the data gates and the latch split played on the genre's mirror, the gates the run will
judge). When holding fails nothing is applied: the caller reports the change as unbuildable, never a substitute.
Deterministic (same tables, changes and brief → same result). Docs: docs/genre-kit.md, "adjust:".
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, model_validator

from tier2.errors import Tier2Error

#: a builder's ``adjust_count(tables, knob_id, n, brief)`` and ``hold_tables(tables)`` (`tier2.packs.interface`)
AdjustCount = Callable[[dict[str, Any], str, int, str], Mapping[str, Any]]
HoldTables = Callable[[dict[str, Any]], Mapping[str, Any]]

__all__ = ["Applied", "Knob", "KnobChange", "KnobEdit", "apply_knob_changes", "knob_values", "path_values"]

_PATH = re.compile(r"^[a-z_][a-z0-9_]*(?:\[\*\])?(?:\.[a-z_][a-z0-9_]*(?:\[\*\])?)*$")


class Knob(BaseModel):
    """One adjustable number of a genre (see the module doc; every key is documented in docs/genre-kit.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(pattern=r"^[a-z][a-z_]{0,39}$")
    what: str = Field(min_length=1, max_length=80)
    what_zh: str = Field(min_length=1, max_length=40)
    role: Literal["gameplay", "level", "economy", "ui", "audio", "vfx", "assets"]
    table: str = Field(pattern=r"^[a-z][a-z0-9_]*\.json$")
    path: str = Field(pattern=_PATH.pattern)
    type: Literal["int", "ms", "float"]
    nouns: list[str] = Field(min_length=1)
    nouns_zh: list[str] = []
    min: float
    max: float
    factor: float = Field(default=1.5, gt=1, le=10)
    unit_ms: int = Field(default=1000, ge=1)
    off: float | None = None
    count_of: str | None = Field(default=None, pattern=_PATH.pattern)
    #: a lower number is more of what the nouns name (``enemy_step_ms``: lower = faster enemies)
    inverse: bool = False
    #: the direction of the number that makes the game harder ("harder"/"easier" move the knobs that have one)
    difficulty: Literal["up", "down"] | None = None
    #: what kind of comparative moves it: ``amount`` (more/fewer, higher/lower; bigger/smaller unless a count),
    #: ``duration`` (longer/shorter, and the amount words), ``speed`` (faster/slower only)
    sense: Literal["amount", "duration", "speed"] = "amount"

    @model_validator(mode="before")
    @classmethod
    def _yaml_off(cls, data: Any) -> Any:
        """YAML 1.1 (PyYAML) reads a bare ``off:`` key as the boolean false: it is the ``off`` key."""
        if isinstance(data, dict) and False in data:
            data = {("off" if k is False else k): v for k, v in data.items()}
        return data

    @model_validator(mode="after")
    def _bounds(self) -> Knob:
        if self.min > self.max:
            raise ValueError(f"knob {self.id}: min {self.min} > max {self.max}")
        if self.count_of is not None and (self.count_of != self.path or self.type != "int"):
            raise ValueError(f"knob {self.id}: a count_of knob is an int whose path is the list it counts")
        return self


class KnobChange(Protocol):
    """What `apply_knob_changes` reads of a change (the follow-up reader's ``Change`` has these fields)."""

    @property
    def kind(self) -> str: ...
    @property
    def target(self) -> str: ...
    @property
    def direction(self) -> str: ...
    @property
    def value(self) -> float | None: ...


@dataclass(frozen=True)
class KnobEdit:
    """One number changed: the knob, the table, the concrete path (``levels[1].time_limit_ms``), old → new."""

    knob: str
    table: str
    path: str
    old: Any
    new: Any

    def as_dict(self) -> dict[str, Any]:
        return {"knob": self.knob, "table": self.table, "path": self.path, "old": self.old, "new": self.new}


@dataclass(frozen=True)
class Applied:
    """What applying changes did. ``refused``: why nothing was applied (then ``tables`` are the input tables)."""

    tables: dict[str, Any]
    edits: list[KnobEdit] = field(default_factory=list)
    clamps: list[str] = field(default_factory=list)
    refused: str | None = None
    failures: list[str] = field(default_factory=list)  # the gates holding failed, when it did

    @property
    def ok(self) -> bool:
        return self.refused is None


# --- paths ----------------------------------------------------------------------------------------------------------

def path_values(table: Any, path: str) -> list[tuple[str, Any]]:
    """``(concrete path, value)`` of every place ``path`` names in ``table`` (``a[*].b``: each element's ``b``);
    a missing key raises KeyError."""
    out: list[tuple[str, Any]] = [("", table)]
    for part in path.split("."):
        star = part.endswith("[*]")
        key = part[:-3] if star else part
        nxt: list[tuple[str, Any]] = []
        for at, node in out:
            if not isinstance(node, dict) or key not in node:
                raise KeyError(f"{at + '.' if at else ''}{key}")
            here = f"{at}.{key}" if at else key
            if star:
                if not isinstance(node[key], list):
                    raise KeyError(f"{here}: not a list")
                nxt += [(f"{here}[{i}]", v) for i, v in enumerate(node[key])]
            else:
                nxt.append((here, node[key]))
        out = nxt
    return out


def _set(table: Any, concrete: str, value: Any) -> None:
    parts = re.findall(r"([a-z_][a-z0-9_]*)(?:\[(\d+)\])?", concrete)
    node = table
    for n, (key, index) in enumerate(parts):
        last = n == len(parts) - 1
        if index:
            node = node[key][int(index)] if not last else node[key]
            if last:
                node[int(index)] = value
        elif last:
            node[key] = value
        else:
            node = node[key]


def knob_values(knob: Knob, tables: dict[str, Any]) -> list[tuple[str, Any]]:
    """The knob's current number(s) in ``tables`` (a count knob: the list's length)."""
    found = path_values(tables[knob.table], knob.path)
    return [(at, len(v)) for at, v in found] if knob.count_of else found


# --- values -----------------------------------------------------------------------------------------------------------

def _round(knob: Knob, x: float, old: float | None = None) -> float:
    """``x`` as the knob's type: a float to 3 places, an int whole, a duration to the grain of its old value (a whole
    second stays a whole second: 55000 / 1.5 → 37000, 540 / 1.4 → 390)."""
    if knob.type == "float":
        return round(x, 3)
    if knob.type == "ms" and old is not None and old:
        grain = next((g for g in (1000, 100, 10) if old % g == 0), 1)
        return int(round(x / grain) * grain)
    return int(round(x))


def _target(knob: Knob, old: float, direction: str, value: float | None) -> float:
    if direction == "set":
        return float(value if value is not None else old)
    if direction == "off":
        return float(knob.off if knob.off is not None else old)
    sign = 1 if direction == "up" else -1
    if value is not None:  # "two more lives": by that many
        return old + sign * value
    new = old * knob.factor if sign > 0 else old / knob.factor
    new = _round(knob, new, old)
    if knob.type != "float" and new == old:  # an int moves at least one
        new = old + sign
    return new


def _clamped(knob: Knob, new: float, at: str) -> tuple[float, str | None]:
    if knob.off is not None and new == knob.off:
        return new, None
    if new < knob.min:
        return _round(knob, knob.min), f"{knob.id} {at}: {_fmt(new)} asked, {_fmt(knob.min)} is the least"
    if new > knob.max:
        return _round(knob, knob.max), f"{knob.id} {at}: {_fmt(new)} asked, {_fmt(knob.max)} is the most"
    return _round(knob, new), None


def _fmt(x: float) -> str:
    return f"{x:g}"


# --- applying ---------------------------------------------------------------------------------------------------------

def apply_knob_changes(genre_id: str, knobs: Iterable[Knob], adjust_count: AdjustCount | None,
                       hold_tables: HoldTables, tables: dict[str, Any], changes: Iterable[KnobChange],
                       brief: str = "") -> Applied:
    """Apply the ``knob`` changes of ``changes`` (others are ignored: a theme or genre change is not a number) to a
    deep copy of ``tables`` and re-hold them with the builder's ``hold_tables`` (see the module doc); the builder's
    hooks come bound (`tier2.packs.interface.GenreCode`)."""
    by_id = {k.id: k for k in knobs}
    out = copy.deepcopy(tables)
    edits: list[KnobEdit] = []
    clamps: list[str] = []

    def refuse(why: str, failures: list[str] | None = None) -> Applied:
        return Applied(tables=tables, clamps=clamps, refused=why, failures=failures or [])

    for ch in changes:
        if ch.kind != "knob":
            continue
        knob = by_id.get(ch.target)
        if knob is None:
            return refuse(f"the {genre_id} genre has no adjustable number {ch.target!r}")
        if ch.direction == "off" and knob.off is None:
            return refuse(f"{knob.what} cannot be removed from a {genre_id} game (its template always uses it)")
        if ch.direction not in ("up", "down", "set", "off"):
            return refuse(f"unknown direction {ch.direction!r} for {knob.what}")
        try:
            current = knob_values(knob, out)
        except KeyError as exc:
            return refuse(f"{knob.table} has no {exc.args[0]} (knob {knob.id})")
        if knob.count_of:
            old = current[0][1]
            new, clamp = _clamped(knob, _target(knob, old, ch.direction, ch.value), knob.path)
            clamps += [clamp] if clamp else []
            if new == old:
                continue
            if adjust_count is None:
                return refuse(f"the {genre_id} builder cannot change {knob.what} (no adjust_count hook)")
            try:
                out = dict(adjust_count(out, knob.id, int(new), brief))
            except (ValueError, Tier2Error) as exc:
                return refuse(f"{knob.what} cannot be {int(new)}: {exc}")
            edits.append(KnobEdit(knob.id, knob.table, knob.path, old, int(new)))
            continue
        for at, old in current:
            if "[*]" in knob.path and knob.off is not None and old == knob.off and ch.direction in ("up", "down"):
                continue  # "enemies fire faster" leaves an enemy that never fires as it is
            new, clamp = _clamped(knob, _target(knob, float(old), ch.direction, ch.value), at)
            clamps += [clamp] if clamp else []
            if new != old:
                _set(out[knob.table], at, new)
                edits.append(KnobEdit(knob.id, knob.table, at, old, new))
    if not edits:
        return Applied(tables=tables, clamps=clamps)
    try:
        held = dict(hold_tables(out))
    except Tier2Error as exc:
        failures = [str(f) for f in getattr(exc, "failures", [str(exc)])]
        return refuse("the changed game no longer passes its gates: " + "; ".join(failures)[:400], failures)
    return Applied(tables=held, edits=edits, clamps=clamps)

"""The economy gate's model of a game's money tables (`tier2.validators.data.economy` explains it): sources,
converters, sinks. Its own module so the gate and its bankruptcy search both import it and not each other."""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Converter", "EconomyModel", "Sink", "Source"]


@dataclass(frozen=True)
class Source:
    item: str
    price: float


@dataclass(frozen=True)
class Sink:
    id: str
    item: str
    qty: int
    reward: float


@dataclass(frozen=True)
class Converter:
    id: str
    inputs: dict[str, int]
    outputs: dict[str, int]
    duration_s: float = 0.0
    perish_s: float | None = None  # the outputs are lost when not collected this long after they are ready


@dataclass
class EconomyModel:
    has_money: bool = True
    start_money: float = 0
    sources: list[Source] = field(default_factory=list)
    sinks: list[Sink] = field(default_factory=list)
    converters: list[Converter] = field(default_factory=list)
    sequential: bool = False
    goal_money: float | None = None
    time_limit_s: float | None = None
    name: str = ""

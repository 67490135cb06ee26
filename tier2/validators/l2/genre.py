"""``l2.genre``: the brief's words, the spec's genre and what the game observably does must agree.

Three witnesses, all deterministic: `tier2.design.classify_brief` on the brief, the spec's declared genre, and
the play: a shop's money changes when it buys; a shooter spawns projectiles on its fire input; a platformer's
player moves vertically on jump. A model may add a soft note elsewhere (L3); it never decides this gate.
"""

from __future__ import annotations

from typing import Any

from tier2.design import classify_brief
from tier2.validators.base import Finding, ValidationResult
from tier2.validators.trace import PlayTrace

__all__ = ["genre_gate", "observed_genre"]

_PROJECTILES = ("projectiles", "bullets", "shots", "lasers")
_VERTICAL = ("player_y", "y", "vy")


def _num(state: dict[str, Any] | None, key: str) -> float | None:
    v = (state or {}).get(key)
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, list):
        return float(len(v))
    return None


def observed_genre(trace: PlayTrace) -> tuple[str | None, list[str]]:
    """The genre the play showed (None: none recognised) and what was seen."""
    seen: list[str] = []
    genre: str | None = None
    for probe in trace.inputs:
        before, after = probe.before or {}, probe.after or {}
        m0, m1 = _num(before, "money"), _num(after, "money")
        if m0 is not None and m1 is not None and m1 != m0 and probe.label == "buy":
            seen.append(f"money {m0:g} → {m1:g} on the buy input ({probe.key})")
            genre = genre or "shop"
        for key in _PROJECTILES:
            p0, p1 = _num(before, key), _num(after, key)
            if p0 is not None and p1 is not None and p1 > p0:
                seen.append(f"{key} {p0:g} → {p1:g} on {probe.key}")
                genre = genre or "shooter"
        for key in _VERTICAL:
            y0, y1 = _num(before, key), _num(after, key)
            if y0 is not None and y1 is not None and y1 != y0 and probe.label in ("jump", "start"):
                seen.append(f"{key} {y0:g} → {y1:g} on {probe.key}")
                genre = genre or "platformer"
    latch = trace.latch or {}
    if latch.get("win") == "won" and genre == "shop":
        seen.append(f"a planned buy/craft/deliver play reached won in {latch.get('win_actions')} actions")
    return genre, seen


def genre_gate(spec: dict[str, Any], brief: str, trace: PlayTrace | None) -> ValidationResult:
    declared = str(spec.get("genre") or "")
    guess = classify_brief(brief)
    observed, seen = observed_genre(trace) if trace is not None else (None, [])
    evidence = {"brief_genre": guess.genre, "brief_words": guess.words.get(guess.genre or "", []),
                "spec_genre": declared, "observed_genre": observed, "observed": seen}
    problems: list[str] = []
    if guess.genre is not None and guess.genre != declared:
        problems.append(f"the brief asks for a {guess.explain()}, the design declares a {declared}")
    if trace is None:
        problems.append("the game was not played (no build), so its genre could not be observed")
    elif observed != declared:
        what = f"a {observed} ({'; '.join(seen)})" if observed else "no behaviour of any known genre"
        problems.append(f"the design declares a {declared}; the game observably is {what}")
    if problems:
        return ValidationResult(id="l2.genre", layer="L2", passed=False,
                                summary="genre mismatch: " + "; ".join(problems),
                                findings=[Finding(message=p) for p in problems], evidence=evidence)
    return ValidationResult(id="l2.genre", layer="L2", passed=True,
                            summary=f"brief, design and play agree: a {declared} ({'; '.join(seen)[:200]})",
                            evidence=evidence)

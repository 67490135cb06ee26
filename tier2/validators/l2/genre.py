"""``l2.genre``: the brief's words, the spec's genre and what the game observably does must agree.

Three witnesses, all deterministic: the offline brief reader on the brief (`tier2.design.reader.read_brief`: the
genre the brief describes, by the pack's reader cues — the same reading the offline leader designs from), the spec's
declared genre, and the play: each pack genre names what its play must show (``observe`` in its genre.yaml, e.g.
pressing fire adds projectiles); the genre whose witnesses the probed inputs showed is the observed one. A model
may add a soft note elsewhere (L3); it never decides this gate.
"""

from __future__ import annotations

from typing import Any

from tier2.design.reader import read_brief
from tier2.packs import Genre, Pack
from tier2.validators.base import Finding, ValidationResult
from tier2.validators.trace import PlayTrace

__all__ = ["genre_gate", "observed_genre", "state_number"]


def state_number(state: dict[str, Any] | None, key: str) -> float | None:
    """A number in a state snapshot (a dotted path; a list counts its length)."""
    v: Any = state or {}
    for part in key.split("."):
        v = v.get(part) if isinstance(v, dict) else None
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    if isinstance(v, list):
        return float(len(v))
    return None


def _shows(genre: Genre, trace: PlayTrace) -> list[str]:
    """What the probed inputs showed of ``genre``'s witnesses (empty: none of them)."""
    seen: list[str] = []
    for rule in genre.spec.observe:
        for probe in trace.inputs:
            if probe.label != rule.action and not probe.label.startswith(rule.action + "_"):
                continue
            v0, v1 = state_number(probe.before, rule.field), state_number(probe.after, rule.field)
            if v0 is None or v1 is None:
                continue
            if (rule.change == "increase" and v1 > v0) or (rule.change == "decrease" and v1 < v0) or (
                    rule.change == "change" and v1 != v0):
                seen.append(f"{rule.says}: {rule.field} {v0:g} → {v1:g} on {probe.label} ({probe.key})")
                break
    return seen if len(seen) == len(genre.spec.observe) else []


def observed_genre(trace: PlayTrace, pack: Pack, declared: str = "") -> tuple[str | None, list[str]]:
    """The genre the play showed (None: none recognised) and what was seen; the declared genre is tried first."""
    order = sorted(pack.genres, key=lambda g: g != declared)
    for gid in order:
        seen = _shows(pack.genres[gid], trace)
        if seen:
            return gid, seen
    return None, []


def genre_gate(spec: dict[str, Any], brief: str, trace: PlayTrace | None, pack: Pack) -> ValidationResult:
    declared = str(spec.get("genre") or "")
    reading = read_brief(brief, pack.genre_cues(), pack.genres)
    asked = reading.genre or reading.described  # None: the reader cannot tell (or read) — no objection from it
    words = reading.cues.get(asked or "", [])
    observed, seen = observed_genre(trace, pack, declared) if trace is not None else (None, [])
    evidence = {"brief_genre": asked, "brief_words": words,
                "spec_genre": declared, "observed_genre": observed, "observed": seen}
    problems: list[str] = []
    if asked is not None and asked != declared:
        problems.append(f"the brief asks for a {asked} (brief words: {', '.join(words)}), the design declares a "
                        f"{declared}")
    if declared not in pack.genres:
        problems.append(f"pack {pack.ref} has no {declared or '(none)'} template (it builds: {', '.join(pack.genres)})")
    if trace is None:
        problems.append("the game was not played (no build), so its genre could not be observed")
    elif observed != declared:
        what = f"a {observed} ({'; '.join(seen)})" if observed else "no behaviour of any genre the pack knows"
        problems.append(f"the design declares a {declared}; the game observably is {what}")
    if problems:
        return ValidationResult(id="l2.genre", layer="L2", passed=False,
                                summary="genre mismatch: " + "; ".join(problems),
                                findings=[Finding(message=p) for p in problems], evidence=evidence)
    return ValidationResult(id="l2.genre", layer="L2", passed=True,
                            summary=f"brief, design and play agree: a {declared} ({'; '.join(seen)[:200]})",
                            evidence=evidence)

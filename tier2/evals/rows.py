"""One eval row from one run's own records: its delivery.json (status, completion map, verification gates, usage,
timings), its events (fix rounds) and the suite's expectation. Nothing is recomputed from guesses: a figure the
records do not hold stays at its empty value (docs/eval.md "Per run").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from tier2.evals.results import ContentCoverage, Coverage, GenreVerdict, RunRow, Tokens
from tier2.evals.suite import Expect

__all__ = ["BREAKER_LIMITS", "RunFacts", "content_coverage", "outcome_of", "row_from", "signature_of"]

#: the `RunLimitReached` limits raised by the breakers (`tier2.middleware.breakers`): a stop reason starting so
BREAKER_LIMITS = ("steps", "stuck", "timeout", "deadline")


@dataclass(frozen=True)
class RunFacts:
    """What the eval knows about one finished run: its record's fields and its delivery document."""

    run_id: str
    status: str
    stop_reason: str
    delivery: dict[str, Any]
    fix_rounds: int = 0
    project_dir: str | None = None
    delivery_path: str | None = None


def _unsupported(delivery: dict[str, Any]) -> list[dict[str, Any]]:
    done = delivery.get("completion") or {}
    scope = (delivery.get("design") or {}).get("scope") or {}
    return list(done.get("unsupported") or []) + list(scope.get("unsupported") or [])


def _gates(delivery: dict[str, Any]) -> list[dict[str, Any]]:
    return list((delivery.get("verification") or {}).get("gates") or [])


def outcome_of(status: str, stop_reason: str, delivery: dict[str, Any]) -> str:
    """delivered | partial (delivered, unbuildable parts listed) | refused (nothing built, the reason stated) |
    failed (built and failing, crashed, or stopped by a limit)."""
    if status == "delivered":
        return "partial" if _unsupported(delivery) else "delivered"
    if status in ("failed", "stopped", "rejected") and stop_reason.strip() and not _gates(delivery) \
            and not stop_reason.startswith(("internal_error", *(f"{b}:" for b in BREAKER_LIMITS), "budget:")):
        return "refused"
    return "failed"


def _honest(expect: Expect, outcome: str, verdict: GenreVerdict, reason: str) -> bool:
    if expect.outcome == "refused":  # not delivered, with the reason stated at the design (or at the door)
        # ... or delivered as exactly the genre the suite names (a model route reads a language the offline
        # reader cannot): building what was asked is never a dishonest outcome
        return outcome == "refused" or (outcome in ("delivered", "partial") and verdict == "match")
    if expect.outcome == "partial":  # the unbuildable parts listed, or not delivered with the reason
        return outcome in ("partial", "refused") or (outcome == "failed" and bool(reason.strip()))
    # delivered expected: a build of another genre is a silent substitute; an end with a reason is honest
    if outcome in ("delivered", "partial"):
        return verdict != "mismatch"
    return bool(reason.strip())


def _norm(item: str) -> str:
    return re.sub(r"\s+", " ", item.casefold()).strip()


def _names(item: str, text: str) -> bool:
    """``text`` names ``item``: as whole words (a plural -s/-es either way) for alphabetic words, as a substring for
    Chinese (no word spaces)."""
    want, hay = _norm(item), _norm(text)
    if not want:
        return False
    if not want.isascii():
        return want in hay
    stem = re.sub(r"(?:es|s)$", "", want) if len(want) > 3 else want
    return re.search(rf"(?<!\w){re.escape(stem)}(?:s|es)?(?!\w)", hay) is not None


def content_coverage(expected: tuple[str, ...], delivery: dict[str, Any]) -> ContentCoverage:
    """Each expected item against the delivery's requirements: verified when a verified requirement names it (in its
    text or the brief span it came from), not derived when no requirement names it at all."""
    reqs = [r for r in (delivery.get("completion") or {}).get("requirements") or [] if isinstance(r, dict)]
    verified, missing, not_derived = 0, [], []
    for item in expected:
        named = [r for r in reqs if _names(item, str(r.get("text", ""))) or _names(item, str(r.get("source", "")))]
        if any(r.get("status") == "verified" for r in named):
            verified += 1
            continue
        missing.append(item)
        if not named:
            not_derived.append(item)
    return ContentCoverage(verified=verified, expected=len(expected), missing=missing, not_derived=not_derived)


_NUM = re.compile(r"\b\d+(?:\.\d+)?\b")
_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"|“[^”]*”|‘[^’]*’")
_PATH = re.compile(r"(?:/[\w.@-]+){2,}")


def _clause(reason: str) -> str:
    text = _PATH.sub("<path>", _QUOTED.sub("'…'", reason))
    text = _NUM.sub("N", text)
    return re.split(r";|\(|\.(?:\s|$)|\n", text, maxsplit=1)[0].strip()[:100]  # a dot inside "l2.genre" stays


def signature_of(row: RunRow, delivery: dict[str, Any]) -> str | None:
    """A failure signature that groups alike failures: what was expected and what came, then the failing L1 gates
    or the stop reason's first clause with numbers, quotes and paths masked. None for a run that passed."""
    if row.passed:
        return None
    head = f"{row.outcome or row.status}≠{row.outcome_expected}"
    if row.genre_verdict == "mismatch":
        return f"{head}: genre {row.genre_built} for {row.genre_expected}"
    failing = sorted(str(g.get("id")) for g in _gates(delivery) if g.get("layer") == "L1" and not g.get("passed"))
    if failing:
        return f"{head}: {', '.join(failing)}"
    if row.outcome in ("delivered", "partial") and not row.l1_passed:
        return f"{head}: no L1 verdict"
    return f"{head}: {_clause(row.stop_reason) or 'no reason stated'}"


def _l3(delivery: dict[str, Any]) -> float | None:
    for g in _gates(delivery):
        if g.get("layer") == "L3":
            score = (g.get("evidence") or {}).get("score")
            if isinstance(score, int | float):
                return float(score)
    return None


def row_from(facts: RunFacts, *, brief_id: str, follow_up: int, repeat: int, model: str, expect: Expect,
             tags: tuple[str, ...] = (), lang: str = "") -> RunRow:
    d = facts.delivery
    done = d.get("completion") or {}
    usage = d.get("usage") or {}
    timings = d.get("timings_ms") or {}
    built = done.get("genre") or (d.get("design") or {}).get("genre")
    built = None if built in ("", "unknown") else built  # the design names no genre
    outcome = outcome_of(facts.status, facts.stop_reason, d)
    verdict: GenreVerdict
    if built is None:
        verdict = "none"
    elif expect.genre is None:
        verdict = "unexpected"
    else:
        verdict = "match" if built == expect.genre else "mismatch"
    l1 = [g for g in _gates(d) if g.get("layer") == "L1"]
    l1_passed = bool(l1) and all(bool(g.get("passed")) for g in l1)
    structural = done.get("structural") or {}
    honest = _honest(expect, outcome, verdict, facts.stop_reason) if facts.status in (
        "delivered", "failed", "stopped", "rejected") else None
    if expect.outcome == "delivered":
        passed = outcome in ("delivered", "partial") and l1_passed and verdict in ("match", "unexpected")
    elif expect.outcome == "partial":  # delivered with the parts listed, or not built with the reason
        passed = outcome in ("partial", "refused")
    else:
        passed = outcome == "refused"
    row = RunRow(
        brief_id=brief_id, follow_up=follow_up, repeat=repeat, model=model, run_id=facts.run_id or None,
        status=facts.status, stop_reason=facts.stop_reason, outcome_expected=expect.outcome, outcome=outcome,
        genre_expected=expect.genre, genre_built=built, genre_verdict=verdict, l1_passed=l1_passed,
        structural=Coverage(verified=int(structural.get("verified") or 0), total=int(structural.get("total") or 0)),
        content=content_coverage(expect.content, d), l3_score=_l3(d),
        model_calls=int(usage.get("model_calls") or 0),
        tokens=Tokens.model_validate({"in": int(usage.get("input_tokens") or 0),
                                      "out": int(usage.get("output_tokens") or 0)}),
        cost_usd=float(usage.get("cost_usd") or 0.0), wall_s=round(float(timings.get("total") or 0) / 1000, 3),
        fix_rounds=facts.fix_rounds,
        breaker_trips=int(facts.stop_reason.startswith(tuple(f"{b}:" for b in BREAKER_LIMITS))),
        honest=honest, passed=passed, project_dir=facts.project_dir, delivery_path=facts.delivery_path,
        tags=list(tags), lang=lang)
    return row.model_copy(update={"signature": signature_of(row, d)})

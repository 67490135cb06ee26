"""The legibility gate ``l1.legible``: texts that overlap, are cut off, too small or too faint to read.

At every screenshot the probes take, `collect_legibility` walks the engine's display list in the page (the engine
adapter's ``legibility.js``, `tier2.packs.engine`: every rendered scene, containers included; texts with their drawn
lines, font size, colours and alpha; the shapes they may sit on) and stores the snapshot on the `PlayTrace`.
`legible` judges the snapshots (`judge.judge_screen`, rules there) with the thresholds of hot policy
``legibility:``. It is an L1 gate; what its failure is per mode is hot policy ``verdicts:``
(`runner.apply_verdicts`): a verdict in contract mode (tier2's own games must pass it), a finding with its evidence
in generic mode by default.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from typing import Any

from tier2.browser import GameSession
from tier2.settings.loader import LegibilityPolicy
from tier2.validators.base import Finding, ValidationResult
from tier2.validators.legibility.judge import Issue, judge_screen
from tier2.validators.trace import PlayTrace

__all__ = ["GATE", "collect_js", "collect_legibility", "legible"]

GATE = "l1.legible"
_MAX_FINDINGS = 10
_MAX_ISSUES = 30
_NOUNS = {"overlap": "overlapping texts", "cut": "cut off", "size": "too small", "contrast": "low contrast"}


def collect_js(source: str) -> str:
    """The adapter's collector as an expression Playwright calls with the screen name (header comment dropped)."""
    return source[source.index("\n(screen) =>") + 1:]


async def collect_legibility(s: GameSession, trace: PlayTrace, screen: str) -> None:
    """Snapshot the texts on screen now (no clock advance) into ``trace.legibility``; a collector that throws on
    an unusual game is recorded as an error of that screen, a page that stops answering still times out."""
    try:
        raw = await s.evaluate(collect_js(s.engine.legibility_js), screen)
        snap = json.loads(raw) if isinstance(raw, str) else {"screen": screen,
                                                             "error": f"no {s.engine.title} game found"}
    except (TimeoutError, asyncio.CancelledError):
        raise
    except Exception as exc:  # noqa: BLE001 - a script error in the page is an observation
        snap = {"screen": screen, "error": f"collector failed: {str(exc).splitlines()[0][:300]}"}
    trace.legibility.append(snap)


def _result(passed: bool, summary: str, findings: list[Finding], **evidence: Any) -> ValidationResult:
    return ValidationResult(id=GATE, layer="L1", passed=passed, summary=summary, findings=findings,
                            evidence=evidence)


def legible(t: PlayTrace, limits: LegibilityPolicy | None = None) -> ValidationResult:
    """Judge every collected screen; the same problem on several screens is reported once, naming them."""
    limits = limits or LegibilityPolicy()
    if not t.booted:
        return _result(False, "no screen collected (game did not boot)", [])
    snaps = [s for s in t.legibility if isinstance(s.get("texts"), list)]
    errors = [f"{s.get('screen')}: {s['error']}" for s in t.legibility if s.get("error")]
    if not snaps:
        if t.mode == "contract":
            return _result(False, "the display list could not be read", [Finding(message=e) for e in errors]
                           or [Finding(message="no screen was collected")], errors=errors)
        return _result(True, "not applicable: no engine display list to read", [], applicable=False,
                       errors=errors)
    seen: dict[str, tuple[Issue, list[str]]] = {}
    screens: list[dict[str, Any]] = []
    for snap in snaps:
        issues, counts = judge_screen(snap, limits)
        screens.append({"screen": snap.get("screen"), **counts, "skipped": snap.get("skipped")})
        for issue in issues:
            if issue.body in seen:
                seen[issue.body][1].append(issue.screen)
            else:
                seen[issue.body] = (issue, [issue.screen])
    ev: dict[str, Any] = {"screens": screens, "limits": limits.model_dump()}
    if errors:
        ev["errors"] = errors
    unjudged = sum(s["contrast_unjudged"] for s in screens)
    if not seen:
        shown = sum(s["shown"] for s in screens)
        return _result(True, f"{shown} text(s) on {len(snaps)} screen(s): none overlap or cut off, all "
                       f"≥ {limits.min_font_px:g} px, contrast ≥ {limits.min_contrast:g}:1 "
                       f"({limits.min_contrast_large:g}:1 large)"
                       + (f"; contrast of {unjudged} not judged (background unknown)" if unjudged else ""), [], **ev)
    found = list(seen.values())
    counts = Counter(issue.check for issue, _ in found)
    on = sorted({s for _, where in found for s in where})
    findings = [Finding(message=issue.message + (f" (also on {', '.join(where[1:])})" if where[1:] else ""))
                for issue, where in found[:_MAX_FINDINGS]]
    if len(found) > _MAX_FINDINGS:
        findings.append(Finding(message=f"… and {len(found) - _MAX_FINDINGS} more (see evidence.issues)"))
    ev["counts"] = dict(counts)
    ev["issues"] = [{**issue.evidence, "screens": where} for issue, where in found[:_MAX_ISSUES]]
    summary = (f"{len(found)} legibility problem(s) on {', '.join(on)}: "
               + ", ".join(f"{n} {_NOUNS[c]}" for c, n in counts.most_common()))
    return _result(False, summary, findings, **ev)

"""l1.magic_numbers (observe): numeric literals in src/ that look like gameplay tuning and belong in data/*.json.

Iron rule 1 of the game contract: numbers live in ``data/``, never in ``src/``. Layout is exempt, so a literal is
reported only with a gameplay signal — its name (``const SPEED = 200``, ``reward: 250``, ``money += 250``), what it is
compared or combined with (``if (score > 500)``), or the call it feeds (``setVelocityX(160)``, ``delayedCall(2000)``) —
and never when it is layout-like: 0, ±1, 2, 0.5, 100; hex colours; array indices; anything inside an object or
constant named like layout/style/font/colour; values of x/y/w/h-style keys; tween, text-style and particle configs;
unit conversions (``ms / 1000``, ``secs % 60``); and all of ``hook.js``.

The gate only reports: it always passes (runner policy enforces every L1 result), with one warning per literal.
"""

from __future__ import annotations

import re
import time
from pathlib import PurePosixPath
from typing import Any

from tier2.validators.base import Finding, ValidationResult
from tier2.validators.static.scan import Scan, scan_sources

__all__ = ["check_magic_numbers", "classify_number"]

GATE = "l1.magic_numbers"
MAX_FINDINGS = 20
TRIVIAL = frozenset({0, 1, 2, 0.5, 100})
UNIT_CONVERSIONS = frozenset({24, 60, 1000, 3600})
LAYOUT_WORDS = frozenset("""layout style font color colour palette theme ui pos position offset margin padding pad size
    width height radius depth alpha scale origin angle rotation tint stroke shadow line frame key code index idx len
    length x y z w h dx dy cx cy left top right bottom row col rows cols gap cell grid px""".split())
GAMEPLAY_WORDS = frozenset("""money cash coin gold gem score point price cost reward bonus pay payout wage salary fee
    tax profit income budget balance fund debt loan health hp live life damage dmg armor armour speed velocity accel
    acceleration gravity drag thrust jump spawn delay interval timer timeout duration cooldown ttl goal level xp stock
    qty quantity capacity limit ammo energy stamina mana fuel wave chance probability odds multiplier penalty bounty day
    tick earn earning spend sell buy""".split())
VISUAL_CALLS = re.compile(r"^(particles|createEmitter|addEmitter|setConfig|text|setStyle|tween|chain|add|setShadow|"
                          r"transition)$")
_WORD = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")


def _kind(name: str | None) -> str | None:
    """'gameplay' if a word of the identifier is a gameplay word (-s/-ed/-ing ok), else 'layout' if one is layout."""
    words = [w.lower() for w in _WORD.findall(name or "")]
    stems = {s for w in words for s in (w, w.removesuffix("s"), w.removesuffix("ed"), w.removesuffix("ing"))}
    if stems & GAMEPLAY_WORDS:
        return "gameplay"
    return "layout" if any(w in LAYOUT_WORDS for w in words) else None


def classify_number(n: dict[str, Any]) -> str | None:
    """Why this literal looks like gameplay tuning, or None when it is layout-like / unclassified."""
    v = abs(n["v"])
    raw = str(n.get("raw", ""))
    if v in TRIVIAL or raw.lower().startswith("0x") or n.get("index"):
        return None
    decl, assign = n.get("decl"), (n.get("assign") or [None, "="])
    if _kind(decl) == "layout" or _kind(assign[0]) == "layout":
        return None  # const LAYOUT = {...}, this.style = {...}: the whole value is layout
    if "targets" in (n.get("objKeys") or []) or any(c and VISUAL_CALLS.match(c) for c in n.get("calls", [])):
        return None  # tween / particle / text-style configs: presentation
    bins = n.get("bin", [])
    if v in UNIT_CONVERSIONS and any(op in ("/", "*", "%") for op, _ in bins):
        return None
    for key in reversed([k for k in n.get("keys", []) if k]):
        kind = _kind(key)
        if kind == "layout":
            return None
        if kind == "gameplay":
            return f"{key}: {raw}"
    calls = n.get("calls", [])
    if calls:  # an argument: only the callee can tell (`setVelocityX(160)`), not what the call's result is stored in
        return f"argument of {calls[0]}()" if not n.get("keys") and _kind(calls[0]) == "gameplay" else None
    if _kind(assign[0]) == "gameplay":
        return f"{assign[0]} {assign[1]} {raw}"
    if _kind(decl) == "gameplay":
        return f"constant {decl} = {raw}" if decl != "case" else None
    for op, other in bins:
        if _kind(other) == "gameplay":
            return f"{other} {op} {raw}"
    return None


def check_magic_numbers(src_files: dict[str, str], scan: Scan | None = None) -> ValidationResult:
    """Report gameplay-looking numeric literals in ``src_files`` (observe only: always passes)."""
    started = time.monotonic()
    files = {k: v for k, v in src_files.items() if PurePosixPath(k).name != "hook.js"}
    if scan is None:
        scan = scan_sources(files)
    hits: list[tuple[str, int, str]] = []
    seen = 0
    for file in sorted(files):
        facts = scan.get(file) or {}
        for n in facts.get("numbers", []):
            seen += 1
            why = classify_number(n)
            if why:
                hits.append((file, n["l"], f"{file}:{n['l']}: {n.get('raw')} — {why} (move it to data/*.json)"))
    per_file: dict[str, int] = {}
    for file, _, _ in hits:
        per_file[file] = per_file.get(file, 0) + 1
    summary = (f"{len(hits)} gameplay-looking number(s) in src/ (belong in data/*.json); {seen} literals scanned"
               if hits else f"no gameplay numbers in src/ ({seen} literals scanned)")
    return ValidationResult(
        # an L2 (iron-rule) gate: observe by default, switched to enforce per gate in hot policy once trusted
        id=GATE, layer="L2", mode="observe", passed=not hits, summary=summary,
        findings=[Finding(message=m, severity="warning") for _, _, m in hits[:MAX_FINDINGS]],
        evidence={"count": len(hits), "scanned": seen, "per_file": per_file,
                  "examples": [m for _, _, m in hits[:10]]},
        duration_ms=int((time.monotonic() - started) * 1000),
    )

"""The defect taxonomy of the pack's engine (its manifest's ``taxonomy``; the built-in pack ships OpenGame's seed
protocol): message patterns → root cause and rule.

A case's ``rule`` names the taxonomy entry its failure matches; a failure with no verified case but a matching
entry gets the entry's rule as advice in the fix round. `tier2.learning.seed` injects the taxonomy's classes that
have a deterministic operator into template copies.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from tier2.packs import Pack, configured_pack

__all__ = ["TaxonomyEntry", "entries", "rule_for"]


@dataclass(frozen=True)
class TaxonomyEntry:
    id: str
    stage: str
    code: str
    pattern: re.Pattern[str]
    root_cause: str
    fix: str
    fix_type: str

    def rule(self) -> str:
        return f"{self.id} ({self.code}): {self.root_cause} Fix: {self.fix}"


def entries(pack: Pack | None = None) -> tuple[TaxonomyEntry, ...]:
    """``pack``'s taxonomy (None: the configured pack's): a run's failures are matched against its own pack's."""
    pack = pack if pack is not None else configured_pack()
    return _entries(pack.root / pack.manifest.taxonomy) if pack.manifest.taxonomy else ()


@functools.cache
def _entries(path: Path) -> tuple[TaxonomyEntry, ...]:
    raw = json.loads(path.read_text())
    out: list[TaxonomyEntry] = []
    for e in raw.get("entries", []):
        sig, fix = e.get("signature", {}), e.get("fix", {})
        try:
            pattern = re.compile(str(sig.get("messagePattern", "")), re.I)
        except re.error:
            continue
        out.append(TaxonomyEntry(id=str(e.get("id")), stage=str(sig.get("stage", "")), code=str(sig.get("errorCode")),
                                 pattern=pattern, root_cause=str(e.get("rootCause", "")),
                                 fix=str(fix.get("description", "")), fix_type=str(fix.get("type", ""))))
    return tuple(out)


def rule_for(message: str, pack: Pack | None = None) -> TaxonomyEntry | None:
    """The first entry of ``pack``'s taxonomy (None: the configured pack's) whose message pattern the message
    matches."""
    return next((e for e in entries(pack) if e.pattern.search(message)), None)

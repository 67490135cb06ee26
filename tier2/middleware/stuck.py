"""Stuck detection over a run's recent steps: pure logic, no AgentScope, no I/O.

Why fingerprints: an agent is stuck when it keeps doing the same thing *and* keeps seeing the same thing. A tool
step is fingerprinted on tool name + canonical arguments + a hash of its result, so polling whose result changes
is progress, and a Read repeated after a Write (new content) is progress; only identical action+observation pairs
count. Volatile fragments (durations, timestamps, per-call report directories; hot config ``volatile``) are masked
before hashing so they cannot pass for progress.

The six patterns (thresholds in `tier2.settings.loader.StuckPolicy`):

    repeat       the same tool + args + result N times within the last ``window`` tool steps
    error        the same tool + error text N times within the window, whatever the arguments
    alternation  A-B-A-B...: the last 2N tool steps alternate between two fingerprints
    monologue    N model replies in a row without a tool call
    empty        N model replies in a row with neither text nor a tool call
    compression  N context compressions within the last ``compression_steps`` model replies

The state is a plain list of small dicts (``records``) so it lives in ``AgentState.middle_context`` and survives a
checkpoint/resume; `StuckDetector` works on that list in place.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from tier2.settings.loader import StuckPolicy

__all__ = ["PATTERNS", "MAX_RECORDS", "StuckDetector", "Verdict", "args_key", "result_key"]

PATTERNS = ("empty", "monologue", "alternation", "repeat", "error", "compression")
#: records kept in the state: enough for any sane window, small enough to checkpoint after every step
MAX_RECORDS = 64


@dataclass(frozen=True)
class Verdict:
    """Why the agent is judged stuck: the pattern, how often it was seen, and a sentence for the run reason."""

    pattern: str
    count: int
    detail: str


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:16]


def args_key(raw: str) -> str:
    """Canonical hash of a tool call's JSON arguments (key order and whitespace do not matter)."""
    try:
        canonical = json.dumps(json.loads(raw or "{}"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    except (json.JSONDecodeError, TypeError):
        canonical = raw or ""
    return _digest(canonical)


def result_key(text: str, volatile: list[re.Pattern[str]]) -> str:
    """Hash of a tool result with volatile fragments masked and whitespace collapsed."""
    for pattern in volatile:
        text = pattern.sub("#", text)
    return _digest(" ".join(text.split()))


class StuckDetector:
    """Feeds step records into ``records`` (owned by the caller's state) and judges them against the policy."""

    def __init__(self, policy: StuckPolicy, records: list[dict[str, Any]] | None = None) -> None:
        self.policy = policy
        self.records: list[dict[str, Any]] = records if records is not None else []
        self._volatile = [re.compile(v) for v in policy.volatile]

    # ------------------------------------------------------------------ feeding

    def _add(self, record: dict[str, Any]) -> None:
        self.records.append(record)
        if len(self.records) > MAX_RECORDS:
            del self.records[: len(self.records) - MAX_RECORDS]

    def tool(self, name: str, raw_args: str, result: str, error: bool, label: str = "") -> None:
        """One finished tool call; ``error`` for error/denied/interrupted results."""
        res = result_key(result, self._volatile)
        record: dict[str, Any] = {"kind": "tool", "tool": name, "args": args_key(raw_args), "result": res,
                                  "label": label or name}
        if error:
            record["error"] = _digest(name + "\0" + res)
            record["excerpt"] = " ".join(result.split())[:120]
        self._add(record)

    def reply(self, tool_calls: int, text_chars: int) -> None:
        """One model reply: how many tool calls it made and how much text (incl. thinking) it said."""
        self._add({"kind": "reply", "calls": tool_calls, "chars": text_chars})

    def compressed(self) -> None:
        """The agent's context was compressed (summarised) before a reasoning step."""
        self._add({"kind": "compress"})

    # ------------------------------------------------------------------ judging

    def verdict(self) -> Verdict | None:
        """The first matching pattern (in `PATTERNS` order), or None while the agent makes progress."""
        for check in (self._empty, self._monologue, self._alternation, self._repeat, self._error, self._compression):
            found = check()
            if found is not None:
                return found
        return None

    def _tools(self) -> list[dict[str, Any]]:
        return [r for r in self.records if r["kind"] == "tool"]

    @staticmethod
    def _fp(r: dict[str, Any]) -> tuple[str, str, str]:
        return r["tool"], r["args"], r["result"]

    def _silent_replies(self, empty_only: bool) -> int:
        count = 0
        for r in reversed(self.records):
            if r["kind"] != "reply":
                continue
            if r["calls"] > 0 or (empty_only and r["chars"] > 0):
                break
            count += 1
        return count

    def _empty(self) -> Verdict | None:
        n = self._silent_replies(empty_only=True)
        if n >= self.policy.empty:
            return Verdict("empty", n, f"{n} empty model replies in a row (no text, no tool call)")
        return None

    def _monologue(self) -> Verdict | None:
        n = self._silent_replies(empty_only=False)
        if n >= self.policy.monologue:
            return Verdict("monologue", n, f"{n} model replies in a row without a tool call (monologue)")
        return None

    def _alternation(self) -> Verdict | None:
        cycles = self.policy.alternation
        tail = self._tools()[-2 * cycles:]
        if len(tail) < 2 * cycles:
            return None
        a, b = self._fp(tail[0]), self._fp(tail[1])
        if a == b or any(self._fp(r) != (a, b)[i % 2] for i, r in enumerate(tail)):
            return None
        return Verdict("alternation", cycles, f"A-B-A-B alternation {cycles}x with identical results: "
                                              f"{tail[0]['label']} / {tail[1]['label']}")

    def _repeat(self) -> Verdict | None:
        window = self._tools()[-self.policy.window:]
        if not window:
            return None
        fp, n = Counter(self._fp(r) for r in window).most_common(1)[0]
        if n < self.policy.repeat:
            return None
        label = next(r["label"] for r in reversed(window) if self._fp(r) == fp)
        return Verdict("repeat", n, f"same action+observation repeated {n}x: {label}")

    def _error(self) -> Verdict | None:
        errors = [r for r in self._tools()[-self.policy.window:] if "error" in r]
        if not errors:
            return None
        key, n = Counter(r["error"] for r in errors).most_common(1)[0]
        if n < self.policy.error:
            return None
        last = next(r for r in reversed(errors) if r["error"] == key)
        return Verdict("error", n, f"same error repeated {n}x: {last['tool']}: {last['excerpt']}")

    def _compression(self) -> Verdict | None:
        replies = compressions = 0
        for r in reversed(self.records):
            if r["kind"] == "reply":
                replies += 1
                if replies > self.policy.compression_steps:
                    break
            elif r["kind"] == "compress":
                compressions += 1
        if compressions >= self.policy.compression:
            return Verdict("compression", compressions, f"context compressed {compressions}x within "
                                                        f"{self.policy.compression_steps} model steps (loop)")
        return None

"""The extractive summary: facts folded out of covered blocks (no model call), rendered under the pinned block.

`Facts` is plain JSON (it travels in the compression record, in the checkpoint). A compression folds only the
blocks it newly covers into the previous facts: covered history is never read again. Rendering is deterministic,
so a resumed agent that compresses the same conversation gets the same summary, byte for byte.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Facts", "Pins", "fold", "render"]

#: how many of each kind of fact the summary keeps (the newest); older ones are only counted
MAX_STEPS = 60
MAX_NOTES = 16
MAX_ERRORS = 12
MAX_REQUESTS = 6
SNIPPET = 240
_PATH_ARGS = ("file_path", "path", "pattern")
_WRITES = frozenset({"Write", "Edit", "MultiEdit"})


@dataclass
class Pins:
    """What must survive every compression (the run supplies them through the middleware's provider)."""

    goal: str = ""
    #: requirement id -> "status: text" (the design's requirements and where they stand)
    requirements: dict[str, str] = field(default_factory=dict)
    #: the last failing gate (or build) with its evidence; empty when the last check passed
    last_failure: str = ""
    files_written: list[str] = field(default_factory=list)
    #: the task message of the current request, verbatim (bounded): what the agent was asked, never summarised
    task: str = ""

    def count(self) -> int:
        return (int(bool(self.goal)) + len(self.requirements) + int(bool(self.last_failure)) + len(self.files_written)
                + int(bool(self.task)))

    def as_json(self) -> dict[str, Any]:
        return {"goal": self.goal, "requirements": dict(self.requirements), "last_failure": self.last_failure,
                "files_written": list(self.files_written), "task": self.task}


#: the pinned task message at most (a run request is ~1-2 KB)
MAX_TASK_CHARS = 6000


def _short(text: str, n: int = SNIPPET) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def _text_of(output: Any) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, list):
        parts = []
        for b in output:
            t = getattr(b, "text", None)
            parts.append(t if isinstance(t, str) else f"[{getattr(b, 'type', 'data')} block]")
        return "\n".join(parts)
    return str(output)


def _args(raw: str) -> dict[str, Any]:
    try:
        value = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


@dataclass
class Facts:
    """What the summary says about covered history (JSON: ``as_json`` / ``from_json``)."""

    steps: list[str] = field(default_factory=list)  # "Tool target → state: first line"
    tool_counts: dict[str, list[int]] = field(default_factory=dict)  # tool -> [runs, errors]
    errors: list[str] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path -> last action (written / read)
    notes: list[str] = field(default_factory=list)  # the model's own text (decisions, plans)
    requests: list[str] = field(default_factory=list)  # user / hint messages
    blocks: int = 0  # blocks covered so far, all compressions together
    dropped: int = 0  # steps no longer listed individually (still counted in tool_counts)

    def as_json(self) -> dict[str, Any]:
        return {"steps": self.steps, "tool_counts": self.tool_counts, "errors": self.errors, "files": self.files,
                "notes": self.notes, "requests": self.requests, "blocks": self.blocks, "dropped": self.dropped}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Facts:
        data = data or {}
        return cls(steps=list(data.get("steps", [])), tool_counts={k: list(v) for k, v in
                                                                     data.get("tool_counts", {}).items()},
                   errors=list(data.get("errors", [])), files=dict(data.get("files", {})),
                   notes=list(data.get("notes", [])), requests=list(data.get("requests", [])),
                   blocks=int(data.get("blocks", 0)), dropped=int(data.get("dropped", 0)))


def fold(facts: Facts, covered: Iterable[tuple[str, Any]]) -> Facts:
    """``facts`` plus the newly covered blocks (``(role, block)`` in conversation order); returns a new `Facts`."""
    out = Facts.from_json(facts.as_json())
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for role, block in covered:
        out.blocks += 1
        kind = getattr(block, "type", "")
        if kind == "text":
            text = getattr(block, "text", "")
            if text.strip():
                (out.notes if role == "assistant" else out.requests).append(_short(text))
        elif kind == "hint":
            out.requests.append(_short(_text_of(getattr(block, "hint", ""))))
        elif kind == "tool_call":
            calls[block.id] = (block.name, _args(block.input))
        elif kind == "tool_result":
            name, args = calls.get(block.id, (getattr(block, "name", "?"), {}))
            state = str(getattr(block.state, "value", block.state))
            text = _text_of(block.output)
            target = next((str(args[k]) for k in _PATH_ARGS if isinstance(args.get(k), str)), "")
            first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
            out.steps.append(_short(f"{name}{' ' + target if target else ''} → {state}: {first}", 200))
            runs_errors = out.tool_counts.setdefault(name, [0, 0])
            runs_errors[0] += 1
            if state != "success":
                runs_errors[1] += 1
                out.errors.append(_short(f"{name}{' ' + target if target else ''}: {text}", 400))
            if target and "file_path" in args:
                if name in _WRITES and state == "success":
                    out.files[target] = "written"
                elif target not in out.files:
                    out.files[target] = "read"
    if len(out.steps) > MAX_STEPS:
        out.dropped += len(out.steps) - MAX_STEPS
        out.steps = out.steps[-MAX_STEPS:]
    out.errors, out.notes = out.errors[-MAX_ERRORS:], out.notes[-MAX_NOTES:]
    out.requests = out.requests[-MAX_REQUESTS:]
    return out


def _pinned(pins: Pins) -> list[str]:
    lines = ["## Pinned (kept through every compression)", f"Goal: {pins.goal or '(none given)'}"]
    if pins.requirements:
        lines.append("Requirements and their status:")
        lines += [f"- {rid}: {state}" for rid, state in pins.requirements.items()]
    lines.append(f"Last failing gate: {pins.last_failure or 'none (the last check passed or none ran yet)'}")
    lines.append("Files written: " + (", ".join(pins.files_written) or "none yet"))
    if pins.task:
        lines += ["## The task, as it was given (verbatim)", pins.task[:MAX_TASK_CHARS]]
    return lines


def render(pins: Pins, facts: Facts, covered_through: str, seq: int, max_chars: int) -> str:
    """The summary text: the pinned block whole, then the facts, newest kept first when space runs out."""
    head = [f"<context-summary compression=\"{seq}\" covers=\"{covered_through}\">",
            "The conversation before this point was compressed (tier2.context): this summary replaces it. "
            "It is extractive (taken from the tool calls and texts), not verbatim: Read a file again for its "
            "current content.", *_pinned(pins), "## Earlier work (summarised)"]
    counts = ", ".join(f"{k}×{v[0]}" + (f" ({v[1]} failed)" if v[1] else "") for k, v in
                       sorted(facts.tool_counts.items()))
    body = [f"Tools run: {counts or 'none'}"]
    touched = sorted(facts.files.items())
    if touched:
        body.append("Files touched: " + ", ".join(f"{p} ({a})" for p, a in touched))
    sections = [("Requests:", facts.requests), ("Your earlier notes and decisions:", facts.notes),
                ("Errors seen:", facts.errors),
                (f"Steps ({facts.dropped} older steps not listed):" if facts.dropped else "Steps:", facts.steps)]
    tail = ["</context-summary>"]
    fixed = len("\n".join(head + body + tail))
    budget = max(0, max_chars - fixed)
    rendered: list[str] = []
    for title, items in sections:  # each section keeps its newest items that still fit
        if not items:
            continue
        chosen: list[str] = []
        for item in reversed(items):
            cost = len(item) + 3
            if cost > budget:
                break
            chosen.append(f"- {item}")
            budget -= cost
        if chosen:
            rendered += [title, *reversed(chosen)]
            budget -= len(title) + 1
    return "\n".join(head + body + rendered + tail)

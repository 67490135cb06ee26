"""The scale benchmark's parts that are not process control (``bench/scale.py`` drives them): which worker
layouts to measure, the ideal throughput each is compared with, the summary of repeats, and the scripted writer
that the fake OpenAI server plays so that every run completes while waiting on a slow model.

Ideal: a layout of ``workers`` processes at ``concurrency`` runs each has ``parallelism = workers x concurrency``
slots. A batch of ``runs`` submitted at once needs ``ceil(runs / parallelism)`` rounds of one run's latency ``L``
at best, so its ideal throughput is ``runs / (ceil(runs / parallelism) x L)`` per minute — the baseline's
runs/minute (one worker at concurrency 1, ``60 / L``) times the parallelism when ``runs`` is a multiple of it.
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tier2.testing.fake_openai import Latency, Reply, Responder

__all__ = ["BASELINE", "Cell", "CellFigures", "cells", "figures", "ideal_runs_per_min", "parse_latency",
           "route_policy", "scale_writer"]


@dataclass(frozen=True, order=True)
class Cell:
    """One worker layout: ``workers`` ``tier2 worker`` processes, each at ``--concurrency concurrency``."""

    workers: int
    concurrency: int

    def __post_init__(self) -> None:
        if self.workers < 1 or self.concurrency < 1:
            raise ValueError(f"a layout needs at least one worker and concurrency 1, got {self}")

    @property
    def parallelism(self) -> int:
        return self.workers * self.concurrency

    @property
    def label(self) -> str:
        return f"{self.workers}x{self.concurrency}"


#: the layout whose throughput is one run's latency: every ideal is derived from it
BASELINE = Cell(1, 1)


def cells(workers: Sequence[int], concurrency: Sequence[int], *, grid: bool = False) -> list[Cell]:
    """The baseline first, then each worker count at concurrency 1 and each concurrency on one worker (``grid``:
    every combination instead); no layout twice."""
    if grid:
        wanted = [Cell(w, c) for w in workers for c in concurrency]
    else:
        wanted = [Cell(w, 1) for w in workers] + [Cell(1, c) for c in concurrency]
    out = [BASELINE]
    for cell in wanted:
        if cell not in out:
            out.append(cell)
    return out


def ideal_runs_per_min(baseline_runs_per_min: float, parallelism: int, runs: int) -> float:
    """The best ``runs`` submitted at once can do on ``parallelism`` slots when one run alone takes
    ``60 / baseline_runs_per_min`` seconds (module docstring)."""
    if baseline_runs_per_min <= 0 or parallelism < 1 or runs < 1:
        raise ValueError("ideal throughput needs a positive baseline, parallelism and run count")
    return baseline_runs_per_min * runs / math.ceil(runs / parallelism)


@dataclass(frozen=True)
class CellFigures:
    cell: Cell
    runs: int  # submitted at once per repeat
    runs_per_min: list[float]  # one per repeat
    median: float
    ideal: float
    relative: float  # median / ideal

    def as_dict(self) -> dict[str, Any]:
        return {"workers": self.cell.workers, "concurrency": self.cell.concurrency,
                "parallelism": self.cell.parallelism, "runs": self.runs, "runs_per_min": self.runs_per_min,
                "median": self.median, "ideal": self.ideal, "relative_to_ideal": self.relative}


def figures(samples: dict[Cell, tuple[int, list[float]]]) -> list[CellFigures]:
    """``samples``: per layout the runs per repeat and each repeat's runs/minute; the baseline must be among them.
    Each layout's median against its ideal from the baseline's median."""
    if BASELINE not in samples or not samples[BASELINE][1]:
        raise ValueError(f"the baseline {BASELINE.label} was not measured")
    base = statistics.median(samples[BASELINE][1])
    out = []
    for cell, (runs, rpm) in samples.items():
        if not rpm:
            raise ValueError(f"layout {cell.label} has no measurement")
        median = statistics.median(rpm)
        ideal = ideal_runs_per_min(base, cell.parallelism, runs)
        out.append(CellFigures(cell, runs, list(rpm), median, ideal, median / ideal))
    return out


def parse_latency(text: str, seed: int = 0) -> Latency:
    """``"1-3"`` (seconds, uniform) or ``"2"`` (fixed)."""
    low, _, high = text.partition("-")
    try:
        return Latency(float(low), float(high or low), seed)
    except ValueError as exc:
        raise ValueError(f"latency {text!r}: expected LOW-HIGH seconds, e.g. 1-3 ({exc})") from None


_PROJECT = re.compile(r"game project at (\S+?) \(the project directory\)")


def _system_text(body: dict[str, Any]) -> str:
    system = body["messages"][0]["content"]
    return system if isinstance(system, str) else " ".join(p.get("text", "") for p in system)


def _readable(project: Path) -> list[str]:
    """The project's source and data files (sorted), the writer's reading list."""
    return sorted(str(p) for sub in ("src", "data") if (project / sub).is_dir()
                  for p in (project / sub).rglob("*") if p.is_file() and p.suffix in (".js", ".json"))


def scale_writer(calls: int) -> Responder:
    """A writer that makes ``calls`` model calls per turn and delivers: reads ``calls - 4`` of the project's files
    (different ones in turn, so no stuck breaker sees a repeat), retitles the theme, builds, runs the game, and
    says it is done. The project is the one the writer's system prompt names (the worker's own workspace)."""
    if calls < 5:
        raise ValueError("the scale writer needs at least 5 calls: write, build, run, done and one read")
    reads = calls - 4

    def respond(body: dict[str, Any]) -> Reply:
        match = _PROJECT.search(_system_text(body))
        if match is None:
            return Reply(text="No project named: nothing to do.")
        project = Path(match.group(1))
        done = sum(1 for m in body["messages"] if m["role"] == "tool")
        if done < reads:
            files = _readable(project) or [str(project / "data" / "theme.json")]
            return Reply(tool_calls=[("Read", {"file_path": files[done % len(files)]})])
        step = done - reads
        if step == 0:
            theme = json.loads((project / "data" / "theme.json").read_text(encoding="utf-8"))
            theme["title"] = "Scale Bench"
            return Reply(tool_calls=[("Write", {"file_path": str(project / "data" / "theme.json"),
                                                "content": json.dumps(theme, indent=2)})])
        if step == 1:
            return Reply(tool_calls=[("Build", {})])
        if step == 2:
            return Reply(tool_calls=[("RunGame", {})])
        return Reply(text="The game is done.")

    return respond


def route_policy(base_url: str, route: str = "scripted") -> dict[str, Any]:
    """The hot-policy overlay that adds ``route``: an OpenAI-compatible model at ``base_url`` (the fake server)."""
    return {"models": {route: {"kind": "openai", "model": f"{route}-model", "base_url": base_url,
                               "max_retries": 0}},
            "prices": {f"{route}-model": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}}}

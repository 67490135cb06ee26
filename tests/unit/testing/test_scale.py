"""The scale benchmark's pure parts (`tier2.testing.scale`): the layouts measured, the ideal each is compared with,
the summary of repeats, and the scripted writer's replies on a real project folder."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tier2.testing import Latency
from tier2.testing.scale import (
    BASELINE,
    Cell,
    cells,
    figures,
    ideal_runs_per_min,
    parse_latency,
    route_policy,
    scale_writer,
)


def test_layouts_are_the_baseline_then_the_two_sweeps_without_repeats() -> None:
    assert cells([1, 2, 4], [1, 4, 8]) == [Cell(1, 1), Cell(2, 1), Cell(4, 1), Cell(1, 4), Cell(1, 8)]
    assert cells([2], [4]) == [BASELINE, Cell(2, 1), Cell(1, 4)]  # the baseline is always measured
    grid = cells([1, 2], [1, 4], grid=True)
    assert grid == [Cell(1, 1), Cell(1, 4), Cell(2, 1), Cell(2, 4)]
    assert [c.parallelism for c in grid] == [1, 4, 2, 8] and grid[3].label == "2x4"
    with pytest.raises(ValueError):
        Cell(0, 1)


def test_ideal_is_the_baseline_times_parallelism_in_whole_rounds() -> None:
    assert ideal_runs_per_min(2.0, 4, 8) == 8.0  # 8 runs on 4 slots: 2 rounds of one run's 30 s
    assert ideal_runs_per_min(2.0, 4, 4) == 8.0
    assert ideal_runs_per_min(2.0, 4, 5) == 5.0  # 5 runs need 2 rounds: 5 per minute, not 8
    assert ideal_runs_per_min(2.0, 8, 2) == 4.0  # fewer runs than slots: only 2 run at once
    assert ideal_runs_per_min(3.0, 1, 3) == 3.0
    for bad in ((0.0, 1, 1), (1.0, 0, 1), (1.0, 1, 0)):
        with pytest.raises(ValueError):
            ideal_runs_per_min(*bad)


def test_figures_are_medians_against_the_baselines_median() -> None:
    rows = {f.cell: f for f in figures({BASELINE: (1, [2.0, 1.0, 3.0]), Cell(2, 1): (2, [3.0, 4.0, 2.0]),
                                        Cell(1, 4): (4, [6.0, 5.0, 100.0])})}
    assert rows[BASELINE].median == 2.0 and rows[BASELINE].relative == 1.0
    assert (rows[Cell(2, 1)].median, rows[Cell(2, 1)].ideal, rows[Cell(2, 1)].relative) == (3.0, 4.0, 0.75)
    four = rows[Cell(1, 4)]
    assert (four.median, four.ideal, four.relative) == (6.0, 8.0, 0.75)  # one outlier repeat is outvoted
    assert four.as_dict()["parallelism"] == 4 and four.as_dict()["runs_per_min"] == [6.0, 5.0, 100.0]
    with pytest.raises(ValueError, match="baseline"):
        figures({Cell(2, 1): (2, [3.0])})
    with pytest.raises(ValueError, match="2x1"):
        figures({BASELINE: (1, [1.0]), Cell(2, 1): (2, [])})


def test_parse_latency() -> None:
    assert parse_latency("1-3", seed=7) == Latency(1.0, 3.0, 7)
    assert parse_latency("2") == Latency(2.0, 2.0, 0)
    for bad in ("3-1", "a-b", "-1"):
        with pytest.raises(ValueError, match="latency"):
            parse_latency(bad)


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "proj"
    (project / "src" / "scenes").mkdir(parents=True)
    (project / "data").mkdir()
    (project / "data" / "theme.json").write_text(json.dumps({"title": "Potions"}))
    (project / "src" / "main.js").write_text("x")
    (project / "src" / "scenes" / "Play.js").write_text("y")
    (project / "src" / "notes.txt").write_text("not read")
    return project


def _body(project: Path, tools_done: int, as_parts: bool = False) -> dict[str, Any]:
    system = f"You are the writer of the game project at {project} (the project directory). Build it."
    content: Any = [{"type": "text", "text": system}] if as_parts else system
    return {"messages": [{"role": "system", "content": content}, {"role": "user", "content": "go"},
                         *({"role": "tool", "content": "ok"} for _ in range(tools_done))]}


def test_the_scale_writer_reads_then_writes_builds_runs_and_stops(tmp_path: Path) -> None:
    project = _project(tmp_path)
    write = scale_writer(9)  # 5 reads + write + build + run + done
    replies = [write(_body(project, n, as_parts=n % 2 == 1)) for n in range(9)]
    reads = [r.tool_calls[0][1]["file_path"] for r in replies[:5]]
    files = sorted([str(project / "data" / "theme.json"), str(project / "src" / "main.js"),
                    str(project / "src" / "scenes" / "Play.js")])
    assert reads == files + files[:2]  # the .js and .json files in turn, never the same one twice in a row
    assert all(r.tool_calls[0][0] == "Read" for r in replies[:5])
    name, args = replies[5].tool_calls[0]
    assert name == "Write" and args["file_path"] == str(project / "data" / "theme.json")
    assert json.loads(args["content"]) == {"title": "Scale Bench"}
    assert [r.tool_calls[0][0] for r in replies[6:8]] == ["Build", "RunGame"]
    assert replies[8].tool_calls == [] and replies[8].text
    assert write(_body(project, 30)).tool_calls == []  # past the script: done again, never a tool call
    assert write({"messages": [{"role": "system", "content": "no project"}]}).tool_calls == []
    with pytest.raises(ValueError):
        scale_writer(4)


def test_route_policy_names_the_fake_server() -> None:
    policy = route_policy("http://127.0.0.1:9/v1", "slow")
    assert policy["models"]["slow"] == {"kind": "openai", "model": "slow-model", "base_url": "http://127.0.0.1:9/v1",
                                        "max_retries": 0}
    assert "slow-model" in policy["prices"]

"""``tier2 runs trajectory``'s totals per agent, computed from the calls (no service needed)."""

from __future__ import annotations

from tier2.client.trajectory import agent_totals, trajectory_lines

CALLS = [
    {"kind": "model", "agent": "writer", "input_tokens": 100, "output_tokens": 10, "cost_usd": 0.01, "step": 1},
    {"kind": "tool", "agent": "writer", "tool": "Build", "args_summary": "", "step": 1},
    {"kind": "model", "agent": "designer.gameplay", "input_tokens": 50, "output_tokens": 5, "cost_usd": 0.002},
    {"kind": "model", "agent": "explorer", "input_tokens": 7, "output_tokens": 1, "cost_usd": None},
    {"kind": "case", "agent": "library", "action": "applied", "fixer": "restore_data_key", "gate": "l1.boots",
     "fixed": True, "replaced_model_calls": 1},
]


def test_totals_per_agent_and_unpriced_calls() -> None:
    t = agent_totals(CALLS)
    assert t["writer"] == {"model_calls": 1, "input_tokens": 100, "output_tokens": 10, "cost_usd": 0.01,
                           "tool_calls": 1, "case_hits": 0, "ms": 0.0}
    assert t["explorer"]["cost_usd"] is None          # a call without a price makes the agent's total unknown
    assert t["library"]["case_hits"] == 1 and t["library"]["model_calls"] == 0


def test_columns_line_up_for_long_agent_names() -> None:
    lines = trajectory_lines({"run_id": "r-1", "calls": CALLS, "summary": {}}, calls_too=True)
    table = lines[lines.index(next(x for x in lines if x.startswith("AGENT"))):]
    starts = {line.index(" ", len("designer.gameplay")) for line in table}
    assert len(starts) == 1, table                     # every row's second column starts at the same place
    assert any("restore_data_key for l1.boots → fixed" in x for x in lines)
    assert any(x.startswith("explorer") and "unpriced" in x for x in table)

"""The eval runner's idempotency keys: a resumed eval (same OUT) gets its runs back, another OUT is another eval
with runs of its own even against the same store (the same idempotent submit the real backends use)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tier2.evals.rows import RunFacts
from tier2.evals.runner import EvalPlan, run_eval
from tier2.evals.suite import load_suite

SUITE = """schema: tier2.eval.suite/1
id: keys
version: 1
briefs:
  - {id: a, brief: "a platformer where a fox jumps over spikes", expect: {genre: platformer}}
  - {id: b, brief: "a bakery tycoon where I bake bread and cakes", expect: {genre: shop}}
"""


class IdempotentStore:
    """Accepts runs like the submit use case: one run per idempotency key, ended at once as stopped."""

    where = "memory"

    def __init__(self) -> None:
        self.by_key: dict[str, str] = {}

    async def submit(self, text: str, model: str | None, key: str, thread_id: str | None) -> tuple[str, str]:
        run = self.by_key.setdefault(key, f"r-{len(self.by_key)}")
        return run, thread_id or f"t-{run}"

    async def wait(self, run_id: str) -> RunFacts:
        return RunFacts(run_id=run_id, status="stopped", stop_reason="test", delivery={})

    async def screenshot(self, facts: RunFacts) -> bytes | None:
        return None


def _ids(out: Path) -> list[str]:
    return sorted(r["run_id"] for r in json.loads((out / "results.json").read_text())["runs"])


def test_same_out_resumes_its_runs_and_another_out_gets_its_own(tmp_path: Path) -> None:
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "suite.yaml").write_text(SUITE, encoding="utf-8")
    suite = load_suite(tmp_path / "suite", {"platformer", "shop"})
    store = IdempotentStore()
    plan = EvalPlan(models=("offline",))

    def run(out: Path) -> None:
        asyncio.run(run_eval(store, suite, tmp_path / "suite" / "suite.yaml", plan, out))

    run(tmp_path / "a")
    first = _ids(tmp_path / "a")
    state = json.loads((tmp_path / "a" / "state.json").read_text())
    for job in state["jobs"].values():  # as if the eval had been killed after submitting, before any run ended
        job["row"] = None
    (tmp_path / "a" / "state.json").write_text(json.dumps(state))
    run(tmp_path / "a")
    assert _ids(tmp_path / "a") == first and len(store.by_key) == 2  # the same runs back: no duplicate
    run(tmp_path / "b")
    assert len(store.by_key) == 4 and not set(_ids(tmp_path / "b")) & set(first)  # a fresh eval: runs of its own

"""The typed schema of ``OUT/results.json`` (``schema: tier2.eval.results/1``) — what `tier2 eval` writes and what
the report and ``tier2 eval compare`` read. Field names are a contract: add fields, never rename one.

One `RunRow` per (brief, follow-up step, repeat, model): every number in it is read from the run's own records
(delivery.json, the run record, its events), never recomputed. `ModelSummary` aggregates one model's rows
(definitions: docs/eval.md "Metrics").
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["RESULTS_SCHEMA", "Coverage", "ContentCoverage", "GenreRow", "Percentiles", "PassRate", "Signature",
           "ModelSummary", "RunRow", "SuiteRef", "Tokens", "EvalResults", "load_results"]

RESULTS_SCHEMA = "tier2.eval.results/1"

Outcome = Literal["delivered", "partial", "refused"]
GenreVerdict = Literal["match", "mismatch", "none", "unexpected"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SuiteRef(_Model):
    id: str
    version: str
    #: sha256 of the suite's canonical content (`tier2.evals.suite.suite_hash`)
    hash: str
    path: str = ""


class Coverage(_Model):
    verified: int = 0
    total: int = 0


class ContentCoverage(_Model):
    """The suite's expected content items against the delivery's brief-derived requirements."""

    verified: int = 0
    expected: int = 0
    #: expected items not verified in the built game (not derived from the brief, or derived and unverified)
    missing: list[str] = Field(default_factory=list)
    #: the subset of ``missing`` no requirement of the delivery names at all (the reader did not derive it)
    not_derived: list[str] = Field(default_factory=list)


class Tokens(_Model):
    #: ``in``/``out`` in the JSON (``in`` is a Python keyword)
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    in_: int = Field(0, alias="in")
    out: int = 0


class RunRow(_Model):
    brief_id: str
    #: 0: the brief itself; n: its n-th follow-up (same thread)
    follow_up: int = 0
    repeat: int = 0
    model: str
    run_id: str | None = None
    #: delivered | failed | stopped (the run's own status); rejected: refused before a run was accepted (no run id)
    status: str
    stop_reason: str = ""
    outcome_expected: Outcome = "delivered"
    #: what the run came to: delivered | partial | refused | failed
    outcome: str = ""
    genre_expected: str | None = None
    genre_built: str | None = None
    genre_verdict: GenreVerdict = "none"
    l1_passed: bool = False
    structural: Coverage = Field(default_factory=Coverage)
    content: ContentCoverage = Field(default_factory=ContentCoverage)
    l3_score: float | None = None
    model_calls: int = 0
    tokens: Tokens = Field(default_factory=lambda: Tokens.model_validate({}))
    cost_usd: float = 0.0
    wall_s: float = 0.0
    fix_rounds: int = 0
    breaker_trips: int = 0
    #: the outcome is an honest one for the expectation (docs/eval.md); None: the run did not end
    honest: bool | None = None
    #: the run met its expectation exactly (delivered right genre and L1 / refused with the reason / partial listed)
    passed: bool = False
    #: a normalised failure signature (None when the run passed)
    signature: str | None = None
    #: relative to OUT (``shots/...png``)
    screenshot: str | None = None
    project_dir: str | None = None
    delivery_path: str | None = None
    tags: list[str] = Field(default_factory=list)
    lang: str = ""


class PassRate(_Model):
    rate: float = 0.0
    #: Wilson 95 % interval
    lo: float = 0.0
    hi: float = 0.0
    #: repeats per brief
    k: int = 1
    n: int = 0
    passed: int = 0


class Percentiles(_Model):
    p50: float | None = None
    p95: float | None = None
    n: int = 0


class Signature(_Model):
    signature: str
    count: int
    briefs: list[str]


class GenreRow(_Model):
    runs: int = 0
    delivered: int = 0
    build_health: float | None = None
    intent: float | None = None
    pass_rate: float | None = None
    cost_per_delivered: Percentiles = Field(default_factory=Percentiles)
    time: Percentiles = Field(default_factory=Percentiles)


class ModelSummary(_Model):
    runs: int = 0
    delivered: int = 0
    #: L1 pass rate over the runs expected to be delivered
    build_health: float | None = None
    #: expected content items verified / expected, over every run with expectations
    intent: float | None = None
    intent_verified: int = 0
    intent_expected: int = 0
    #: honest outcomes / runs that ended
    honest_rate: float | None = None
    pass_rate: PassRate = Field(default_factory=PassRate)
    cost_per_delivered: Percentiles = Field(default_factory=Percentiles)
    time: Percentiles = Field(default_factory=Percentiles)
    cost_usd: float = 0.0
    per_genre: dict[str, GenreRow] = Field(default_factory=dict)
    failure_signatures: list[Signature] = Field(default_factory=list)


class EvalResults(_Model):
    schema_: Literal["tier2.eval.results/1"] = Field("tier2.eval.results/1", alias="schema")
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    suite: SuiteRef
    models: list[str]
    started_at: float
    finished_at: float | None = None
    #: local | a service URL
    where: str = "local"
    policy_hash: str | None = None
    tier2_commit: str | None = None
    repeat: int = 1
    runs: list[RunRow] = Field(default_factory=list)
    summary: dict[str, ModelSummary] = Field(default_factory=dict)

    def dump_json(self) -> str:
        return self.model_dump_json(by_alias=True, indent=2)


def load_results(path: Path) -> EvalResults:
    """``results.json`` (or the directory holding it), validated."""
    file = path / "results.json" if path.is_dir() else path
    return EvalResults.model_validate_json(file.read_text(encoding="utf-8"))

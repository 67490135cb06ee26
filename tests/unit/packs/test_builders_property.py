"""Property: for 300 seeded briefs per genre (`tier2.testing.briefs`), the offline builder returns tables that pass
the data gates the validator runs (`genre_data_gates`: ``l1.data_schema`` and the genre's ``checks.py``) and, for
a genre with a mirror of its rules (``builder.MIRROR``), the latch split the genre probe plays on it — judged by
the gate's own functions, called here directly, not through the builder. Same brief, same tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tier2.packs import load_pack
from tier2.testing.briefs import generated_briefs
from tier2.validators.builder_gates import latch_gate
from tier2.validators.data.pack_checks import genre_data_gates

ROOT = Path(__file__).resolve().parents[3]
PACK = load_pack(ROOT / "capability_packs", "phaser")
N_BRIEFS = 300
N_TWICE = 15  # briefs built twice (determinism)

pytestmark = pytest.mark.slow


def test_the_generator_covers_every_genre_and_is_seeded() -> None:
    for genre in PACK.genres.values():
        briefs = generated_briefs(genre, N_BRIEFS)
        assert len(set(briefs)) == N_BRIEFS and briefs == generated_briefs(genre, N_BRIEFS)
        assert briefs != generated_briefs(genre, N_BRIEFS, seed=24)
        assert not [b for b in briefs if "{" in b or "}" in b], "every slot is filled"


@pytest.mark.parametrize("genre", sorted(PACK.genres))
def test_built_tables_pass_the_gates(genre: str) -> None:
    g = PACK.genres[genre]
    mirror = g.code.mirror
    failures: list[str] = []
    for i, brief in enumerate(generated_briefs(g, N_BRIEFS)):
        tables: dict[str, Any] = g.build_tables(brief)
        if i < N_TWICE:
            assert json.dumps(g.build_tables(brief), sort_keys=True) == json.dumps(tables, sort_keys=True), brief
        failures += [f"{brief!r}: {r.id}: {r.summary}" for r in genre_data_gates(g, tables) if not r.passed]
        if mirror is not None:
            latch = latch_gate(g, tables, mirror)
            failures += [] if latch.passed else [f"{brief!r}: {latch.id}: {latch.summary}"]
    assert not failures, f"{len(failures)} failure(s): " + " | ".join(failures[:5])

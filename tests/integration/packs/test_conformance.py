"""One conformance suite for every pack and every genre it ships (parametrized: a new pack or genre is covered by
being there). Fast: the genre interface binds, the composed template has the pack's build entry and page, its
schemas are valid, its template data matches them and passes the genre's own checks, its builder is complete and
deterministic. Live (browser): everything
`tier2 packs check` asks of a genre — several briefs built deterministically into distinct games that pass the
data gates, the template won and lost by playing with its witnesses seen and every L1 gate passed (legibility
included) — with the pack's skills and engine docs loading. Validation time is reported in the line's detail, not
asserted (performance lives in bench/)."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from tier2.packs import load_pack
from tier2.runs.commands.pack_check import check_pack
from tier2.settings.loader import REPO_ROOT, Settings
from tier2.validators.data.pack_checks import genre_data_gates

PACKS_DIR = REPO_ROOT / "capability_packs"
PACK_IDS = sorted(p.parent.name for p in PACKS_DIR.glob("*/pack.yaml"))
CASES = [(pid, gid) for pid in PACK_IDS for gid in load_pack(PACKS_DIR, pid).genres]


def test_the_suite_covers_every_pack_and_genre() -> None:
    assert "phaser" in PACK_IDS and len(CASES) >= 6
    for pid in PACK_IDS:
        assert {g for p, g in CASES if p == pid} == set(load_pack(PACKS_DIR, pid).genres)


@pytest.mark.parametrize(("pack_id", "genre_id"), CASES)
def test_a_genre_meets_the_pack_contract(pack_id: str, genre_id: str) -> None:
    pack = load_pack(PACKS_DIR, pack_id)
    genre = pack.genre(genre_id)
    code = genre.code                                             # the genre interface (tier2.packs.interface)
    assert callable(code.build_tables) and callable(code.win_action) and callable(code.lose_action)
    template = genre.template_dir
    for rel in (pack.manifest.build.entry, pack.manifest.build.html):
        assert (template / rel).is_file(), f"{genre_id}: the composed template lacks {rel}"
    tables = {}
    for table, schema in genre.schemas.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        tables[table] = json.loads((template / "data" / table).read_text(encoding="utf-8"))
    failing = [f"{g.id}: {g.summary}" for g in genre_data_gates(genre, tables) if not g.passed]
    assert not failing, f"{genre_id}: the template's own data fails its gates: {failing}"
    brief = f"a {genre.spec.brief_words[0]} game in a lighthouse by the sea"
    built = genre.build_tables(brief)                            # the offline builder: complete, deterministic
    assert set(built) >= set(genre.spec.data_tables)
    assert json.dumps(built, sort_keys=True) == json.dumps(genre.build_tables(brief), sort_keys=True)


@pytest.fixture(scope="module")
def check_settings(tmp_path_factory: pytest.TempPathFactory) -> Settings:
    return Settings(workspaces=tmp_path_factory.mktemp("conformance-ws"))  # one docs index for every case


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.parametrize(("pack_id", "genre_id"), CASES)
async def test_a_genre_passes_the_pack_check(pack_id: str, genre_id: str, check_settings: Settings,
                                             tmp_path: Path) -> None:
    lines = await check_pack(check_settings, pack_id, genres=[genre_id], out=tmp_path)
    failing = [f"{line.what}: {line.detail}" for line in lines if not line.ok]
    assert not failing, failing
    whats = [line.what for line in lines]
    assert f"{genre_id}: template plays (win, lose, witnesses)" in whats
    assert sum(w.startswith(f"{genre_id}: tables for") for w in whats) >= 3

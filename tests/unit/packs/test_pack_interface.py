"""The genre interface (`tier2.packs.interface`): every shipped genre meets it, and a genre that does not is
refused when its pack loads, with every reason — which `tier2 packs check` shows as its first failing line."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tier2.errors import PackError
from tier2.packs import load_pack
from tier2.packs.genres import load_genres
from tier2.packs.interface import GENRE_HOOKS, bind_genre_code
from tier2.settings.loader import REPO_ROOT

GENRES = REPO_ROOT / "capability_packs" / "genres"  # shared rules: each folder is a whole genre


def test_every_shipped_genre_meets_the_interface() -> None:
    pack = load_pack(REPO_ROOT / "capability_packs", "phaser")
    assert len(pack.genres) >= 6
    for genre in pack.genres.values():
        code = genre.code
        assert callable(code.build_tables) and callable(code.hold_tables), genre.id
        assert callable(code.win_action) and callable(code.lose_action), genre.id
        assert code.check_tables is not None, f"{genre.id}: every shipped genre has data checks"
        assert isinstance(genre.check_tables(genre.build_tables(f"a {genre.spec.brief_words[0]} game")), list)


def _copy(tmp_path: Path, genre: str = "clicker") -> Path:
    root = tmp_path / "genres" / genre
    shutil.copytree(GENRES / genre, root, ignore=shutil.ignore_patterns("__pycache__", "tests"))
    return root


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text() + "\n\n" + text + "\n")


def test_a_genre_missing_hooks_or_with_other_signatures_is_refused_with_every_reason(tmp_path: Path) -> None:
    root = _copy(tmp_path)
    _append(root / "builder.py", "del hold_tables")
    _append(root / "probe.py", "def win_action(state, tables):\n    return None")
    _append(root / "checks.py", "def check_tables(tables):\n    return []")
    with pytest.raises(PackError) as caught:
        load_genres(root.parent, "copy")
    text = str(caught.value)
    assert "genre clicker does not meet the genre interface" in text
    assert "builder.py has no hold_tables(tables)" in text
    assert "probe.win_action(state, tables) must be win_action(state, actions, tables)" in text
    assert "checks.check_tables(tables) must be check_tables(tables, options)" in text


def test_a_missing_module_and_an_import_error_are_reasons_too(tmp_path: Path) -> None:
    root = _copy(tmp_path, "maze")
    (root / "probe.py").unlink()
    _append(root / "checks.py", "raise RuntimeError('broken on purpose')")
    with pytest.raises(PackError) as caught:
        load_genres(root.parent, "copy")
    assert "no probe.py" in str(caught.value) and "checks.py failed to import: broken on purpose" in str(caught.value)


def test_extra_parameters_need_defaults_and_keyword_only_ones_too() -> None:
    def ok(tables, options=None, *, strict=False):  # type: ignore[no-untyped-def]
        return []

    def extra(tables, options, mode):  # type: ignore[no-untyped-def]
        return []

    def kw(tables, options, *, mode):  # type: ignore[no-untyped-def]
        return []

    import types

    for fn, fine in ((ok, True), (extra, False), (kw, False)):
        checks = types.ModuleType("checks")
        checks.check_tables = fn  # type: ignore[attr-defined]
        builder, probe = types.ModuleType("builder"), types.ModuleType("probe")
        builder.build_tables = lambda brief: {}  # type: ignore[attr-defined]
        builder.hold_tables = lambda tables: tables  # type: ignore[attr-defined]
        probe.win_action = probe.lose_action = lambda state, actions, tables: None  # type: ignore[attr-defined]
        mods = {"builder": builder, "probe": probe, "checks": checks}
        if fine:
            assert bind_genre_code("g", mods.get).check_tables is fn  # type: ignore[arg-type]
        else:
            with pytest.raises(PackError, match="must be check_tables"):
                bind_genre_code("g", mods.get)  # type: ignore[arg-type]
    assert {h.name for h in GENRE_HOOKS if h.required} == {"build_tables", "hold_tables", "win_action",
                                                           "lose_action"}

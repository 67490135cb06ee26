"""The pack owns its genres: no genre id (the pack's, or one it knows it cannot build) appears in core."""

from __future__ import annotations

import re
from pathlib import Path

from tier2.packs import Pack

ROOT = Path(__file__).resolve().parents[3]
#: core: the tier2 package (code, prompts, templates) — every text file in it
SUFFIXES = {".py", ".md", ".js", ".json", ".yaml", ".yml", ".html", ".txt", ".toml"}
#: test-corpus fixture names (third-party demo games' folder names), not genre knowledge
ALLOWED = {"coin-clicker"}


def _genre_words(pack: Pack) -> set[str]:
    ids = set(pack.genres) | set(pack.manifest.unsupported_genres)
    return ids | {i.replace("_", " ") for i in ids} | {i.replace("_", "-") for i in ids}


def test_no_genre_name_in_core(pack: Pack) -> None:
    words = _genre_words(pack)
    assert {"shop"} <= words and len(pack.genres) >= 1
    pattern = re.compile(r"(?<![\w-])(" + "|".join(sorted(map(re.escape, words), key=len, reverse=True))
                         + r")(?![\w-])", re.I)
    found = []
    for path in sorted((ROOT / "tier2").rglob("*")):
        if path.suffix not in SUFFIXES or not path.is_file():
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            for m in pattern.finditer(line):
                if not any(a in line for a in ALLOWED):
                    found.append(f"{path.relative_to(ROOT)}:{n}: {m.group(0)!r} in {line.strip()[:100]}")
    assert not found, "genre names in core (they belong in the pack):\n" + "\n".join(found[:40])


def test_the_check_sees_a_planted_genre_name(pack: Pack, tmp_path: Path) -> None:
    words = _genre_words(pack)
    pattern = re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, words)) + r")(?![\w-])", re.I)
    assert pattern.search("genre = 'shop'  # planted") and not pattern.search("shopping_cart = 1")

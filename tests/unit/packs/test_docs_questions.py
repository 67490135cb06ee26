"""The measured figure: API questions written from real Phaser engine errors, the right section in the top 3 for at
least 30 of them (the index is deterministic: this is a quality test, not a timing one)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tier2.packs import Pack
from tier2.packs.retrieval import DocsIndex, load_docs_index
from tier2.packs.retrieval.evaluate import evaluate

QUESTIONS = Path(__file__).resolve().parents[2] / "fixtures" / "docs_questions.json"


@pytest.fixture(scope="module")
def index(pack: Pack, tmp_path_factory: pytest.TempPathFactory) -> DocsIndex:
    return load_docs_index(pack, tmp_path_factory.mktemp("docs-cache"))


def _questions() -> list[dict]:
    return json.loads(QUESTIONS.read_text())["questions"]


def test_the_question_set_is_sound(index: DocsIndex) -> None:
    questions = _questions()
    assert len(questions) >= 35 and len({q["id"] for q in questions}) == len(questions)
    for q in questions:
        assert q["question"].strip() and q["source"] and q["expected"], q["id"]
        missing = [sid for sid in q["expected"] if index.get(sid) is None]
        assert not missing, f"{q['id']}: expected sections not in the index: {missing}"


def test_at_least_30_questions_have_the_right_section_in_the_top_3(index: DocsIndex) -> None:
    scores = evaluate(index, _questions(), top_k=3)
    assert scores.topk >= 30, scores.to_json()["misses"]
    assert scores.top1 >= 20 and scores.mrr >= 0.6
    assert evaluate(index, _questions(), top_k=3).to_json() == scores.to_json()  # deterministic


def test_the_pack_replacements_and_aliases_point_at_real_sections(index: DocsIndex) -> None:
    targets = {sid for ids in index.replaced.values() for sid in ids} | set(index.aliases.values()) \
        | set(index.receivers.values())
    assert not sorted(t for t in targets if index.get(t) is None)


def test_wrong_questions_get_no_confident_answer(index: DocsIndex) -> None:
    assert all(h.why == "text" for h in index.search("how do I bake a chocolate cake", 3))
    assert all(h.why == "text" for h in index.search("qqqzzz.wwwvvv is not a function", 3))
    assert index.search("", 3) == []

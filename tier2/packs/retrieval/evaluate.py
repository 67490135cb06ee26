"""Retrieval quality on a question set: for each question the rank of the first expected section in the top-k
answer (None: a miss), then top-1 / top-k hits and the mean reciprocal rank. Shared by the test that pins the
figure and ``bench/docs_retrieval.py`` that prints it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tier2.packs.retrieval.index import DocsIndex

__all__ = ["Graded", "Scores", "evaluate"]


@dataclass(frozen=True)
class Graded:
    id: str
    question: str
    expected: list[str]
    got: list[str]
    rank: int | None  # 1-based rank of the first expected section in ``got``


@dataclass
class Scores:
    top_k: int
    graded: list[Graded] = field(default_factory=list)

    @property
    def total(self) -> int:
        return len(self.graded)

    @property
    def top1(self) -> int:
        return sum(1 for g in self.graded if g.rank == 1)

    @property
    def topk(self) -> int:
        return sum(1 for g in self.graded if g.rank is not None)

    @property
    def mrr(self) -> float:
        return sum(1 / g.rank for g in self.graded if g.rank) / max(1, self.total)

    @property
    def misses(self) -> list[Graded]:
        return [g for g in self.graded if g.rank is None]

    def to_json(self) -> dict[str, Any]:
        return {"questions": self.total, "top_k": self.top_k, "top1": self.top1, "topk": self.topk,
                "mrr": round(self.mrr, 4),
                "misses": [{"id": g.id, "question": g.question, "expected": g.expected, "got": g.got}
                           for g in self.misses]}


def evaluate(index: DocsIndex, questions: list[dict[str, Any]], top_k: int = 3) -> Scores:
    scores = Scores(top_k)
    for q in questions:
        got = [h.section.id for h in index.search(q["question"], top_k)]
        rank = next((i for i, sid in enumerate(got, 1) if sid in q["expected"]), None)
        scores.graded.append(Graded(q["id"], q["question"], list(q["expected"]), got, rank))
    return scores

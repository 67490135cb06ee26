"""L3 effect: a visual score of the screenshots. Recorded for trends and review; it never blocks or rejects."""

from tier2.validators.l3.visual import HEURISTIC_SCORER, ModelScorer, heuristic_score, score_visual

__all__ = ["HEURISTIC_SCORER", "ModelScorer", "heuristic_score", "score_visual"]

"""The design studio's data: genres, the checkable spec (JSON Schema), the roles' answers (the plan: `tier2.plan`).

Pure data and rules (no agents, no I/O beyond the package's own files): the offline model, the L2 gates, the team
assembly and the design phase all build on it. Layer: with ``packs``/``telemetry`` (below validators and models).
"""

from tier2.design.genre import GenreGuess, Vocab, classify_brief, clauses, out_of_scope
from tier2.design.roles import ROLES, AnswerError, DesignerAnswer, LeaderSplit, parse_answer
from tier2.design.spec import PREDICATE_KINDS, SPEC_SCHEMA, spec_sha256, validate_spec

__all__ = ["ROLES", "PREDICATE_KINDS", "SPEC_SCHEMA", "AnswerError", "DesignerAnswer", "GenreGuess", "LeaderSplit",
           "Vocab", "classify_brief", "clauses", "out_of_scope", "parse_answer",
           "spec_sha256", "validate_spec"]

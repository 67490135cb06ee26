"""L2 design conformance: one gate per spec requirement (``l2.req.<id>``) plus the genre gate (``l2.genre``).

Deterministic judgements of the same `PlayTrace`, tables and sources the L1 gates saw, against the design spec
(`tier2.design.spec`). A model never decides them. `runner.apply_policy` sets observe/enforce per gate (hot
config ``gates:``; ``l2.genre`` enforces by default, requirement gates observe unless ``l2.req`` or their own id
says enforce).
"""

from tier2.validators.l2.conformance import completion_map, conformance_gates
from tier2.validators.l2.genre import genre_gate, observed_genre

__all__ = ["completion_map", "conformance_gates", "genre_gate", "observed_genre"]

"""The shop genre's data checks: the crafting graph's linkage and the economy (the genre's analysers in
``economy/``, which also read real games' data), gate ids ``l1.data_linkage`` and ``l1.economy``."""

from __future__ import annotations

from typing import Any

from tier2.validators.base import ValidationResult

from .economy import check_tier2_tables

__all__ = ["check_tables"]


def check_tables(tables: dict[str, Any], options: dict[str, Any] | None = None) -> list[ValidationResult]:
    return check_tier2_tables(tables, strict_acyclic=bool((options or {}).get("strict_acyclic")))

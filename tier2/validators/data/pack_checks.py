"""The data gates of a pack genre's project: every table against the genre's JSON Schema (``l1.data_schema``),
then the genre's own checks (``checks.py``: solvability, economy, …), as L1 gates. Never raises."""

from __future__ import annotations

from typing import Any

import jsonschema

from tier2.packs import Genre
from tier2.validators.base import Finding, ValidationResult

__all__ = ["SCHEMA_GATE_ID", "genre_data_gates", "schema_gate"]

SCHEMA_GATE_ID = "l1.data_schema"
_MAX_FINDINGS = 12


def schema_gate(genre: Genre, tables: dict[str, Any]) -> ValidationResult:
    problems: list[str] = []
    for name in genre.spec.data_tables:
        validator = jsonschema.Draft202012Validator(genre.schemas[name])
        for err in sorted(validator.iter_errors(tables.get(name, {})), key=lambda e: list(e.absolute_path)):
            at = ".".join(str(p) for p in err.absolute_path) or "(root)"
            problems.append(f"data/{name} {at}: {err.message[:200]}")
    evidence = {"genre": genre.id, "tables": genre.spec.data_tables}
    if problems:
        return ValidationResult(id=SCHEMA_GATE_ID, layer="L1", passed=False,
                                summary=f"{len(problems)} table problem(s) against the {genre.id} schemas",
                                findings=[Finding(message=p) for p in problems[:_MAX_FINDINGS]], evidence=evidence)
    return ValidationResult(id=SCHEMA_GATE_ID, layer="L1", passed=True,
                            summary=f"{len(genre.spec.data_tables)} tables match the {genre.id} schemas",
                            evidence=evidence)


def _as_gate(genre: Genre, raw: Any) -> ValidationResult:
    if isinstance(raw, ValidationResult):
        return raw
    if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
        return ValidationResult(id=f"l1.data.{genre.id}", layer="L1", passed=False,
                                summary=f"the {genre.id} genre's checks returned {type(raw).__name__}, not a result")
    findings = [Finding(message=str(f)[:500]) for f in raw.get("findings", [])][:_MAX_FINDINGS]
    return ValidationResult(id=f"l1.data.{raw['id']}", layer="L1", passed=bool(raw.get("passed")),
                            summary=str(raw.get("summary", ""))[:500], findings=findings,
                            evidence={"genre": genre.id, **(raw.get("evidence") or {})})


def genre_data_gates(genre: Genre, tables: dict[str, Any], options: dict[str, Any] | None = None,
                     ) -> list[ValidationResult]:
    gates = [schema_gate(genre, tables)]
    try:
        gates += [_as_gate(genre, r) for r in genre.check_tables(tables, options or {})]
    except Exception as exc:  # a genre check that crashes fails its gate; the runner goes on
        gates.append(ValidationResult(id=f"l1.data.{genre.id}", layer="L1", passed=False,
                                      summary=f"the {genre.id} data checks crashed: {type(exc).__name__}",
                                      findings=[Finding(message=str(exc)[:500])]))
    return gates

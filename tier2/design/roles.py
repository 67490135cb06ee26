"""The design studio's roles, what each one answers (structured output), and how answers become documents.

Designers never write files: each one's final answer is one JSON object (`DesignerAnswer`), and tier2 code
renders it into ``docs/design/<role>.md``; the leader's converged answer is the spec (`tier2.design.spec`),
rendered into ``docs/design/GDD.md``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["ROLES", "DesignerAnswer", "FollowUpAnswer", "LeaderSplit", "parse_answer", "render_role_doc",
           "render_gdd", "AnswerError"]

#: the designers, in the order the GDD lists them
ROLES: tuple[str, ...] = ("gameplay", "level", "economy", "ui", "audio", "vfx", "assets")

_TITLES = {"gameplay": "Gameplay", "level": "Levels", "economy": "Economy and numbers", "ui": "UI",
           "audio": "Audio", "vfx": "Visual effects", "assets": "Assets"}

class AnswerError(ValueError):
    """A designer's or the leader's final answer is not the JSON object its role must return."""


class DraftRequirement(BaseModel):
    model_config = ConfigDict(extra="ignore")
    text: str
    source: str
    predicate: dict[str, Any]


class DesignerAnswer(BaseModel):
    """One designer's final answer."""

    model_config = ConfigDict(extra="ignore")
    role: str
    summary: str
    decisions: list[str] = Field(default_factory=list)
    requirements: list[DraftRequirement] = Field(default_factory=list)
    #: data tables (file name -> content) — the economy designer's numbers
    tables: dict[str, Any] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)


class LeaderSplit(BaseModel):
    """The leader's first answer: the genre it reads in the brief and one task per designer."""

    model_config = ConfigDict(extra="ignore")
    title: str
    genre: str
    pitch: str = ""
    tasks: dict[str, str]


class FollowUpChange(BaseModel):
    """One change a follow-up asks for, and the designers whose work it changes."""

    model_config = ConfigDict(extra="ignore")
    text: str = Field(max_length=500)
    kind: str = Field(max_length=40)
    roles: list[str] = Field(default_factory=list)
    target: str = Field(default="", max_length=120)
    direction: str | None = None
    value: float | None = None


class FollowUpProblem(BaseModel):
    """A part of a follow-up that cannot become a change: unbuildable (with the options the pack offers),
    contradictory, or not understood."""

    model_config = ConfigDict(extra="ignore")
    text: str = Field(max_length=500)
    reason: str = Field(default="", max_length=1000)
    options: list[str] = Field(default_factory=list, max_length=20)


class FollowUpAnswer(BaseModel):
    """The leader's reading of a follow-up (its third job): the changes, and what it cannot turn into one."""

    model_config = ConfigDict(extra="ignore")
    changes: list[FollowUpChange] = Field(default_factory=list, max_length=40)
    unbuildable: list[FollowUpProblem] = Field(default_factory=list, max_length=20)
    contradictions: list[FollowUpProblem] = Field(default_factory=list, max_length=20)
    uninterpreted: list[FollowUpProblem] = Field(default_factory=list, max_length=20)


_FENCE = re.compile(r"```(?:json)?\s*(\{.*\})\s*```", re.S)


def parse_answer(text: str, model: type[BaseModel]) -> Any:
    """The JSON object in a final answer (bare, or in a ```json fence) as ``model``; `AnswerError` else."""
    raw = text.strip()
    m = _FENCE.search(raw)
    if m:
        raw = m.group(1)
    elif not raw.startswith("{") and "{" in raw:
        raw = raw[raw.index("{"): raw.rindex("}") + 1]
    try:
        obj = json.loads(raw)
    except (json.JSONDecodeError, ValueError) as exc:
        raise AnswerError(f"the answer is not one JSON object: {exc}") from exc
    try:
        return model.model_validate(obj)
    except ValidationError as exc:
        raise AnswerError(f"the answer does not match the {model.__name__} shape: {exc.errors()[:3]}") from exc


def render_role_doc(answer: DesignerAnswer, goal: str, run_id: str) -> str:
    """The role's document; the same answer always gives the same bytes (no run id or time: a resumed or repeated
    run must produce an identical source snapshot — the run id is in the delivery)."""
    lines = [f"# {_TITLES.get(answer.role, answer.role)} design", "",
             f"_Written by tier2 from the `{answer.role}` designer's answer. Edit freely while the "
             "run is paused after design; the spec (`design/spec.json`) is what the gates check._", "",
             "## Goal", "", goal.strip(), "", "## Summary", "", answer.summary.strip(), ""]
    if answer.decisions:
        lines += ["## Decisions", ""] + [f"- {d}" for d in answer.decisions] + [""]
    if answer.requirements:
        lines += ["## Proposed requirements", ""]
        lines += [f"- {r.text} — from “{r.source}” — `{json.dumps(r.predicate)}`" for r in answer.requirements]
        lines.append("")
    if answer.tables:
        lines += ["## Tables", ""] + [f"- `data/{name}`" for name in sorted(answer.tables)] + [""]
    if answer.notes:
        lines += ["## Notes", ""] + [f"- {n}" for n in answer.notes] + [""]
    return "\n".join(lines)


def render_gdd(spec: dict[str, Any], answers: dict[str, DesignerAnswer], goals: list[str]) -> str:
    scope = spec.get("scope", {})
    lines = [f"# {spec.get('title', 'Game')} — game design document", "",
             f"- **Genre:** {spec.get('genre')}", f"- **Goal version:** {spec.get('goal_version', 1)}",
             f"- **Buildable with pack {scope.get('pack', '?')}:** {'yes' if scope.get('buildable') else 'NO'}", ""]
    if spec.get("pitch"):
        lines += ["## Pitch", "", spec["pitch"], ""]
    lines += ["## Goal", ""] + [f"{i + 1}. {g}" for i, g in enumerate(goals)] + [""]
    if scope.get("unsupported"):
        lines += ["## Out of scope (stated, not substituted)", ""]
        lines += [f"- **{u['what']}**: {u['reason']}" for u in scope["unsupported"]] + [""]
    lines += ["## Requirements (checked by L2 gates)", "", "| id | requirement | from the brief | predicate |",
              "|---|---|---|---|"]
    for r in spec.get("requirements", []):
        lines.append(f"| {r['id']} | {r['text']} | {r['source']} | `{json.dumps(r['predicate'])}` |")
    lines.append("")
    lines += ["## By discipline", ""]
    for role in ROLES:
        a = answers.get(role)
        if a is not None:
            lines += [f"### {_TITLES[role]}", "", a.summary, "", f"See [{role}.md]({role}.md).", ""]
    return "\n".join(lines)

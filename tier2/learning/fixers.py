"""The small registry of deterministic fixers a case may name: a fix applied with no model call.

A fixer *plans* a fix from the failure (its unmasked message), the project's files, the run's `History` and the
pack's genre template; the library writes the planned files and the gates re-validate. A fixer never invents
content: it restores what the template or an earlier verified state of the same project had.

- ``restore_data_key`` — a data table lacks a key the game requires (``tier2 data error: <file> <key>: ...``, a
  schema's ``'<key>' is a required property``): put the key back with its value in the newest earlier version of
  that table in this run that had it (e.g. the design phase's table), else with the template's value.
- ``restore_last_built`` — a build error in a file: restore the file to its content at the last build that passed
  in this run, else to the pack template's file.
- ``revert_to_last_pass`` — a gate that passed earlier in this run fails now: restore the files changed since that
  gate last passed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tier2.learning.history import Files, History
from tier2.learning.signature import Failure

__all__ = ["FIXERS", "FixContext", "FixPlan", "Fixer", "claiming_fixer", "first_plan", "fixer_named"]


@dataclass(frozen=True)
class FixContext:
    project: Path
    files: Files
    history: History
    #: the project's genre template directory in the pack (None: not a pack project)
    template: Path | None = None


@dataclass(frozen=True)
class FixPlan:
    fixer: str
    #: relative path -> new content
    files: dict[str, str]
    note: str


@dataclass(frozen=True)
class Fixer:
    name: str
    rule: str
    claims: Callable[[Failure], bool]
    plan: Callable[[FixContext, Failure], FixPlan | None]


_DATA_ERROR = re.compile(r"tier2 data error:?\s*(?:data/)?(?P<file>[\w-]+\.json)\s+(?P<key>[A-Za-z_][\w.]*)", re.I)
_REQUIRED = re.compile(r"data/(?P<file>[\w-]+\.json)\b.*?'(?P<key>[A-Za-z_]\w*)' is a required property")


def _missing_key(failure: Failure) -> tuple[str, str] | None:
    m = _DATA_ERROR.search(failure.message) or _REQUIRED.search(failure.message)
    return (m["file"], m["key"]) if m else None


def _get(table: Any, dotted: str) -> tuple[bool, Any]:
    cur = table
    for part in dotted.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return False, None
        cur = cur[part]
    return True, cur


def _set(table: dict[str, Any], dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    cur = table
    for part in parts[:-1]:
        nxt = cur.get(part)
        if not isinstance(nxt, dict):
            nxt = cur[part] = {}
        cur = nxt
    cur[parts[-1]] = value


def _plan_data_key(ctx: FixContext, failure: Failure) -> FixPlan | None:
    found = _missing_key(failure)
    if found is None or ctx.template is None:
        return None
    name, key = found
    rel = f"data/{name}"
    tpl = ctx.template / rel
    if rel not in ctx.files or not tpl.is_file():
        return None
    try:
        table = json.loads(ctx.files[rel])
        template = json.loads(tpl.read_text())
    except ValueError:
        return None
    has, value = _get(template, key)
    if not has or not isinstance(table, dict):
        return None
    present, current = _get(table, key)
    if present and type(current) is type(value):
        return None  # the key is there with the template's type: something else is wrong
    source = "the template's value"
    for earlier in reversed(ctx.history.versions.get(rel, [])):
        try:
            had, old = _get(json.loads(earlier), key)
        except ValueError:
            continue
        if had and type(old) is type(value):
            value, source = old, "its value in an earlier version of the table in this run"
            break
    _set(table, key, value)
    return FixPlan("restore_data_key", {rel: json.dumps(table, indent=2, ensure_ascii=False) + "\n"},
                   f"restored {rel} key {key} to {source}, {json.dumps(value)[:80]}")


def _plan_last_built(ctx: FixContext, failure: Failure) -> FixPlan | None:
    good = ctx.history.last_pass.get("l1.builds")
    names = [failure.file] if failure.file else sorted(ctx.files)
    out: dict[str, str] = {}
    notes: list[str] = []
    for rel in names:
        if rel is None or rel not in ctx.files:
            continue
        if good is not None and rel in good:
            if good[rel] != ctx.files[rel]:
                out[rel] = good[rel]
                notes.append(f"{rel} restored to its content at the last build that passed")
        elif ctx.template is not None and (ctx.template / rel).is_file():
            content = (ctx.template / rel).read_text()
            if content != ctx.files[rel]:
                out[rel] = content
                notes.append(f"{rel} restored to the pack template's file (no build had passed in this run)")
        if failure.file:
            break
    return FixPlan("restore_last_built", out, "; ".join(notes)) if out else None


def _plan_revert(ctx: FixContext, failure: Failure) -> FixPlan | None:
    good = ctx.history.last_pass.get(failure.gate)
    if good is None:
        return None
    out = {rel: content for rel, content in good.items() if ctx.files.get(rel) != content}
    if not out:
        return None
    return FixPlan("revert_to_last_pass", out,
                   f"reverted {', '.join(sorted(out))} to the content they had when {failure.gate} last passed")


FIXERS: tuple[Fixer, ...] = (
    Fixer("restore_data_key", "a data table lost a key the game reads: restore the key with the template's value",
          lambda f: _missing_key(f) is not None, _plan_data_key),
    Fixer("restore_last_built", "a syntax or build error in a file: restore the last content of that file that built",
          lambda f: f.stage == "build", _plan_last_built),
    Fixer("revert_to_last_pass", "a change broke a gate that passed before: revert the files changed since it passed",
          lambda f: f.stage in ("page", "gate"), _plan_revert),
)


def fixer_named(name: str | None) -> Fixer | None:
    return next((f for f in FIXERS if f.name == name), None)


def claiming_fixer(failure: Failure) -> Fixer | None:
    """The first fixer of the registry whose class of failure this is."""
    return next((f for f in FIXERS if f.claims(failure)), None)


def first_plan(ctx: FixContext, failure: Failure) -> FixPlan | None:
    """The plan of the first fixer (in registry order) that claims the failure and can plan a fix for it."""
    for fixer in FIXERS:
        if fixer.claims(failure) and (plan := fixer.plan(ctx, failure)) is not None:
            return plan
    return None

"""State versions (seed 002 §4.3: plan versions bound to state versions) and the requirement diff of a goal version.

A state version is the sha256 of what a node read: a project file, a spec section (one requirement, the genre, the
scope), a designer's answer, the goal text — or the engine's and the pack's version strings. Nodes record them when
verified; `tier2.plan.Plan.stale` compares them with the current ones.

Requirements keep their ids across goal versions (`stable_ids`): a requirement the new spec still has (the same
*slot* — role, predicate kind and what the predicate points at) keeps its old id, a new one gets the next free id.
`requirement_diff` says which were added, changed (same slot, other text or predicate) and removed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from tier2.hostio import ProjectDir

__all__ = ["GAME_PATHS", "file_versions", "game_version", "requirement_diff", "sha_json", "sha_text", "slot",
           "spec_versions", "stable_ids"]

#: the predicate field that says what a predicate points at (the rest are its parameters)
_TARGET = ("key", "counter", "role", "scene", "table", "gate", "action", "outcome", "text", "field")
MAX_FILE_BYTES = 8_000_000


def sha_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha_json(obj: Any) -> str:
    return sha_text(json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")))


def file_versions(project: Path, rels: Iterable[str]) -> dict[str, str]:
    """``file:<rel>`` -> sha256 of the file's bytes (``missing`` when it is not a regular file). Read with
    `ProjectDir` rules: never through a link the sandbox planted."""
    pdir = ProjectDir(project)
    out: dict[str, str] = {}
    for rel in rels:
        try:
            out[f"file:{rel}"] = hashlib.sha256(pdir.read_bytes(rel, max_bytes=MAX_FILE_BYTES)).hexdigest()
        except (OSError, ValueError):
            out[f"file:{rel}"] = "missing"
    return out


#: what the game itself reads (its code, tables, assets, page): a requirement judged in play reads all of it; the
#: design documents and tier2's own files are not part of the game
GAME_PATHS = ("src/", "data/", "assets/", "index.html", "public/")


def game_version(snapshot: Mapping[str, Any]) -> str:
    """One version over the game's own files of a project snapshot (`tier2.workspace.snapshot`)."""
    h = hashlib.sha256()
    for f in snapshot.get("files") or []:
        if str(f.get("path", "")).startswith(GAME_PATHS):
            h.update(f"{f['path']}\0{f['sha256']}\n".encode())
    return h.hexdigest()


def spec_versions(spec: Mapping[str, Any]) -> dict[str, str]:
    """``spec:<id>`` per requirement, ``spec:genre``, ``spec:scope``, ``spec:title``."""
    out = {f"spec:{r.get('id')}": sha_json({k: v for k, v in r.items() if k not in ("id", "span")})
           for r in spec.get("requirements") or [] if isinstance(r, dict)}
    for key in ("genre", "scope", "title"):
        out[f"spec:{key}"] = sha_json(spec.get(key))
    return out


def slot(req: Mapping[str, Any]) -> tuple[str, ...]:
    """What a requirement is about, apart from its wording and parameters: its role, kind, predicate kind and the
    thing the predicate points at (the state key, the asset role, the scene...)."""
    pred = req.get("predicate") or {}
    target = next((f"{k}={pred[k]}" for k in _TARGET if k in pred and k != "text"), "")
    if not target and pred.get("kind") == "ui_label":
        target = "label"
    return (str(req.get("role", "")), str(req.get("kind", "structural")), str(pred.get("kind", "")), target)


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    strip = ("id", "span", "source")
    return {k: v for k, v in a.items() if k not in strip} == {k: v for k, v in b.items() if k not in strip}


def _pairs(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> tuple[dict[int, int], list[int], list[int]]:
    """new index -> old index for the requirements that are the same one; the unmatched old and new indices.
    Identical requirements pair first, then requirements of the same slot, in order."""
    matched: dict[int, int] = {}
    free_old = list(range(len(old)))
    for same_only in (True, False):
        for j, r in enumerate(new):
            if j in matched:
                continue
            i = next((i for i in free_old if (_same(old[i], r) if same_only else slot(old[i]) == slot(r))), None)
            if i is not None:
                matched[j] = i
                free_old.remove(i)
    return matched, free_old, [j for j in range(len(new)) if j not in matched]


def stable_ids(old: Mapping[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    """``new`` with each requirement that the old spec had keeping the old id; added ones numbered after the
    highest id either spec used (ids are never reused)."""
    olds = [r for r in (old or {}).get("requirements") or [] if isinstance(r, dict)]
    news = [dict(r) for r in new.get("requirements") or [] if isinstance(r, dict)]
    if not olds:
        return new
    matched, _, added = _pairs(olds, news)
    used = [int(r["id"][1:]) for r in [*olds, *news] if str(r.get("id", "")).startswith("R")
            and str(r["id"])[1:].isdigit()]
    nxt = max(used, default=0) + 1
    taken: set[str] = set()
    for j, i in matched.items():
        news[j]["id"] = olds[i]["id"]
        taken.add(str(olds[i]["id"]))
    for j in added:
        while f"R{nxt}" in taken:
            nxt += 1
        news[j]["id"] = f"R{nxt}"
        taken.add(f"R{nxt}")
        nxt += 1
    return {**new, "requirements": news}


def requirement_diff(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """``{"added": [...], "changed": [...], "removed": [...]}`` between two specs (after `stable_ids`): each entry
    ``{id, text}``, a changed one with ``was`` (its old text) and what changed."""
    olds = {str(r.get("id")): r for r in (old or {}).get("requirements") or [] if isinstance(r, dict)}
    news = {str(r.get("id")): r for r in new.get("requirements") or [] if isinstance(r, dict)}
    out: dict[str, list[dict[str, Any]]] = {"added": [], "changed": [], "removed": []}
    for rid, r in news.items():
        if rid not in olds:
            out["added"].append({"id": rid, "text": r.get("text", "")})
        elif not _same(olds[rid], r):
            what = sorted(k for k in set(r) | set(olds[rid]) if k not in ("id", "span", "source")
                          and r.get(k) != olds[rid].get(k))
            out["changed"].append({"id": rid, "text": r.get("text", ""), "was": olds[rid].get("text", ""),
                                   "fields": what})
    out["removed"] = [{"id": rid, "text": r.get("text", "")} for rid, r in olds.items() if rid not in news]
    return out

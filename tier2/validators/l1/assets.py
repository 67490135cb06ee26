"""``l1.assets``: every registered asset is there, unchanged, and loads in the page; no source names an asset key
that is not registered.

The manifest is read without trusting it (`tier2.design.asset_pool.read_manifest`: shape, key scheme, file names,
every file re-hashed). What loaded is what the game reported in play (`PlayTrace.assets`, from
``window.__TIER2__.assets()``): a registered asset the page did not load, or whose load failed, fails the gate —
and so does a project with registered assets whose game reports nothing (never passed on a guess). A project with
no ``assets/manifest.json`` registers nothing and passes.
"""

from __future__ import annotations

import re
from pathlib import Path

from tier2.design.asset_pool import ASSET_ROLES, read_manifest
from tier2.design.assets import ASSET_KEY
from tier2.hostio import ProjectDir
from tier2.validators.base import Finding, ValidationResult
from tier2.validators.trace import PlayTrace

__all__ = ["GATE", "asset_gate", "referenced_keys"]

GATE = "l1.assets"
_ROLES = "|".join(ASSET_ROLES)
#: ``player.json`` is a table's file name, not an asset key
_FILE_EXTS = frozenset({"js", "mjs", "ts", "json", "png", "wav", "html", "css", "txt", "md", "svg", "jpg"})
_LITERAL = re.compile(r"""(["'`])((?:""" + _ROLES + r""")\.[a-z0-9][a-z0-9_]{0,47})\1""")


def referenced_keys(project: Path) -> dict[str, list[str]]:
    """Asset keys (``role.name`` string literals of an asset role) in the project's sources → the files naming them."""
    found: dict[str, list[str]] = {}
    pdir = ProjectDir(project)
    for rel, text in pdir.text_files("src", suffixes=(".js", ".mjs", ".ts"), max_bytes=999_999):
        for m in _LITERAL.finditer(text):
            if ASSET_KEY.match(m.group(2)) and m.group(2).rsplit(".", 1)[1] not in _FILE_EXTS:
                found.setdefault(m.group(2), [])
                if rel not in found[m.group(2)]:
                    found[m.group(2)].append(rel)
    return found


def asset_gate(project: Path, trace: PlayTrace | None) -> ValidationResult:
    manifest = read_manifest(project)
    problems = list(manifest.problems)
    ids = manifest.ids
    refs = referenced_keys(project)
    problems += [f"{', '.join(files[:3])} names asset key {key!r}, which is not registered in assets/manifest.json"
                 for key, files in sorted(refs.items()) if key not in ids]
    seen = (trace.assets or {}) if trace is not None else {}
    if manifest.entries:
        if trace is None or not trace.booted:
            problems.append("the game did not boot, so no registered asset was seen loading")
        elif trace.assets is None:
            problems.append("the game reports no assets (window.__TIER2__.assets() missing): the registered assets "
                            "were not seen loading (the pack's preload, src/assets.js, removed?)")
        else:
            failed, loaded = set(seen.get("failed", [])), set(seen.get("loaded", []))
            for e in manifest.entries:
                if e.id in failed:
                    problems.append(f"{e.id}: {e.file} failed to load in the page")
                elif e.id not in loaded:
                    problems.append(f"{e.id}: registered but not loaded by the game (not in its preload)")
    evidence = {"registered": sorted(ids), "referenced": sorted(refs), "manifest": manifest.present,
                **({"loaded": seen.get("loaded", []), "roles": seen.get("roles", {})} if seen else {})}
    if problems:
        return ValidationResult(id=GATE, layer="L1", passed=False,
                                summary=f"{len(problems)} asset problem(s)",
                                findings=[Finding(message=p) for p in problems[:20]], evidence=evidence)
    if not manifest.present:
        return ValidationResult(id=GATE, layer="L1", passed=True, summary="no assets registered (no "
                                "assets/manifest.json)", evidence=evidence)
    return ValidationResult(id=GATE, layer="L1", passed=True, evidence=evidence,
                            summary=f"{len(ids)} registered asset(s), every one unchanged and loaded in the page")

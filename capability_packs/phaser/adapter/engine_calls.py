"""l1.engine_calls: every Phaser API the game touches must exist in the installed Phaser.

Types are inferred from the scanner's facts, conservatively: a value has a type only when every way it gets a value
resolves to the same Phaser type (``const g = this.add.graphics()``), so unknown receivers — locals, parameters, the
game's own objects — are never judged. Known receivers are ``Phaser.*`` static paths (global or imported), ``this``
inside classes extending a Phaser class (or scene-style ``create()`` functions), and what flows from them through
documented member and return types (``this.physics.add.sprite(...).setVelocityX``). A name the game itself defines or
writes anywhere (methods, fields, ``obj.name = ...``) is never reported: that is the game's own expando property.
"""

from __future__ import annotations

import re
import time
from functools import cache
from pathlib import Path
from typing import Any

from tier2.validators.base import Finding, ValidationResult
from tier2.validators.static.scan import Scan, scan_sources

from .api import PhaserApi

__all__ = ["check_engine_calls", "Resolver"]

GATE = "l1.engine_calls"
MAX_FINDINGS = 25
Type = tuple[Any, ...] | None  # ("s", path) | ("i", classes) | ("u", class key) | ("m", classes, name, receiver)


class Resolver:
    """Resolves scanner chains to Phaser types and records members that do not exist."""

    def __init__(self, api: PhaserApi, scan: Scan) -> None:
        self.api, self.scan = api, scan
        self.defined: set[str] = {n for f in scan.values() for n in f.get("defined", [])}
        self.classes: dict[tuple[str, str], dict[str, Any]] = {}
        self.by_name: dict[str, list[tuple[str, str]]] = {}
        self.props: dict[tuple[str, str], dict[str, list[Any]]] = {}
        for file, facts in scan.items():
            for c in facts.get("classes", []):
                self.classes[(file, c["id"])] = c
                if c["name"]:
                    self.by_name.setdefault(c["name"], []).append((file, c["id"]))
            self.classes[(file, "scenefn")] = {"id": "scenefn", "name": "scene", "members": [], "super": None}
            for cls, name, value in facts.get("props", []):
                self.props.setdefault((file, cls), {}).setdefault(name, []).append(value)
        self.bindings = {f: _group(facts.get("bindings", [])) for f, facts in scan.items()}
        #: files that touch Phaser: only there is `this` in a top-level create()/update() taken to be a Scene
        self.phaser_files = {f for f, facts in scan.items() for c in facts.get("chains", [])
                             if c["root"]["t"] == "engine" or c["root"].get("name") == "Phaser"}
        self.findings: list[tuple[str, int, int, str, str | None]] = []
        self.checked = 0
        self._busy: set[Any] = set()
        self._memo: dict[Any, Type] = {}

    # --- chains ---
    def chain(self, file: str, chain: dict[str, Any], report: bool) -> Type:
        root, steps = chain["root"], chain["steps"]
        t: Type
        if root["t"] == "engine":
            t = ("s", "Phaser")
        elif root["t"] == "this":
            t = ("u", (file, root["cls"]))
        else:
            t = self.var(file, root["name"])
            user = self.by_name.get(root["name"], [])
            if t is None and steps and steps[0] == ["n"] and len(user) == 1:
                t, steps = ("u", user[0]), steps[1:]
        last_p = max((i for i, s in enumerate(steps) if s[0] == "p"), default=-1)
        for i, step in enumerate(steps):
            if t is None:
                return None
            if step[0] == "p":
                if chain.get("w") and i == last_p:
                    return None
                t = self.prop(t, step, (file, chain, i) if report else None)
            elif step[0] == "c":
                t = self.call(t)
            else:
                is_class = t[0] == "s" and self.api.static_kind(t[1]) == "c" and self.api.is_class(t[1])
                t = ("i", frozenset({t[1]})) if is_class else None
        return t

    def var(self, file: str, name: str) -> Type:
        values = self.bindings.get(file, {}).get(name)
        if values is None:
            return ("s", "Phaser") if name == "Phaser" else None
        return self.merge(file, values, ("var", file, name))

    def merge(self, file: str, values: list[Any], guard: Any) -> Type:
        """One type for every value a name gets (all the same, or a union of instances), else unknown."""
        if guard in self._memo:
            return self._memo[guard]
        if guard in self._busy:
            return None
        self._busy.add(guard)
        try:
            types = []
            for v in values:
                if v == "N":
                    continue
                t = None if v is None else self.chain(file, v, report=False)
                if t is None:
                    return None
                types.append(t)
        finally:
            self._busy.discard(guard)
        if types and all(t[0] == "i" for t in types):
            merged: Type = ("i", frozenset().union(*(t[1] for t in types)))
        else:
            merged = types[0] if types and all(t == types[0] for t in types) else None
        self._memo[guard] = merged
        return merged

    # --- steps ---
    def prop(self, t: tuple[Any, ...], step: list[Any], where: tuple[str, dict[str, Any], int] | None,
             own: tuple[str, list[str]] | None = None) -> Type:
        """Type of ``t.<name>``; reports a missing member when `where` is given (`own`: the game's class + names)."""
        name = step[1]
        if name is None or t[0] == "m":
            return None
        if t[0] == "u":
            return self.user_prop(t[1], name, where)
        if t[0] == "s":
            path = f"{t[1]}.{name}"
            kind = self.api.static_kind(path)
            self.checked += where is not None
            if kind == "v":
                return self.inst(self.api.static_types(path))
            if kind:
                return ("s", path)
            if self.api.static_kind(t[1]) in ("n", "c") and not self._excused(name) \
                    and not self.api.static_builtin(t[1], name):
                self._report(where, t[1], name, self.api.static_children(t[1]), t[1])
            return None
        classes = t[1]
        self.checked += where is not None
        entries = self.api.member(classes, name)
        if not entries:
            if not self.api.plausible(classes, name) and not self._excused(name):
                owner = "|".join(sorted(classes))
                label, extra = (f"{own[0]} (extends {owner})", own[1]) if own else (owner, [])
                self._report(where, label, name, self.api.members_of(classes) + extra, owner)
            return None
        if all(k == "f" for k, _ in entries):
            return ("m", classes, name, t)
        return self.inst([ty for _, types in entries for ty in types] if all(ty for _, ty in entries) else [])

    def call(self, t: Type) -> Type:
        if t is None:
            return None
        if t[0] == "s" and self.api.static_kind(t[1]) == "f":
            return self.inst(self.api.static_types(t[1]))
        if t[0] == "m":
            entries = self.api.member(t[1], t[2])
            returns = [ty for _, types in entries for ty in types]
            if not returns or not all(types for _, types in entries):
                return None
            if "this" in returns:
                return t[3] if all(r == "this" for r in returns) else None
            return self.inst(returns)
        return None

    def inst(self, names: list[str]) -> Type:
        classes = self.api.class_types(names)
        return ("i", classes) if classes else None

    # --- the game's own classes ---
    def user_prop(self, key: tuple[str, str], name: str, where: Any) -> Type:
        for k in self.user_chain(key):
            if name in self.props.get(k, {}):
                return self.merge(k[0], self.props[k][name], ("prop", k, name))
            if name in self.classes[k]["members"]:
                return None
        base = self.phaser_base(key)
        if not base:
            return None
        chain = self.user_chain(key)
        own = [n for k in chain for n in (*self.classes[k]["members"], *self.props.get(k, {}))]
        return self.prop(("i", frozenset({base})), [None, name], where, (self.classes[key]["name"] or "class", own))

    def user_chain(self, key: tuple[str, str]) -> list[tuple[str, str]]:
        chain = [key]
        while True:
            sup = self.classes[chain[-1]].get("super")
            if not sup or sup["steps"] or sup["root"].get("t") != "id":
                return chain
            found = self.by_name.get(sup["root"]["name"], [])
            if len(found) != 1 or found[0] in chain or self.var(chain[-1][0], sup["root"]["name"]) is not None:
                return chain
            chain.append(found[0])

    def phaser_base(self, key: tuple[str, str]) -> str | None:
        last = self.user_chain(key)[-1]
        if last[1] == "scenefn":
            return "Phaser.Scene" if last[0] in self.phaser_files else None
        sup = self.classes[last].get("super")
        t = self.chain(last[0], sup, report=False) if sup else None
        if t and t[0] == "s" and self.api.static_kind(t[1]) == "c" and self.api.is_class(t[1]):
            path: str = t[1]
            return path
        return None

    # --- findings ---
    def _excused(self, name: str) -> bool:
        return name in self.defined or name.startswith("_")

    def _report(self, where: Any, owner: str, name: str, candidates: list[str], phaser_owner: str) -> None:
        if where is None:
            return
        file, chain, idx = where
        step = chain["steps"][idx]
        expr = _render(chain, idx)
        hint = self.api.suggest(name, candidates)
        # the chain ends at this property: a read of a value the engine does not define (undefined, harmless when
        # the game falls back), not a call of a missing method nor a step through one (those throw)
        read = idx == len(chain["steps"]) - 1
        msg = f"{file}:{step[2]}:{step[3]}: `{expr}` — {owner} has no member '{name}' in Phaser {self.api.version}"
        msg += " (a read of an undefined value, not a call)" if read else ""
        msg += f"; did you mean '{hint}'?" if hint else ""
        note = changelog_note(str(self.api.node_modules / "phaser" / "changelog"), phaser_owner.split("|")[0], name)
        msg += f" (Phaser changelog: {note})" if note else ""
        self.findings.append((file, step[2], step[3], msg, "l1.engine_calls.undefined_read" if read else None))


def _group(bindings: list[list[Any]]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for name, value in bindings:
        out.setdefault(name, []).append(value)
    return out


def _render(chain: dict[str, Any], upto: int) -> str:
    root = chain["root"]
    text: str = {"engine": "Phaser", "this": "this"}.get(root["t"], root.get("name", "?"))
    for step in chain["steps"][: upto + 1]:
        text += f".{step[1]}" if step[0] == "p" else "(…)" if step[0] == "c" else ""
        if step[0] == "n":
            text = f"new {text}(…)"
    return text


@cache
def changelog_note(changelog_dir: str, owner: str, name: str) -> str | None:
    """A sentence of Phaser's shipped changelog saying `name` (of `owner`) was removed, renamed or deprecated.

    Strict on purpose: the name as written (first letter may be capitalised, plural ok), followed by the verb in the
    same sentence, and the owner's short name (``TweenManager``) in that sentence or in the changelog file's name.
    """
    short = owner.rsplit(".", 1)[-1]
    if len(name) < 4 or not short:
        return None
    word = re.compile(rf"\b[{re.escape(name[0].lower())}{re.escape(name[0].upper())}]{re.escape(name[1:])}s?\b")
    owner_word = re.compile(rf"\b{re.escape(short)}\b")
    files = sorted(Path(changelog_dir).rglob("*.md"), key=lambda p: [int(x) for x in re.findall(r"\d+", p.parent.name)],
                   reverse=True)
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        if name[1:] not in text:
            continue
        for line in text.splitlines():
            for sentence in re.split(r"(?<=[.!?])\s+", line.strip(" *-\t")):
                hit = word.search(sentence)
                if not hit or not (owner_word.search(sentence) or owner_word.search(path.stem)):
                    continue
                if re.search(r"\b(removed|renamed|deprecated)\b", sentence[hit.end():], re.I):
                    return f"v{path.parent.name}: {sentence[:220]}{'…' if len(sentence) > 220 else ''}"
    return None


def check_engine_calls(src_files: dict[str, str], api: PhaserApi, scan: Scan | None = None,
                       shipped: tuple[str, str] | None = None, unverified: bool = False) -> ValidationResult:
    """Check every resolvable Phaser reference in ``src_files`` against ``api`` (scan: the scanner's facts, if run).

    ``shipped``: the (version, evidence) of the Phaser the game ships (`engine_version.shipped_phaser`);
    ``unverified``: that version's type data could not be had, so ``api`` is another version's — every missing
    member is then tagged ``l1.engine_calls.version_unverified`` (hot policy ``verdicts:`` decides) and a finding
    says so: never a failure the game's own engine would not have."""
    started = time.monotonic()
    if scan is None:
        scan = scan_sources(src_files, api.node_modules)
    resolver = Resolver(api, scan)
    warnings: list[Finding] = []
    for file in sorted(scan):
        facts = scan[file]
        if facts.get("error"):
            err = facts["error"]
            where = f"{file}:{err.get('line')}:{err.get('col')}"
            warnings.append(Finding(severity="warning", message=f"{where}: not parsed ({err['message']})"))
            continue
        for chain in facts.get("chains", []):
            resolver.chain(file, chain, report=True)
    seen: set[tuple[str, int, int]] = set()
    errors = []
    unverified_rule = "l1.engine_calls.version_unverified" if unverified else None
    for file, line, col, msg, rule in sorted(resolver.findings, key=lambda f: f[:4]):
        if (file, line, col) not in seen:
            seen.add((file, line, col))
            errors.append(Finding(message=msg, rule=unverified_rule or rule))
    if unverified and shipped:
        warnings.insert(0, Finding(severity="warning", rule=unverified_rule,
                                   message=f"engine version {shipped[0]} unverified: {shipped[1]}, but its type data "
                                           f"could not be fetched; checked against Phaser {api.version} instead"))
    passed = not errors
    summary = (f"{resolver.checked} Phaser references checked against Phaser {api.version}"
               + (f" (the game ships it: {shipped[1]})" if shipped and not unverified else "")
               + (f" (the game ships {shipped[0]}: unverified)" if shipped and unverified else "") + ": "
               + ("all exist" if passed else f"{len(errors)} do not exist"))
    return ValidationResult(
        id=GATE, layer="L1", passed=passed, summary=summary, findings=errors[:MAX_FINDINGS] + warnings,
        evidence={"phaser": api.version, "shipped": {"version": shipped[0], "evidence": shipped[1],
                                                     "verified": not unverified} if shipped else None,
                  "files": len(scan), "checked": resolver.checked, "missing": len(errors),
                  "unparsed": [f for f in scan if scan[f].get("error")], "index": str(api.cache_path or ""),
                  "index_build_ms": api.build_ms, "index_load_ms": api.load_ms},
        duration_ms=int((time.monotonic() - started) * 1000),
    )

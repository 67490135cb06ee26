"""``l1.engine_calls`` for PixiJS games: every PixiJS name a game uses exists in the PixiJS it runs on.

Read from the scanner's facts (core's acorn scanner: imports from ``pixi.js`` are chains rooted at
``{t: "engine"}``), resolved against `api.PixiApi`:

* a name imported from the module (``import { Graphics } from 'pixi.js'``) or read off a namespace import
  (``PIXI.Loader``) must be one of its exports — v7's ``BaseTexture``, ``utils`` or ``settings`` are not in v8;
* ``Export.member`` (``Sprite.from``, ``Assets.load``) must be a member of that export's class;
* on an instance the game made (``const g = new Graphics()``, ``this.app = new Application()``, a class of the game
  that extends one), a member read or called must exist on the class, its ancestors or its mixins, unless the game
  defines a member of that name itself; a property a method or a property returns is followed when its declared
  type is an exported class (``app.stage.addChild``). A write (``sprite.foo = 1``) is the game's own field.

A missing name is an error; a deprecated one (v8 keeps ``beginFill``/``drawRect``, ``app.view`` with a warning) is
a warning finding.
"""

from __future__ import annotations

import difflib
import re
import time
from dataclasses import dataclass
from typing import Any

from tier2.validators.base import Finding, ValidationResult

from .api import PixiApi

__all__ = ["GATE", "check_engine_calls"]

GATE = "l1.engine_calls"
MAX_FINDINGS = 40


@dataclass(frozen=True)
class _T:
    """What an expression is: the module namespace, an export (a class itself), or an instance of a class."""

    kind: str  # "ns" | "export" | "inst"
    name: str = ""
    #: ``this`` in a class of the game extending an engine class
    lenient: bool = False


_NS = _T("ns")


class _Resolver:
    def __init__(self, api: PixiApi, scan: dict[str, dict[str, Any]]) -> None:
        self.api = api
        self.defined: set[str] = set()  # names the game defines anywhere: its own members, never flagged
        for facts in scan.values():
            self.defined.update(facts.get("defined") or [])
        self.errors: list[tuple[str, int, int, str]] = []
        self.warnings: list[tuple[str, int, int, str]] = []
        self.checked = 0

    def file(self, path: str, facts: dict[str, Any]) -> None:
        """Check every chain of one file: its names' types first (bindings refer to each other), then fields."""
        values: dict[str, list[Any]] = {}
        for name, value in facts.get("bindings") or []:
            values.setdefault(name, []).append(value)
        names: dict[str, _T | None] = {}
        classes: dict[str, _T | None] = {}
        fields: dict[tuple[str, str], _T | None] = {}
        for _ in range(3):  # const app = new Application(); const stage = app.stage; class P extends Container
            for name, vals in values.items():
                found = {self._walk(v, names, classes, fields, None) if isinstance(v, dict) else None for v in vals}
                names[name] = found.pop() if len(found) == 1 else None
            for cls in facts.get("classes") or []:
                base = self._walk(cls["super"], names, classes, fields, None) if cls.get("super") else None
                classes[cls["id"]] = _T("inst", base.name, lenient=True) if base and base.kind == "export" else None
            props: dict[tuple[str, str], set[_T | None]] = {}
            for cls_id, name, value in facts.get("props") or []:
                t = self._walk(value, names, classes, fields, None) if isinstance(value, dict) else None
                props.setdefault((cls_id, name), set()).add(t)
            fields = {k: next(iter(v)) if len(v) == 1 else None for k, v in props.items()}
        for chain in facts.get("chains") or []:
            self._walk(chain, names, classes, fields, path)

    def _walk(self, chain: dict[str, Any], names: dict[str, _T | None], classes: dict[str, _T | None],
              fields: dict[tuple[str, str], _T | None], file: str | None) -> _T | None:
        """The type of a chain (None: unknown); ``file`` set: report what does not exist on the way."""
        root = chain.get("root") or {}
        steps = list(chain.get("steps") or [])
        t: _T | None = None
        if root.get("t") == "engine":
            t = _NS
        elif root.get("t") == "id":
            t = names.get(str(root.get("name")))
        elif root.get("t") == "this":
            cls = str(root.get("cls"))
            t = classes.get(cls)
            if t is None and steps and steps[0][0] == "p" and steps[0][1] is not None:
                t = fields.get((cls, str(steps[0][1])))  # this.app of a plain class holding an Application
                steps = steps[1:]
        method = False
        for i, step in enumerate(steps):
            if t is None:
                return None
            if step[0] == "p":
                if step[1] is None:
                    return None
                written = bool(chain.get("w")) and i == len(steps) - 1
                t, method = self._member(t, str(step[1]), int(step[2]), int(step[3]), file, written)
            elif step[0] == "n":
                t = _T("inst", t.name) if t.kind == "export" and self.api.exports.get(t.name) == "class" else None
            else:  # a call: a method's declared return type, else unknown
                t = t if method else None
                method = False
        return t

    def _member(self, t: _T, name: str, line: int, col: int, file: str | None,
                written: bool) -> tuple[_T | None, bool]:
        api = self.api
        report = file is not None and not written
        if t.kind == "ns":
            if report:
                self.checked += 1
                if name not in api.exports:
                    self.errors.append((str(file), line, col, f"{name} is not exported by pixi.js {api.version}"
                                        + _suggest(name, api.exports)))
                elif name in api.deprecated_exports:
                    self.warnings.append((str(file), line, col, f"{name} is deprecated in PixiJS {api.version}"))
            return (_T("export", name) if name in api.exports else None), False
        if api.exports.get(t.name) not in ("class", "interface"):
            return None, False  # a function or a constant: nothing known of its members
        member = api.members(t.name).get(name)
        if report:
            self.checked += 1
            sep = "." if t.kind == "export" else "#"
            if member is None and name not in self.defined:
                self.errors.append((str(file), line, col, f"{t.name}{sep}{name} does not exist in PixiJS "
                                    f"{api.version}" + _suggest(name, api.members(t.name))))
            elif member is not None and member.deprecated:
                self.warnings.append((str(file), line, col, f"{t.name}{sep}{name} is deprecated in PixiJS "
                                      f"{api.version}"))
        if member is None:
            return None, False
        return _type_of(member.type, t, api), member.kind == "method"


def _type_of(declared: str, t: _T, api: PixiApi) -> _T | None:
    """The declared type of a member as something to follow: an exported class (generics stripped) or ``this``."""
    text = declared.strip()
    if text in ("this",):
        return t
    m = re.fullmatch(r"([A-Z][\w$]*)(?:<.*>)?", text)
    if m and api.exports.get(m.group(1)) in ("class", "interface"):
        return _T("inst", m.group(1))
    return None


def _suggest(name: str, known: Any) -> str:
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.8)
    return f" (did you mean {close[0]}?)" if close else ""


def check_engine_calls(src: dict[str, str], api: PixiApi, scan: dict[str, dict[str, Any]],
                       shipped: str | None = None) -> ValidationResult:
    """``l1.engine_calls`` over the scanner's facts; ``shipped``: the PixiJS version a game nobody here wrote ships
    when it is not the pinned one (its calls are then not checked: another version's API, a warning says so)."""
    started = time.monotonic()
    resolver = _Resolver(api, scan)
    warnings: list[Finding] = []
    if shipped is not None:
        return ValidationResult(
            id=GATE, layer="L1", passed=True,
            summary=f"the game ships PixiJS {shipped}; its calls are not checked against PixiJS {api.version}",
            findings=[Finding(severity="warning", rule="l1.engine_calls.version_unverified",
                              message=f"engine version {shipped} unverified: only PixiJS {api.version}'s API is "
                                      "known here")],
            evidence={"engine": api.version, "shipped": shipped, "files": len(scan), "checked": 0},
            duration_ms=int((time.monotonic() - started) * 1000))
    for path in sorted(scan):
        facts = scan[path]
        if facts.get("error"):
            err = facts["error"]
            warnings.append(Finding(severity="warning",
                                    message=f"{path}:{err.get('line')}:{err.get('col')}: not parsed "
                                            f"({err['message']})"))
            continue
        resolver.file(path, facts)
    seen: set[tuple[str, int, int]] = set()
    errors: list[Finding] = []
    for path, line, col, msg in sorted(resolver.errors):
        if (path, line, col) not in seen:
            seen.add((path, line, col))
            errors.append(Finding(message=f"{path}:{line}:{col}: {msg}"))
    for path, line, col, msg in sorted(set(resolver.warnings))[:MAX_FINDINGS]:
        warnings.append(Finding(severity="warning", message=f"{path}:{line}:{col}: {msg}"))
    passed = not errors
    return ValidationResult(
        id=GATE, layer="L1", passed=passed,
        summary=(f"{resolver.checked} PixiJS references checked against PixiJS {api.version}: "
                 + ("all exist" if passed else f"{len(errors)} do not exist")),
        findings=errors[:MAX_FINDINGS] + warnings,
        evidence={"engine": api.version, "files": len(scan), "checked": resolver.checked, "missing": len(errors),
                  "unparsed": [f for f in scan if scan[f].get("error")], "index_build_ms": api.build_ms},
        duration_ms=int((time.monotonic() - started) * 1000),
    )

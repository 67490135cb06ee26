"""Phaser's API from its TypeScript declarations, for versions that ship no JSDoc JSON.

Phaser packages before 3.60 ship ``types/phaser.d.ts`` but not ``types/phaser.json`` (the doclet dump
`phaser_api.build_index` reads). The declarations are generated from the same doclets, one member per line, so a
line reader recovers what the index needs — namespaces, classes and interfaces (``extends``/``implements`` are
both augments: Phaser's mixins are interfaces), their instance and static members with their types, namespace
functions, variables and enum members — as doclets of the same shape (`doclets_from_dts`).
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["doclets_from_dts"]

_BLOCK = re.compile(r"^(?:export\s+)?(?:declare\s+)?(?:abstract\s+)?(namespace|class|interface|enum)\s+([\w$]+)"
                    r"(?:<[^{]*?>)?\s*(?:extends\s+(.*?))?\s*(?:implements\s+(.*?))?\s*\{\s*$")
_MEMBER = re.compile(r"^(?:(?:static|readonly|protected|private|public|abstract)\s+)*([\w$]+)\??\s*(<[^(]*>)?\s*"
                     r"([(:])")
_STATIC = re.compile(r"^(?:(?:protected|private|public|abstract|readonly)\s+)*static\s")
_NS_FUNCTION = re.compile(r"^function\s+([\w$]+)\s*(?:<[^(]*>)?\s*\(")
_NS_VALUE = re.compile(r"^(?:var|let|const)\s+([\w$]+)\s*:\s*(.+?);\s*$")
_ENUM_MEMBER = re.compile(r"^([\w$]+)\s*(?:=\s*[^,]+)?,?\s*$")
_GENERIC = re.compile(r"<.*>$")


def _names(text: str) -> list[str]:
    """Type names of a declaration's type (top-level ``|`` alternatives, generics dropped)."""
    out, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "<({[" and 1 or 0
        depth -= ch in ">)}]" and 1 or 0
        if ch == "|" and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [_GENERIC.sub("", n.strip()) for n in out if n.strip()]


def _returns(line: str, start: int) -> list[str]:
    """The return type names of a call signature whose parameter list opens at ``line[start]``."""
    depth = 0
    for i in range(start, len(line)):
        depth += {"(": 1, ")": -1}.get(line[i], 0)
        if depth == 0:
            rest = line[i + 1:].strip()
            return _names(rest[1:].rstrip(";").strip()) if rest.startswith(":") else []
    return []


def _split(text: str | None) -> list[str]:
    return [_GENERIC.sub("", t.strip()) for t in re.split(r",(?![^<]*>)", text or "") if t.strip()]


def doclets_from_dts(text: str) -> list[dict[str, Any]]:
    """Doclets (``kind``, ``longname``, ``memberof``, ``scope``, ``augments``, ``type``, ``returns``) for every
    declaration of ``phaser.d.ts`` under ``Phaser``; comments skipped, unknown lines ignored."""
    doclets: list[dict[str, Any]] = []
    stack: list[tuple[str, str]] = []  # (kind, longname); kind "other" for braces that open no declaration
    comment = False
    for raw in text.splitlines():
        line = raw.strip()
        if comment or line.startswith("/*"):
            comment = "*/" not in line
            continue
        if not line or line.startswith(("//", "*")):
            continue
        top_kind, top = stack[-1] if stack else ("", "")
        block = _BLOCK.match(line)
        if block and top_kind in ("", "namespace"):
            kind, name = block.group(1), block.group(2)
            longname = f"{top}.{name}" if top else name
            if kind == "class":
                doclets.append({"kind": "class", "longname": longname, "name": name, "scope": "static",
                                "memberof": top or None, "augments": _split(block.group(3)) + _split(block.group(4))})
            elif kind == "interface":
                doclets.append({"kind": "typedef", "longname": longname, "name": name, "scope": "static",
                                "augments": _split(block.group(3))})
            else:  # namespace, enum
                doclets.append({"kind": "namespace", "longname": longname, "name": name, "scope": "static",
                                "memberof": top or None})
            stack.append((kind, longname))
            continue
        if line.startswith("}"):
            if stack:
                stack.pop()
            continue
        if top_kind in ("class", "interface"):
            member = _MEMBER.match(line)
            if member and member.group(1) != "constructor":
                name, static = member.group(1), bool(_STATIC.match(line))
                base = {"name": name, "memberof": top, "scope": "static" if static else "instance",
                        "longname": f"{top}{'.' if static else '#'}{name}"}
                if member.group(3) == "(":
                    doclets.append({**base, "kind": "function",
                                    "returns": [{"type": {"names": _returns(line, member.end() - 1)}}]})
                else:
                    doclets.append({**base, "kind": "member",
                                    "type": {"names": _names(line[member.end():].rstrip(";"))}})
        elif top_kind == "namespace":
            fn, value = _NS_FUNCTION.match(line), _NS_VALUE.match(line)
            if fn:
                doclets.append({"kind": "function", "longname": f"{top}.{fn.group(1)}", "name": fn.group(1),
                                "scope": "static", "memberof": top,
                                "returns": [{"type": {"names": _returns(line, fn.end() - 1)}}]})
            elif value:
                doclets.append({"kind": "member", "longname": f"{top}.{value.group(1)}", "name": value.group(1),
                                "scope": "static", "memberof": top, "type": {"names": _names(value.group(2))}})
        elif top_kind == "enum" and (em := _ENUM_MEMBER.match(line)):
            doclets.append({"kind": "member", "longname": f"{top}.{em.group(1)}", "name": em.group(1),
                            "scope": "static", "memberof": top, "type": {"names": ["number"]}})
        opened = line.count("{") - line.count("}")  # a type literal spanning lines opens no declaration
        for _ in range(max(0, opened)):
            stack.append(("other", top))
        for _ in range(max(0, -opened)):
            if stack:
                stack.pop()
    return doclets

"""Sections: the units the docs index ranks — one per API declaration of a TypeScript declaration file (namespaces,
classes, interfaces, members, functions, constants, type aliases) and one per heading of a markdown guide.

`parse_dts` reads a generated ``.d.ts`` (one declaration per line, a JSDoc block before it, scopes opened by lines
ending in ``{`` — the shape TypeScript declaration generators write) without a TypeScript toolchain. Ids are stable
and engine-agnostic: ``A.B.Class`` (class), ``A.B.Class#member`` (instance member), ``A.B.Class.member`` (static
member), ``A.B.fn`` (namespace function or constant). Overloads of one id become one section with every signature.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field, replace
from typing import Any

__all__ = ["Section", "export_renames", "parse_dts", "split_markdown"]

_SCOPE = re.compile(r"^(?:declare\s+)?(?:abstract\s+)?(?P<kind>namespace|class|interface|enum)\s+(?P<name>[\w$]+)"
                    r"(?P<rest>.*)\{\s*$")
_TYPE_OPEN = re.compile(r"^(?:declare\s+)?type\s+(?P<name>[\w$]+)(?:<[^=]*>)?\s*=\s*\{\s*$")
_TYPE_LINE = re.compile(r"^(?:declare\s+)?type\s+(?P<name>[\w$]+)(?:<[^=]*>)?\s*=\s*(?P<type>.+);\s*$")
_FUNCTION = re.compile(r"^(?:declare\s+)?function\s+(?P<name>[\w$]+)(?P<rest>.*);\s*$")
_VALUE = re.compile(r"^(?:declare\s+)?(?:const|var|let)\s+(?P<name>[\w$]+)\s*(?::\s*(?P<type>.+?)|=\s*(?P<init>.+?))"
                    r";\s*$")
_MEMBER = re.compile(r"^(?P<mods>(?:(?:static|readonly|protected|private|public|abstract|get|set)\s+)*)"
                     r"(?P<name>[\w$]+|\[[^\]]+\])(?P<opt>\??)(?P<rest>\s*[:(<].*);\s*$")
_EXTENDS = re.compile(r"\bextends\s+([\w$.]+)")
_DEPRECATED = re.compile(r"@deprecated|\*\*DEPRECATED\*\*|^DEPRECATED\b", re.I | re.M)
_LINK = re.compile(r"\{@link\s+([^}\s]+)(?:\s+([^}]*))?\}")
_HEADING = re.compile(r"^(#{1,4})\s+(.+?)\s*#*\s*$")


@dataclass(frozen=True)
class Section:
    """One retrievable unit. ``type``: a property's declared type or a method's return type (for following an
    expression like ``a.b().c``); ``extends``: a class's base class."""

    id: str
    kind: str
    name: str
    owner: str
    signature: str
    doc: str
    source: str
    deprecated: bool = False
    type: str = ""
    extends: str = ""
    params: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["params"] = list(self.params)
        optional = ("deprecated", "type", "extends", "params")
        return {k: v for k, v in data.items() if k not in optional or v not in ("", False, [])}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Section:
        return cls(**{**data, "params": tuple(data.get("params", ()))})

    def short_doc(self, limit: int = 320) -> str:
        """The first paragraph of the doc, at most ``limit`` characters."""
        para = self.doc.strip().split("\n\n", 1)[0].replace("\n", " ").strip()
        return para if len(para) <= limit else para[: limit - 1].rstrip() + "…"


def _comment_text(lines: list[str]) -> tuple[str, list[str]]:
    """A JSDoc block's prose and its ``@param`` lines (``name — text``)."""
    prose: list[str] = []
    params: list[str] = []
    for raw in lines:
        line = raw.strip()
        line = line[3:] if line.startswith("/**") else line
        line = line[:-2] if line.endswith("*/") else line
        line = re.sub(r"^\*\s?", "", line.strip()).rstrip()
        if line.startswith("@param"):
            name, _, text = line[len("@param"):].strip().partition(" ")
            params.append(f"{name} — {text.strip()}" if text else name)
        elif line.startswith("@"):
            prose.append(line)
        elif params and line:  # a continuation of the last @param's text
            params[-1] += " " + line
        else:
            prose.append(line)
    text = "\n".join(prose).strip()
    text = _LINK.sub(lambda m: m.group(2) or m.group(1), text)
    return re.sub(r"\n{3,}", "\n\n", text), params


def _type_of(rest: str) -> str:
    """The declared type (``: T``) or, for a method, its return type (after the parameter list)."""
    rest = rest.strip()
    if rest.startswith("<"):  # generic parameters: skip to the matching '>'
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "<"
            depth -= ch == ">"
            if depth == 0:
                rest = rest[i + 1:].strip()
                break
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                rest = rest[i + 1:].strip()
                break
    return rest[1:].strip() if rest.startswith(":") else ""


class _Builder:
    def __init__(self, source: str) -> None:
        self.source = source
        self.sections: dict[str, Section] = {}

    def add(self, sec: Section) -> None:
        old = self.sections.get(sec.id)
        if old is None:
            self.sections[sec.id] = sec
            return
        if sec.kind == "class" and old.kind == "interface":  # declaration merging: the class is the name
            old = self.sections[sec.id] = Section(**{**asdict(old), "kind": "class",
                                                     "extends": sec.extends or old.extends})
        if sec.signature and sec.signature not in old.signature.split("\n"):  # an overload: one section
            sig = f"{old.signature}\n{sec.signature}" if old.signature else sec.signature
            self.sections[sec.id] = Section(**{**asdict(old), "signature": sig, "doc": old.doc or sec.doc,
                                               "params": old.params or sec.params,
                                               # deprecated only when every overload is
                                               "deprecated": old.deprecated and sec.deprecated})


def parse_dts(text: str, source: str = "index.d.ts") -> list[Section]:
    """Every declaration of a generated ``.d.ts`` as a section, sorted by id (see the module doc)."""
    out = _Builder(source)
    stack: list[tuple[str, str]] = []  # (kind, full id) of open scopes; kind "block" for anything else
    comment: list[str] = []
    in_comment = False
    pending: list[str] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if in_comment or line.startswith("/**"):
            comment.append(line)
            in_comment = not line.endswith("*/")
            if not in_comment:
                pending, comment = comment, []
            continue
        if not line or line.startswith("//"):
            continue
        line = line.removeprefix("export ")  # a bundled module's declarations (`export declare class …`)
        doc, params = _comment_text(pending) if pending else ("", [])
        pending = []
        where = f"{source}:{n}"
        deprecated = bool(_DEPRECATED.search(doc))
        owner_kind, owner = stack[-1] if stack else ("namespace", "")
        net = line.count("{") - line.count("}")  # type literals open and close mid-line (`}) => void;`, `} & {`)
        if net < 0 or line in ("}", "};"):
            for _ in range(max(1, -net)):
                if stack:
                    stack.pop()
            continue
        if m := _SCOPE.match(line):
            kind, name = m["kind"], m["name"]
            full = f"{owner}.{name}" if owner else name
            bare = m["rest"]
            while "<" in bare and (less := re.sub(r"<[^<>]*>", "", bare)) != bare:  # generics' `extends` aside
                bare = less
            ext = _EXTENDS.search(bare)
            sig = f"{kind} {full}{m['rest'].split(' implements ')[0].rstrip()}".strip()
            out.add(Section(full, kind, name, owner, sig if kind != "namespace" else "", doc, where, deprecated,
                            extends=ext.group(1) if ext and kind in ("class", "interface") else ""))
            stack.append((kind, full))
            continue
        if m := _TYPE_OPEN.match(line):
            full = f"{owner}.{m['name']}" if owner else m["name"]
            out.add(Section(full, "type", m["name"], owner, f"type {full} = {{…}}", doc, where, deprecated))
            stack.append(("type", full))
            continue
        if line.endswith("{") or net > 0:
            stack.extend([("block", owner)] * net)
            continue
        if owner_kind in ("namespace", "") and (m := _FUNCTION.match(line) or _VALUE.match(line)):
            is_fn = line.lstrip().startswith(("function", "declare function"))
            full = f"{owner}.{m['name']}" if owner else m["name"]
            sig = line.rstrip(";").removeprefix("declare ")
            rest = m.groupdict().get("rest") or ""
            out.add(Section(full, "function" if is_fn else "constant", m["name"], owner, sig, doc, where, deprecated,
                            type=_type_of(rest) if is_fn else (m["type"] or ""), params=tuple(params)))
            continue
        if owner_kind in ("namespace", "") and (m := _TYPE_LINE.match(line)):
            full = f"{owner}.{m['name']}" if owner else m["name"]
            out.add(Section(full, "type", m["name"], owner, line.rstrip(";").removeprefix("declare "), doc, where,
                            deprecated, type=m["type"]))
            continue
        if owner_kind == "enum":
            name = line.rstrip(",").split("=")[0].strip()
            if re.fullmatch(r"[\w$]+", name):
                out.add(Section(f"{owner}.{name}", "constant", name, owner, f"{owner}.{name}", doc, where, deprecated))
            continue
        if owner_kind in ("class", "interface", "type") and (m := _MEMBER.match(line)):
            name, mods = m["name"], m["mods"].split()
            if name.startswith("["):
                continue
            if name == "constructor":
                cls = out.sections.get(owner)
                if cls is not None:
                    out.sections[owner] = Section(**{**asdict(cls), "signature": f"{cls.signature}\nnew {owner}"
                                                     f"{m['rest'].strip()}", "params": tuple(params),
                                                     "doc": cls.doc or doc})
                continue
            rest = m["rest"].strip()
            accessor = "get" in mods or "set" in mods  # `get canvas(): HTMLCanvasElement;` is a property
            is_method = rest.startswith(("(", "<")) and not accessor
            static = "static" in mods or owner_kind == "type"
            full = f"{owner}.{name}" if static else f"{owner}#{name}"
            if "set" in mods and full in out.sections:
                continue
            kind = "method" if is_method else "property"
            sig = f"{' '.join(mods) + ' ' if mods else ''}{name}{m['opt']}{rest}"
            out.add(Section(full, kind, name, owner, sig, doc, where, deprecated,
                            type=_type_of(rest), params=tuple(params)))
            continue
    return _exported_names([out.sections[k] for k in sorted(out.sections)], text)


#: a bundled declaration file's closing ``export { Text$1 as Text, … };`` (dts-bundle-generator)
_EXPORTS = re.compile(r"^export \{\n(?P<body>.*?)^\};", re.M | re.S)
_RENAME = re.compile(r"^\s*([\w$]+)\s+as\s+([\w$]+),?\s*$", re.M)


def export_renames(text: str) -> dict[str, str]:
    """A bundled declaration file's local name -> the name it is exported as (``Text$1`` -> ``Text``)."""
    renames: dict[str, str] = {}
    for block in _EXPORTS.finditer(text):
        renames |= {a: b for a, b in _RENAME.findall(block["body"])}
    return renames


def _exported_names(sections: list[Section], text: str) -> list[Section]:
    """Sections under the names the module exports: a bundler's ``Text$1`` is ``Text`` to a game (sorted by id)."""
    renames = export_renames(text)
    if not renames:
        return sections

    def named(ident: str) -> str:
        m = re.match(r"[\w$]+", ident)
        return renames.get(m[0], m[0]) + ident[m.end():] if m else ident

    out = [replace(s, id=named(s.id), owner=named(s.owner) if s.owner else s.owner,
                   name=renames.get(s.name, s.name) if not s.owner else s.name,
                   signature=re.sub(r"\b(\w+\$\d+)\b", lambda m: renames.get(m[1], m[1]), s.signature),
                   extends=renames.get(s.extends, s.extends)) for s in sections]
    merged: dict[str, Section] = {}
    for sec in out:  # a renamed class and a same-named interface (a mixin's) are one name: the class wins
        if sec.id not in merged or merged[sec.id].kind != "class":
            merged[sec.id] = sec
    return [merged[k] for k in sorted(merged)]


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "section"


def split_markdown(text: str, source: str) -> list[Section]:
    """A guide split at its headings (``#`` to ``####``, not inside code fences): one section per heading with the
    text below it; the text before the first heading belongs to the title. Ids: ``<source>#<slug>``."""
    sections: list[Section] = []
    title, body, seen = "", [], 0
    fence = False
    front = text.startswith("---\n")
    if front:  # front matter: its description is the preamble
        head, _, text = text[4:].partition("\n---\n")
        body = [ln.split(":", 1)[1].strip() for ln in head.splitlines() if ln.startswith("description:")]

    def flush() -> None:
        nonlocal seen
        content = "\n".join(body).strip()
        if not (title or content):
            return
        slug = _slug(title)
        sid = f"{source}#{slug}"
        seen += 1
        if any(s.id == sid for s in sections):
            sid = f"{sid}-{seen}"
        sections.append(Section(sid, "guide", title or source, source, title, content, source))

    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else _HEADING.match(line)
        if m:
            flush()
            title, body = m.group(2), []
        else:
            body.append(line)
    flush()
    return sections

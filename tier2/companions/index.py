"""A deterministic index of a game project: where things are defined, which data keys each file reads, which scene
keys are registered and started, who imports what, and where an identifier appears.

Built from the files alone (regular expressions over ``src/**/*.js`` and the top-level keys of ``data/*.json``;
no model, no node), so the offline explorer answers from it and the offline reviewer's checks run on it. It is a
reading aid, not a parser: a key read through an unusual alias is missed, never invented.
"""

from __future__ import annotations

import json
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from tier2.hostio import ProjectDir

__all__ = ["Hit", "ProjectIndex", "MAX_FILE_BYTES"]

MAX_FILE_BYTES = 400_000  # a bigger file is not indexed (bundles, minified vendor code)
MAX_FILES = 400
_EXCERPT = 160
_JS_METHODS = frozenset({
    "map", "filter", "forEach", "length", "find", "findIndex", "some", "every", "reduce", "includes", "keys",
    "values", "entries", "hasOwnProperty", "slice", "indexOf", "concat", "join", "push", "sort", "toString",
    "constructor", "prototype", "json"})
_DEFS = [
    re.compile(r"^\s*(?:export\s+)?(?:default\s+)?class\s+([A-Za-z_$][\w$]*)"),
    re.compile(r"^\s*(?:export\s+)?(?:async\s+)?function\s*\*?\s*([A-Za-z_$][\w$]*)\s*\("),
    re.compile(r"^(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*="),  # top level only
    re.compile(r"^\s{2,}(?:async\s+)?(?!if\b|for\b|while\b|switch\b|return\b|catch\b)([A-Za-z_$][\w$]*)\s*\([^)]*\)\s*\{"),
]
# how the packs' templates name a scene (``super('Play')``, ``super({key: 'Play'})``, ``static KEY = 'Play'``) and
# start one (``this.scene.start('Play')``, ``this.game.start('Play')``)
_SCENE_KEY = [re.compile(r"super\(\s*['\"]([\w-]+)['\"]"),
              re.compile(r"super\(\s*\{[^}]*\bkey\s*:\s*['\"]([\w-]+)['\"]"),
              re.compile(r"^\s*static\s+KEY\s*=\s*['\"]([\w-]+)['\"]"),
              re.compile(r"^\s*key\s*:\s*['\"]([\w-]+)['\"]")]
_SCENE_START = re.compile(r"\.(?:scene|game)\.(?:start|launch|switch|run)\(\s*['\"]([\w-]+)['\"]")
_IMPORT = re.compile(r"^\s*import\s+(?:[^'\"]*?\s+from\s+)?['\"]([^'\"]+)['\"]", re.M)
_ALIAS = re.compile(r"(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:[\w$.]*\.)?([A-Za-z_]\w*)\s*;")
_DESTRUCT = re.compile(r"(?:const|let|var)\s*\{([^}]*)\}\s*=")
_WORD = re.compile(r"[A-Za-z_$][\w$]*")


@dataclass(frozen=True)
class Hit:
    """One place in the project: a relative path, a 1-based line and the line's text (trimmed, bounded)."""

    path: str
    line: int
    text: str

    def show(self) -> str:
        return f"{self.path}:{self.line}: {self.text}"


def _excerpt(line: str) -> str:
    text = line.strip()
    return text if len(text) <= _EXCERPT else text[:_EXCERPT - 1] + "…"


@dataclass
class ProjectIndex:
    root: Path
    files: list[str] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)  # src/**/*.js (and index.html): lines
    definitions: dict[str, list[Hit]] = field(default_factory=dict)
    scene_keys: dict[str, Hit] = field(default_factory=dict)
    scene_starts: list[tuple[str, Hit]] = field(default_factory=list)
    #: table name (``economy``) -> its top-level keys; None: the table is not a JSON object (a list) or unreadable
    data_keys: dict[str, frozenset[str] | None] = field(default_factory=dict)
    data_errors: dict[str, str] = field(default_factory=dict)  # data/x.json -> why it does not parse
    #: ``table.key`` -> where it is read (``tables.economy.start_money``, ``eco.start_money`` after an alias)
    data_reads: dict[str, list[Hit]] = field(default_factory=dict)
    imports: dict[str, list[str]] = field(default_factory=dict)  # file -> project files it imports

    # --- building -------------------------------------------------------------------------------------------------

    @classmethod
    def build(cls, root: Path) -> ProjectIndex:
        idx = cls(root=Path(root))
        idx._load_data()
        pdir = ProjectDir(idx.root)  # never through a link (tier2.hostio)
        for rel, st in idx._walk(pdir):
            idx.files.append(rel)
            if rel.endswith(".js") and rel.startswith("src/") and st.st_size <= MAX_FILE_BYTES:
                try:
                    lines = pdir.read_text(rel, max_bytes=MAX_FILE_BYTES, errors="replace").splitlines()
                except OSError:
                    continue
                idx.sources[rel] = lines
                idx._scan(rel, lines)
        return idx

    def _walk(self, pdir: ProjectDir) -> list[tuple[str, os.stat_result]]:
        out: list[tuple[str, os.stat_result]] = []
        for top in ("src", "data", "docs", "design"):
            out += [(rel, st) for rel, st in pdir.walk(top) if "node_modules" not in rel.split("/")]
        index = pdir.lstat("index.html")
        if index is not None and stat.S_ISREG(index.st_mode):
            out.append(("index.html", index))
        return out[:MAX_FILES]

    def _load_data(self) -> None:
        pdir = ProjectDir(self.root)
        for file, st in pdir.listdir("data"):
            if not file.endswith(".json") or not stat.S_ISREG(st.st_mode):
                continue
            name = file.removesuffix(".json")
            try:
                if st.st_size > MAX_FILE_BYTES:
                    raise ValueError(f"over {MAX_FILE_BYTES} bytes")
                value = json.loads(pdir.read_text(f"data/{file}", max_bytes=None))
            except (OSError, ValueError) as exc:
                self.data_errors[f"data/{file}"] = str(exc)[:200]
                self.data_keys[name] = None
                continue
            self.data_keys[name] = frozenset(value) if isinstance(value, dict) else None

    def _scan(self, rel: str, lines: list[str]) -> None:
        text = "\n".join(lines)
        here = PurePosixPath(rel).parent
        for m in _IMPORT.finditer(text):
            spec = m.group(1)
            if spec.startswith("."):
                target = _normalize(here / spec)
                self.imports.setdefault(rel, []).append(target if PurePosixPath(target).suffix else target + ".js")
        aliases: dict[str, str] = {t: t for t in self.data_keys}
        for m in _ALIAS.finditer(text):
            if m.group(2) in self.data_keys:
                aliases[m.group(1)] = m.group(2)
        for m in _DESTRUCT.finditer(text):
            for part in m.group(1).split(","):
                src, _, dst = part.partition(":")
                src, dst = src.strip(), (dst or src).strip()
                if src in self.data_keys and re.fullmatch(r"[A-Za-z_$][\w$]*", dst):
                    aliases[dst] = src
        read: re.Pattern[str] | None = None
        if aliases:
            names = "|".join(re.escape(a) for a in sorted(aliases, key=len, reverse=True))
            read = re.compile(rf"(?<![\w$'\"/])({names})"  # not inside a quoted file name or a longer name
                              rf"(?:\s*\.\s*([A-Za-z_]\w*)|\[\s*['\"](\w+)['\"]\s*\])(?![\w$])(?!\s*\()")
        for no, line in enumerate(lines, 1):
            hit = Hit(rel, no, _excerpt(line))
            for rx in _DEFS:
                d = rx.match(line)
                if d:
                    self.definitions.setdefault(d.group(1), []).append(hit)
                    break
            for i, rx in enumerate(_SCENE_KEY):
                k = rx.search(line)
                if k and (i < 3 or rel.startswith("src/scenes/")):  # a bare ``key:`` only in a scene file
                    self.scene_keys.setdefault(k.group(1), hit)
                    break
            for s in _SCENE_START.finditer(line):
                self.scene_starts.append((s.group(1), hit))
            if read is not None and not line.lstrip().startswith(("import ", "//")):
                for dotted in dict.fromkeys(f"{aliases[r.group(1)]}.{r.group(2) or r.group(3)}"
                                            for r in read.finditer(line)):
                    if dotted.split(".", 1)[1] not in _JS_METHODS:
                        self.data_reads.setdefault(dotted, []).append(hit)

    # --- queries --------------------------------------------------------------------------------------------------

    def occurrences(self, word: str, limit: int = 20) -> list[Hit]:
        """Lines of ``src/`` where ``word`` appears as a whole identifier (or as a quoted string)."""
        rx = re.compile(rf"(?<![\w$]){re.escape(word)}(?![\w$])")
        out: list[Hit] = []
        for rel, lines in self.sources.items():
            for no, line in enumerate(lines, 1):
                if rx.search(line):
                    out.append(Hit(rel, no, _excerpt(line)))
                    if len(out) >= limit:
                        return out
        return out

    def missing_reads(self) -> list[tuple[str, Hit]]:
        """``(table.key, where)`` for every key read from a JSON-object table that the table does not have."""
        out: list[tuple[str, Hit]] = []
        for dotted, hits in sorted(self.data_reads.items()):
            table, key = dotted.split(".", 1)
            keys = self.data_keys.get(table)
            if keys is not None and key not in keys:
                out += [(dotted, h) for h in hits]
        return out

    def unimported(self) -> list[str]:
        """``src/`` modules no other module imports (``src/main.js``, the entry, excepted)."""
        imported = {t for targets in self.imports.values() for t in targets}
        return [f for f in self.sources if f != "src/main.js" and f not in imported]

    def lookup(self, question: str, limit: int = 12) -> dict[str, Any]:
        """What the index knows about the things a question names: data keys (``economy.start_money``), tables,
        identifiers (definitions, then occurrences), scene keys. Deterministic; bounded."""
        found: dict[str, Any] = {}
        for table, key in re.findall(r"\b([a-z_][a-z0-9_]*)\s*[.:/]\s*([A-Za-z_]\w*)", question):
            table = table.removesuffix("_json") if table.endswith("_json") else table
            if table in self.data_keys:
                dotted = f"{table}.{key}"
                keys = self.data_keys[table]
                found[f"data key {dotted}"] = {
                    "read_at": [h.show() for h in self.data_reads.get(dotted, [])[:limit]],
                    "defined_in": f"data/{table}.json" if keys is not None and key in keys else None}
        for name in dict.fromkeys(re.findall(r"[\w./-]+\.js\b", question)):
            for rel in [f for f in self.sources if f == name or f.endswith("/" + name.lstrip("./"))][:3]:
                read = sorted(d for d, hs in self.data_reads.items() if any(h.path == rel for h in hs))
                found[f"file {rel}"] = {"data_keys_read": read[:60], "imports": self.imports.get(rel, []),
                                        "defines": sorted(n for n, hs in self.definitions.items()
                                                          if any(h.path == rel for h in hs))[:40]}
        for word in dict.fromkeys(w for w in _WORD.findall(question) if not w.endswith(".js")):
            if word in self.data_keys and not any(k.startswith(f"data key {word}.") for k in found):
                reads = sorted({h.path for d, hs in self.data_reads.items() if d.startswith(word + ".") for h in hs})
                found[f"data table {word}"] = {"file": f"data/{word}.json", "keys": sorted(self.data_keys[word] or []),
                                               "read_by": reads[:limit]}
            elif word in self.scene_keys:
                found[f"scene {word}"] = {"registered_at": self.scene_keys[word].show(),
                                          "started_at": [h.show() for k, h in self.scene_starts if k == word][:limit]}
            elif word in self.definitions:
                found[f"definition of {word}"] = [h.show() for h in self.definitions[word][:limit]]
            elif len(word) >= 4 and word.lower() not in _STOP:
                named = [n for n in self.definitions if word.lower() in n.lower()][:limit]
                if named:  # ``order`` -> drawOrders, OrderQueue...
                    found[f"definitions named like {word}"] = [h.show() for n in named for h in self.definitions[n][:2]]
                hits = self.occurrences(word, limit)
                if hits:
                    found[f"uses of {word}"] = [h.show() for h in hits]
        return found


_STOP = frozenset({"where", "which", "what", "file", "files", "read", "reads", "data", "drawn", "draw", "does",
                   "defined", "with", "from", "that", "this", "there", "them", "game", "scene", "keys", "used",
                   "call", "calls", "called", "show", "shown", "find", "when", "have", "into"})


def _normalize(path: PurePosixPath) -> str:
    parts: list[str] = []
    for p in path.parts:
        if p == "..":
            if parts:
                parts.pop()
        elif p != ".":
            parts.append(p)
    return "/".join(parts)

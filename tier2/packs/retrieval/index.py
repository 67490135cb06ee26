"""The docs index: BM25 over the sections' tokens (identifiers split at camelCase and dots, identifier fields
weighted up), with typo expansion, pack priors and — first — the sections an error's expression resolves to.

Built from the pack's facet (`tier2.packs.retrieval.facet`), cached on disk as JSON keyed by pack, the type file's
sha256 and the facet+guides' sha256 (a changed type file or guide gives another key: the index is rebuilt), and
kept per process. Deterministic: the same files give the same index and the same answers.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tier2.packs.registry import Pack
from tier2.packs.retrieval.facet import LoadedFacet, load_facet
from tier2.packs.retrieval.resolve import ApiMention, api_mentions, close, segments
from tier2.packs.retrieval.sections import Section, parse_dts, split_markdown

__all__ = ["DocsIndex", "Hit", "INDEX_SCHEMA", "build_index", "load_docs_index", "tokens"]

INDEX_SCHEMA = 2
_K1, _B = 1.2, 0.75
_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|_)|[A-Z]?[a-z]+|[A-Z]+|\d+")
_STOP = frozenset("a an and are as at be by can for from has have how i if in into is it its of on or that the "
                  "this to was what when which will with you your do does not my me use using".split())
_DOC_CHARS = 1500  # of a section's doc text that is indexed


@functools.lru_cache(maxsize=65536)
def _word_tokens(word: str) -> tuple[str, ...]:
    low = word.lower()
    if low in _STOP:
        return ()
    parts = [p.lower() for p in _CAMEL.findall(word.replace("$", "_"))]
    return (low, *(p for p in parts if p not in _STOP and p != low)) if len(parts) > 1 else (low,)


def tokens(text: str) -> list[str]:
    """Lower-case tokens: every identifier whole and, when it has parts, its camelCase/snake parts."""
    out: list[str] = []
    for word in _WORD.findall(text):
        out += _word_tokens(word)
    return out


def _section_terms(sec: Section) -> Counter[str]:
    terms: Counter[str] = Counter()
    for field_text, weight in ((sec.name, 4), (sec.id.replace("#", " "), 2), (sec.signature, 1),
                               (sec.doc[:_DOC_CHARS], 1), (" ".join(sec.params)[:400], 1)):
        for tok in tokens(field_text):
            terms[tok] += weight
    return terms


@dataclass(frozen=True)
class Hit:
    section: Section
    score: float
    why: str  # "resolved" (the error's expression resolves to it), "name" (a member of that name), "text" (BM25)


class DocsIndex:
    def __init__(self, meta: dict[str, Any], sections: list[Section], postings: dict[str, list[int]],
                 lengths: list[int], receivers: dict[str, str], aliases: dict[str, str],
                 priors: dict[str, float], max_query_chars: int = 2000,
                 replaced: dict[str, list[str]] | None = None) -> None:
        self.meta, self.sections, self.postings, self.lengths = meta, sections, postings, lengths
        self.receivers, self.aliases, self.priors = receivers, aliases, priors
        self.max_query_chars = max_query_chars
        self.replaced = replaced or {}
        self.avgdl = sum(lengths) / max(1, len(lengths))
        self.by_id = {s.id: i for i, s in enumerate(sections)}
        self.members: dict[str, dict[str, str]] = {}  # owner id -> member name -> section id
        self.by_name: dict[str, list[str]] = {}  # member or declaration name -> ids
        for s in sections:
            if s.owner and s.kind != "guide":
                self.members.setdefault(s.owner, {})[s.name] = s.id
                self.by_name.setdefault(s.name, []).append(s.id)
        self._prior_keys = sorted(priors, key=len, reverse=True)

    # ------------------------------------------------------------------ lookups
    def get(self, sid: str) -> Section | None:
        i = self.by_id.get(sid)
        return self.sections[i] if i is not None else None

    def prior(self, sid: str) -> float:
        return next((self.priors[k] for k in self._prior_keys if sid.startswith(k)), 1.0)

    def _member(self, owner: str, name: str, fuzzy: bool) -> list[str]:
        """The id of ``owner``'s member ``name`` (own, then up the ``extends`` chain); fuzzy: its closest names."""
        chain, seen = [], set()
        cur: str | None = owner
        while cur and cur not in seen:
            seen.add(cur)
            chain.append(cur)
            sec = self.get(cur)
            cur = sec.extends if sec is not None and sec.extends else None
        for cls in chain:
            if name in self.members.get(cls, {}):
                return [self.members[cls][name]]
        if not fuzzy:
            return []
        names = {n: c for c in reversed(chain) for n in self.members.get(c, {})}
        return [self.members[names[n]][n] for n in close(name, names, n=2)]

    def _type_class(self, type_text: str, current: str) -> str | None:
        """The first declared class/interface/type a type expression names (``this`` → the current one)."""
        words: list[str] = re.findall(r"[\w$.]+", type_text)
        for word in words:
            if word == "this":
                return current
            sec = self.get(word)
            if sec is not None and sec.kind in ("class", "interface", "type"):
                return word
        return None

    def resolve(self, mention: ApiMention) -> list[str]:
        """The ids an error's API mention most likely means, best first (empty: nothing declared fits)."""
        out: list[str] = []

        def add(ids: Iterable[str]) -> None:
            out.extend(i for i in ids if i not in out and self.get(i) is not None)

        if mention.owner and self.get(mention.owner) is not None:
            add(self._last(mention.owner, mention.member, [mention.member]))
        chain = segments(mention.expr) if mention.expr else []
        if mention.kind == "reading":  # ``expr`` is the object that was undefined: its docs, then the member's
            if chain:
                add(self._walk(chain) or self._replaced([n for n, _ in chain]) or self._by_name(chain[-1][0]))
            add(self._replaced([mention.member]) or self._by_name(mention.member))
            return out
        if len(chain) >= 2:
            add(self._walk(chain))
        if not out:  # a bare expression met in any text must name a member exactly: no typo guessing
            add(self._replaced([n for n, _ in chain] or [mention.member])
                or self._by_name(mention.member, fuzzy=mention.kind != "expression"))
        return out

    def _replaced(self, names: list[str], owner: str = "") -> list[str]:
        """What the pack says replaces a gone API: ``Owner#member``, then the longest dotted tail of ``names``."""
        if owner and f"{owner}#{names[-1]}" in self.replaced:
            return list(self.replaced[f"{owner}#{names[-1]}"])
        for i in range(len(names)):
            tail = ".".join(names[i:])
            if tail in self.replaced:
                return list(self.replaced[tail])
        return []

    def _last(self, owner: str, name: str, names: list[str]) -> list[str]:
        """The last name of a chain on its resolved owner: the member, a replacement the pack names, a typo's
        closest members, else the owner itself (the class whose docs say what it has)."""
        return (self._member(owner, name, fuzzy=False) or self._replaced(names, owner)
                or self._member(owner, name, fuzzy=True) or [owner])

    def _by_name(self, name: str, fuzzy: bool = True) -> list[str]:
        ids = self.by_name.get(name) or ([i for n in close(name, self.by_name, n=2, cutoff=0.8)
                                          for i in self.by_name[n]] if fuzzy else [])
        return sorted(ids, key=lambda i: (-self.prior(i), i))

    def _start(self, names: list[str]) -> Iterable[tuple[int, str]]:
        """Where a chain can start: a declared path (``A.B.C``), a receiver at its head, an alias anywhere
        (longest first) — as (index of the next name, class or namespace id)."""
        for j in range(len(names) - 1, 0, -1):
            if self.get(".".join(names[:j])) is not None:
                yield j, ".".join(names[:j])
                break
        if names[0] in self.receivers:
            yield 1, self.receivers[names[0]]
        for i in range(len(names) - 1):
            for j in range(len(names) - 1, i, -1):
                alias = ".".join(names[i:j])
                if alias in self.aliases:
                    yield j, self.aliases[alias]
                    break

    def _walk(self, chain: list[tuple[str, bool]]) -> list[str]:
        names = [n for n, _ in chain]
        for start, cls in self._start(names):
            cur: str | None = cls
            for k in range(start, len(chain)):
                name, called = chain[k]
                last = k == len(chain) - 1
                if cur is None:
                    break
                sec = self.get(cur)
                if sec is not None and sec.kind == "namespace":  # a static path: its declarations by name
                    kids = self.members.get(cur, {})
                    hit = kids.get(name)
                    if hit is None and last:
                        hit = next((kids[n] for n in close(name, kids, n=1)), None)
                    if last:
                        return [hit] if hit else self._replaced(names)
                    cur = hit
                    continue
                if last:
                    return self._last(cur, name, names)
                found = self._member(cur, name, fuzzy=False)
                if not found:
                    cur = None
                    break
                member = self.get(found[0])
                cur = self._type_class(member.type, cur) if member is not None else None
        return []

    # ------------------------------------------------------------------ search
    def _expand(self, toks: list[str]) -> list[str]:
        out = []
        for tok in toks:
            if tok in self.postings or len(tok) < 4:
                out.append(tok)
                continue
            out += close(tok, self.postings, n=2, cutoff=0.82)  # a typo: its closest indexed words
        return out

    def _bm25(self, toks: list[str]) -> dict[int, float]:
        scores: dict[int, float] = {}
        n = len(self.sections)
        for tok in set(toks):
            post = self.postings.get(tok)
            if not post:
                continue
            df = len(post) // 2  # flat: doc, tf, doc, tf...
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            for doc, tf in zip(post[::2], post[1::2], strict=True):
                norm = tf * (_K1 + 1) / (tf + _K1 * (1 - _B + _B * self.lengths[doc] / self.avgdl))
                scores[doc] = scores.get(doc, 0.0) + idf * norm
        return scores

    def search(self, query: str, top_k: int = 3) -> list[Hit]:
        """The ``top_k`` sections for a question or an error text (ties broken by id: deterministic)."""
        query = query[: self.max_query_chars]
        top_k = max(1, min(int(top_k), 20))
        hits: dict[str, Hit] = {}
        mentions = api_mentions(query)
        if not mentions and re.fullmatch(r"\s*[\w$.()…]+\s*", query):  # a bare expression or name
            chain = segments(query)
            if chain:
                mentions = [ApiMention("expression", query.strip(), chain[-1][0])]
        # each mention's answers, interleaved: every mention's best first, then every mention's second...
        for m_rank, mention in enumerate(mentions[:4]):
            why = "resolved" if (mention.owner or len(segments(mention.expr)) >= 2) else "name"
            for rank, sid in enumerate(self.resolve(mention)[:top_k]):
                hits.setdefault(sid, Hit(self.sections[self.by_id[sid]], 1000.0 - 10 * rank - m_rank, why))
        scores = self._bm25(self._expand(tokens(query)))
        ranked = sorted(scores.items(), key=lambda p: (-p[1] * self.prior(self.sections[p[0]].id),
                                                       self.sections[p[0]].id))
        for doc, score in ranked[: top_k * 3]:
            sec = self.sections[doc]
            hits.setdefault(sec.id, Hit(sec, round(score * self.prior(sec.id), 4), "text"))
        return sorted(hits.values(), key=lambda h: (-h.score, h.section.id))[:top_k]

    # ------------------------------------------------------------------ persistence
    def to_json(self) -> dict[str, Any]:
        return {"meta": self.meta, "sections": [s.to_json() for s in self.sections], "postings": self.postings,
                "lengths": self.lengths, "receivers": self.receivers, "aliases": self.aliases,
                "priors": self.priors, "max_query_chars": self.max_query_chars, "replaced": self.replaced}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DocsIndex:
        return cls(data["meta"], [Section.from_json(s) for s in data["sections"]], data["postings"],
                   data["lengths"], data["receivers"], data["aliases"], data["priors"], data["max_query_chars"],
                   data.get("replaced"))


def build_index(facet: LoadedFacet) -> DocsIndex:
    """Parse the type file and the guides into sections and index them (pure given the files)."""
    started = time.perf_counter()
    pack = facet.pack
    types_rel = facet.spec.types
    sections = parse_dts(facet.types_path.read_text(encoding="utf-8"), types_rel.rsplit("/", 1)[-1])
    for guide in facet.guide_files():
        sections += split_markdown(guide.read_text(encoding="utf-8"), facet.guide_name(guide))
    sections.sort(key=lambda s: s.id)
    postings: dict[str, list[int]] = {}
    lengths: list[int] = []
    for i, sec in enumerate(sections):
        terms = _section_terms(sec)
        lengths.append(sum(terms.values()))
        for tok, tf in sorted(terms.items()):
            postings.setdefault(tok, []).extend((i, tf))
    kinds = Counter(s.kind for s in sections)
    meta = {"schema": INDEX_SCHEMA, "pack": pack.ref, "engine": pack.manifest.engine.name,
            "engine_version": facet.engine_version(), "types": types_rel, "types_sha256": facet.types_sha256(),
            "inputs_sha256": facet.inputs_sha256(), "sections": len(sections), "kinds": dict(sorted(kinds.items())),
            "deprecated": sorted(s.id for s in sections if s.deprecated),
            "build_ms": int((time.perf_counter() - started) * 1000)}
    spec = facet.spec
    return DocsIndex(meta, sections, dict(sorted(postings.items())), lengths, dict(spec.receivers),
                     dict(spec.aliases), dict(spec.priors), spec.max_query_chars,
                     {k: list(v) for k, v in spec.replaced.items()})


_MEMO: dict[str, DocsIndex] = {}
_LOCK = threading.Lock()


def cache_path(facet: LoadedFacet, cache_dir: Path) -> Path:
    return cache_dir / (f"{facet.pack.id}-{facet.types_sha256()[:16]}-{facet.inputs_sha256()[:12]}"
                        f"-v{INDEX_SCHEMA}.json")


def load_docs_index(pack: Pack, cache_dir: Path | None = None) -> DocsIndex:
    """The pack's docs index: from this process's memo, else the disk cache, else built (and cached). A cache
    file that does not parse is rebuilt; stale files of the same pack are removed."""
    facet = load_facet(pack)
    path = cache_path(facet, cache_dir or Path(tempfile.gettempdir()) / "tier2-docs-index")
    key = str(path)
    with _LOCK:
        if key in _MEMO:
            return _MEMO[key]
        index: DocsIndex | None = None
        if path.is_file():
            try:
                index = DocsIndex.from_json(json.loads(path.read_text()))
                index.meta["cache"] = "hit"
            except (ValueError, KeyError, TypeError):
                index = None
        if index is None:
            index = build_index(facet)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(index.to_json(), separators=(",", ":")))
            os.replace(tmp, path)
            for old in path.parent.glob(f"{pack.id}-*-v*.json"):
                if old != path:
                    old.unlink(missing_ok=True)
            index.meta["cache"] = "built"
        index.meta["cache_path"] = str(path)
        _MEMO[key] = index
        return index

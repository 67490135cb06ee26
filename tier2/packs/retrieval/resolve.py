"""What an engine error names: API mentions pulled out of error text (browser TypeErrors in V8, Firefox and Safari
wording, the static engine-call gate's findings), and the walk that resolves an expression like
``t.add.text(…).setOrign`` to a declared member through receivers, aliases and declared types.

Pure text handling: the engine knowledge (receivers, aliases, the declarations) comes from the pack's facet and the
index built from its type file.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["ApiMention", "api_mentions", "segments", "close"]

_EXPR = r"[A-Za-z_$][\w$]*(?:\??\.[A-Za-z_$][\w$]*|\((?:[^()]|\([^()]*\))*\)|\[[^\]]*\])*"
_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    # the engine-call gate: "`this.add.sprit` — <Namespace>.GameObjectFactory has no member 'sprit' ..."
    ("no_member", re.compile(r"`(?P<expr>[^`]{1,200})`\s*[—-]+\s*(?P<owner>[\w$.]+) has no member "
                             r"'(?P<member>[\w$]+)'")),
    # Safari: "undefined is not an object (evaluating 'this.player.body.setVelocityX')"
    ("evaluating", re.compile(rf"is not an object \(evaluating '(?P<expr>{_EXPR})'\)")),
    # Firefox: can't access property "setVelocityX", this.player.body is undefined
    ("reading", re.compile(rf"can't access property \"(?P<member>[\w$]+)\",? (?P<expr>{_EXPR}) is (?:undefined|null)")),
    # V8: "this.physics.add.sprit is not a function", "Engine.Physics.Sprit is not a constructor"
    ("not_a_function", re.compile(rf"(?P<expr>{_EXPR}) is not a (?:function|constructor)")),
    # V8: "Cannot read properties of undefined (reading 'setVelocityX')", "... (setting 'x')"
    ("reading", re.compile(r"Cannot (?:read|set) propert(?:y|ies) of (?:undefined|null) \((?:reading|setting) "
                           r"'(?P<member>[\w$]+)'\)")),
    # older V8: "Cannot read property 'setVelocityX' of undefined"
    ("reading", re.compile(r"Cannot (?:read|set) property '(?P<member>[\w$]+)' of (?:undefined|null)")),
    # Firefox: "this.player.body is undefined", ReferenceError: "Engine is not defined"
    ("undefined", re.compile(rf"(?P<expr>{_EXPR}) is (?:undefined|null|not defined)\b")),
)
_NOISE = {"undefined", "null", "object", "this", "window", "document", "e", "t", "i", "n", "s", "r", "o"}


@dataclass(frozen=True)
class ApiMention:
    """An API an error names: the expression as written (may be minified or empty), the member it failed on,
    the owning class when the message says it, and which message form it came from."""

    kind: str
    expr: str
    member: str
    owner: str = ""

    @property
    def text(self) -> str:
        return self.expr or self.member


def segments(expr: str) -> list[tuple[str, bool]]:
    """``t.add.text(…).setOrign`` → ``[("t", False), ("add", False), ("text", True), ("setOrign", False)]``
    (name, called)."""
    # skip what is inside call parentheses and brackets: keep only the top-level chain
    chain: list[tuple[str, bool]] = []
    depth = 0
    for m in re.finditer(r"[A-Za-z_$][\w$]*|[()\[\]]", expr):
        tok = m.group(0)
        if tok in "([":
            if depth == 0 and tok == "(" and chain:
                chain[-1] = (chain[-1][0], True)
            depth += 1
        elif tok in ")]":
            depth = max(0, depth - 1)
        elif depth == 0:
            chain.append((tok, False))
    return chain


def _prefix_of(text: str, member: str) -> str:
    """The expression an error text shows in front of ``.member`` (``this.physics`` for 'world' in
    ``this.physics.world.setBounds()``): the object that was undefined."""
    m = re.search(rf"({_EXPR})\.{re.escape(member)}\b", text)
    return m.group(1) if m else ""


def api_mentions(text: str, limit: int = 8) -> list[ApiMention]:
    """The API mentions of an error text, in order of appearance, without duplicates (at most ``limit``): the
    failing member of each error form, then every other dotted expression the text shows (``map.putTileAt(…)``)."""
    found: list[tuple[int, ApiMention]] = []
    taken: list[tuple[int, int]] = []
    for kind, pattern in _PATTERNS:
        for m in pattern.finditer(text):
            if any(a < m.end() and m.start() < b for a, b in taken):
                continue
            groups = m.groupdict()
            expr = (groups.get("expr") or "").strip()
            chain = segments(expr) if expr else []
            member = groups.get("member") or (chain[-1][0] if chain else "")
            if not member or (member in _NOISE and len(chain) <= 1):
                continue
            if kind == "undefined" and len(chain) > 1:
                member = chain[-1][0]
            if kind == "reading" and not expr:
                expr = _prefix_of(text, member)
            found.append((m.start(), ApiMention(kind, expr, member, groups.get("owner") or "")))
            taken.append((m.start(), m.end()))
    for m in re.finditer(_EXPR, text):
        chain = segments(m.group(0))
        if len(chain) >= 2 and not any(a <= m.start() < b for a, b in taken):
            found.append((m.start(), ApiMention("expression", m.group(0), chain[-1][0])))
    seen: set[tuple[str, str]] = set()
    out: list[ApiMention] = []
    for _, mention in sorted(found, key=lambda p: p[0]):
        key = (mention.expr, mention.member)
        if key not in seen:
            seen.add(key)
            out.append(mention)
    return out[:limit]


def close(name: str, candidates: Iterable[str], n: int = 3, cutoff: float = 0.75,
          key: Callable[[str], str] = str.lower) -> list[str]:
    """Candidates that ``name`` is probably a typo of: an exact case-insensitive match first, then the closest by
    `difflib` ratio (deterministic: ties keep the candidates' sorted order)."""
    pool = sorted(set(candidates))
    lowered = {key(c): c for c in reversed(pool)}
    if key(name) in lowered:
        return [lowered[key(name)]]
    matches = difflib.get_close_matches(key(name), list(lowered), n=n, cutoff=cutoff)
    return [lowered[m] for m in matches]

"""Secrets the service holds (API keys, provider keys, signing secrets) and a redactor that keeps them out of
what tenants and agents see: event summaries, the trajectory's argument summaries, and the environment of the
processes tools start (`tool_env`).

A secret is the value of an environment variable whose name matches one of the security config's
``secrets.env_patterns`` (or is named explicitly, e.g. a model route's ``api_key_env``), plus each piece of it
split at ``,``, ``:``, ``;`` and whitespace (``TIER2_API_KEYS=tenant:key,...`` → every key), when at least 8
characters long.
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Redactor", "MASK", "tool_env"]

MASK: Final = "[redacted]"
_MIN_CHARS: Final = 8
_SPLIT = re.compile(r"[,:;\s]+")


def _secret_names(env: Mapping[str, str], patterns: Iterable[str], names: Iterable[str]) -> set[str]:
    pats = [p.upper() for p in patterns]
    picked = {n for n in env if any(fnmatch.fnmatchcase(n.upper(), p) for p in pats)}
    return picked | {n for n in names if n in env}


@dataclass(frozen=True)
class Redactor:
    """Replaces every known secret value in a text with `MASK` (longest first, so a key is never half-shown)."""

    secrets: tuple[str, ...] = ()
    _rx: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_env(cls, patterns: Iterable[str], names: Iterable[str] = (),
                 env: Mapping[str, str] | None = None) -> Redactor:
        env = os.environ if env is None else env
        values: set[str] = set()
        for name in _secret_names(env, patterns, names):
            raw = env[name].strip()
            values.update(v for v in [raw, *_SPLIT.split(raw)] if len(v) >= _MIN_CHARS)
        ordered = tuple(sorted(values, key=lambda v: (-len(v), v)))
        rx = re.compile("|".join(re.escape(v) for v in ordered)) if ordered else None
        return cls(ordered, rx)

    def scrub(self, text: str) -> str:
        return self._rx.sub(MASK, text) if self._rx is not None and text else text

    def summary(self, text: str, limit: int = 200) -> str:
        """``text`` scrubbed, then cut to ``limit`` characters (scrub first: a cut must not expose a key's
        prefix that no longer matches)."""
        clean = self.scrub(text)
        return clean if len(clean) <= limit else clean[: limit - 1] + "…"


#: Environment variables a tool's child process may inherit (nothing that could hold a secret).
_TOOL_ENV_KEEP: Final = ("PATH", "LANG", "LC_ALL", "TZ")


def tool_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a process a tool starts: no service variables, only locale/PATH and ``extra``."""
    env = {k: os.environ[k] for k in _TOOL_ENV_KEEP if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    return {**env, **(extra or {})}

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
import logging
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

__all__ = ["Redactor", "MASK", "LogRedaction", "install_log_redaction", "redact_credentials", "redact_url",
           "tool_env"]

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


#: a URL's password (``redis://:pw@host``, ``scheme://user:pw@host``, ``...?password=pw``)
_URL_PASSWORD = re.compile(r"(?P<head>\b[a-z][a-z0-9+.-]*://[^:/@\s]*:)[^@/\s]+(?=@)|(?P<q>[?&]password=)[^&\s]+",
                           re.I)
#: tier2's run tokens where they travel in URLs: ``?token=…`` (stream) and ``/play/<token>/`` (play)
_URL_TOKEN = re.compile(r"(?P<head>[?&]token=|/play/)[^&\s/\"']+")


def redact_url(url: str) -> str:
    """``url`` with its password masked (``redis://:[redacted]@127.0.0.1:6379/0``): what logs and messages show."""
    return _URL_PASSWORD.sub(lambda m: (m["head"] or m["q"]) + MASK, url)


def redact_credentials(text: str) -> str:
    """``text`` with URL passwords and tier2's run tokens (stream, play) masked: for log lines."""
    return _URL_TOKEN.sub(lambda m: m["head"] + MASK, redact_url(text))


class LogRedaction(logging.Filter):
    """A logging filter that masks URL passwords and run tokens in a record's message and string arguments (the
    access log's request path among them), leaving the arguments' shape as the formatter expects it."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            record.msg = redact_credentials(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact_credentials(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact_credentials(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return True


_LOG_REDACTION: Final = LogRedaction()
#: loggers that log request lines themselves (a filter on a logger sees only its own records)
_REQUEST_LOGGERS: Final = ("uvicorn.access", "uvicorn.error")


def install_log_redaction() -> None:
    """Mask passwords and run tokens in the request loggers' records and in everything the root logger's handlers
    write (idempotent)."""
    for name in _REQUEST_LOGGERS:
        logging.getLogger(name).addFilter(_LOG_REDACTION)
    for handler in logging.getLogger().handlers:
        handler.addFilter(_LOG_REDACTION)


#: Environment variables a tool's child process may inherit (nothing that could hold a secret).
_TOOL_ENV_KEEP: Final = ("PATH", "LANG", "LC_ALL", "TZ")


def tool_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a process a tool starts: no service variables, only locale/PATH and ``extra``."""
    env = {k: os.environ[k] for k in _TOOL_ENV_KEEP if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    return {**env, **(extra or {})}

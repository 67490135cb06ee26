"""API keys → tenants, from ``TIER2_API_KEYS=tenant:key,tenant2:key2`` (read once at service start)."""

from __future__ import annotations

import hmac
import os
from dataclasses import dataclass

from tier2.errors import BadInput

__all__ = ["ApiKeys", "parse_api_keys"]

_ENV = "TIER2_API_KEYS"


def parse_api_keys(raw: str | None) -> dict[str, str]:
    """``tenant:key,...`` → {key: tenant}; rejects malformed entries and duplicate keys."""
    keys: dict[str, str] = {}
    for part in (raw or "").split(","):
        part = part.strip()
        if not part:
            continue
        tenant, sep, key = part.partition(":")
        if not sep or not tenant.strip() or len(key.strip()) < 8:
            raise BadInput(f"{_ENV}: entries are tenant:key with a key of at least 8 characters (got {part[:12]!r}…)")
        if key.strip() in keys:
            raise BadInput(f"{_ENV}: the same key is given to two tenants")
        keys[key.strip()] = tenant.strip()
    return keys


@dataclass(frozen=True)
class ApiKeys:
    by_key: dict[str, str]

    @classmethod
    def from_env(cls) -> ApiKeys:
        return cls(parse_api_keys(os.environ.get(_ENV)))

    @property
    def enabled(self) -> bool:
        return bool(self.by_key)

    def tenant_for(self, key: str) -> str | None:
        for known, tenant in self.by_key.items():  # constant-time compare against every key
            if hmac.compare_digest(known.encode(), key.encode()):
                return tenant
        return None



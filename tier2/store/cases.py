"""The debug case library's durable half: verified cases (failure signature → fix) per scope in Redis.

A scope is ``engine`` (engine facts: shared by every run and tenant) or ``tenant:<id>`` (a case that carries that
tenant's game content). `tier2.learning` decides what a case is and which scope it goes to; this module only stores,
finds and counts them. A case is written once a gate verified its fix; writing the same signature again keeps the
first fix (and its fixer) and counts one more verification.
"""

from __future__ import annotations

import re
import time
from typing import Literal

import redis.asyncio as aioredis
from pydantic import BaseModel, ConfigDict, Field

from tier2.settings.tenants import LOCAL_TENANT
from tier2.store.keys import SCHEMA_VERSION, Keys
from tier2.store.replies import text

__all__ = ["Case", "CaseCost", "CaseFix", "CaseStore", "COUNTERS", "ENGINE_SCOPE", "tenant_scope"]

ENGINE_SCOPE = "engine"
_TENANT = re.compile(r"^[A-Za-z0-9_.@-]{1,128}$")
Counter = Literal["hits", "offered", "applied", "fixed", "fix_failed"]
COUNTERS: tuple[Counter, ...] = ("hits", "offered", "applied", "fixed", "fix_failed")


def tenant_scope(tenant: str | None) -> str:
    """The scope of a tenant's own cases (``local`` for runs without a tenant, e.g. the CLI)."""
    name = tenant or LOCAL_TENANT
    if not _TENANT.match(name):
        raise ValueError(f"tenant id {name[:40]!r} cannot name a case scope")
    return f"tenant:{name}"


class CaseFix(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: a deterministic fixer from `tier2.learning.fixers` that applies this fix without a model (None: advice only)
    fixer: str | None = None
    #: unified diff of the files the writer changed between the failing and the passing validation
    diff: str = ""
    files: list[str] = Field(default_factory=list)
    #: why: the defect class and its rule (from the defect taxonomy when one matches)
    rule: str = ""


class CaseCost(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: model calls and tokens the fix took when it was found (None: not found by a model, e.g. seeded)
    model_calls: int | None = None
    tokens: int | None = None


class Case(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = SCHEMA_VERSION
    key: str
    engine: str
    gate: str
    stage: str
    shape: str
    scope: str
    fix: CaseFix
    cost: CaseCost = CaseCost()
    #: where it was verified first: ``run:<id>`` or ``seed:<defect>``
    source: str
    defect: str = ""
    verified: int = 1
    recorded_at: float = Field(default_factory=time.time)


class CaseStore:
    def __init__(self, client: aioredis.Redis, keys: Keys | None = None) -> None:
        self.r, self.keys = client, keys or Keys()

    async def put(self, case: Case) -> Case:
        """Store a verified case; an existing case for the signature keeps its fix (its fixer is added when it had
        none) and counts one more verification. Returns the stored case."""
        key = self.keys.cases(case.scope)
        raw = await self.r.hget(key, case.key)
        if raw:
            old = Case.model_validate_json(text(raw))
            fix = old.fix if old.fix.fixer or not case.fix.fixer else case.fix
            merged = old.model_copy(update={"fix": fix, "verified": old.verified + 1,
                                            "cost": _cheaper(old.cost, case.cost)})
            await self.r.hset(key, case.key, merged.model_dump_json())
            return merged
        await self.r.hset(key, case.key, case.model_dump_json())
        return case

    async def get(self, signature_key: str, scopes: list[str]) -> Case | None:
        """The case for a signature in the first scope that has one (a tenant's own before the engine's)."""
        for scope in scopes:
            raw = await self.r.hget(self.keys.cases(scope), signature_key)
            if raw:
                return Case.model_validate_json(text(raw))
        return None

    async def many(self, signature_keys: list[str], scope: str) -> list[Case]:
        if not signature_keys:
            return []
        raws = await self.r.hmget(self.keys.cases(scope), signature_keys)
        return [Case.model_validate_json(text(r)) for r in raws if r]

    async def all(self, scope: str) -> list[Case]:
        raw = await self.r.hgetall(self.keys.cases(scope))
        cases = [Case.model_validate_json(text(v)) for v in raw.values()]
        return sorted(cases, key=lambda c: (c.gate, c.shape))

    async def count(self, case: Case, counter: Counter, n: int = 1) -> int:
        return int(await self.r.hincrby(self.keys.case_stats(case.scope), f"{case.key}:{counter}", n))

    async def stats(self, case: Case) -> dict[str, int]:
        raws = await self.r.hmget(self.keys.case_stats(case.scope), [f"{case.key}:{c}" for c in COUNTERS])
        return {c: int(text(v)) if v else 0 for c, v in zip(COUNTERS, raws, strict=True)}

    async def drop_fixer(self, case: Case) -> None:
        """The fixer failed more often than it fixed: the case stays as advice only."""
        raw = await self.r.hget(self.keys.cases(case.scope), case.key)
        if raw:
            old = Case.model_validate_json(text(raw))
            await self.r.hset(self.keys.cases(case.scope), case.key, old.model_copy(
                update={"fix": old.fix.model_copy(update={"fixer": None})}).model_dump_json())

    async def clear(self, scope: str) -> int:
        return int(await self.r.delete(self.keys.cases(scope), self.keys.case_stats(scope)))


def _cheaper(a: CaseCost, b: CaseCost) -> CaseCost:
    if a.model_calls is None:
        return b
    if b.model_calls is None or a.model_calls <= b.model_calls:
        return a
    return b

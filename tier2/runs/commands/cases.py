"""Use cases of the debug case library outside a run: seed it, list it, clear a scope (``tier2 cases ...``)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tier2.errors import BadInput
from tier2.learning.seed import TAXONOMY_DEFECTS, SeedDefect, SeedResult, seed_cases
from tier2.runs.process.runtime import Runtime, open_runtime
from tier2.settings.loader import Settings, load_security
from tier2.store.cases import ENGINE_SCOPE, tenant_scope
from tier2.validators import ValidationRunner

__all__ = ["cases_command", "clear_cases", "list_cases", "seed_library"]


async def seed_library(rt: Runtime, catalogue: Sequence[SeedDefect], genres: Sequence[str] | None = None,
                       only: Sequence[str] | None = None,
                       progress: Callable[[SeedResult], None] | None = None) -> list[SeedResult]:
    """Seed the engine scope: the mutation ``catalogue`` plus the taxonomy's defects, on every genre template."""
    if rt.cases is None:
        raise RuntimeError("this runtime has no case library")
    defects = [*catalogue, *TAXONOMY_DEFECTS]
    if only:
        defects = [d for d in defects if d.name in set(only)]
    policy = rt.policies.snapshot()
    runner = ValidationRunner(rt.pool, rt.pack, policy)
    return await seed_cases(rt.cases, runner, rt.pack, defects, policy.learning, genres, progress)


def _scope(tenant: str | None) -> str:
    try:
        return ENGINE_SCOPE if tenant is None else tenant_scope(tenant)
    except ValueError as exc:
        raise BadInput(str(exc)) from exc


async def list_cases(rt: Runtime, tenant: str | None = None) -> list[dict[str, Any]]:
    """The cases of the engine scope (or of one tenant's), with their hit counters."""
    if rt.cases is None:
        return []
    store = rt.cases.store
    return [{**c.model_dump(mode="json"), "stats": await store.stats(c)} for c in await store.all(_scope(tenant))]


async def clear_cases(rt: Runtime, tenant: str | None = None) -> int:
    return await rt.cases.store.clear(_scope(tenant)) if rt.cases is not None else 0


def _case_line(r: dict[str, Any]) -> str:
    return (f"{r['gate']:<22} {r['shape'][:70]:<70} {r['fix']['fixer'] or 'advice':<20} verified {r['verified']} "
            f"hits {r['stats']['hits']} fixed {r['stats']['fixed']}")


def _seed_line(r: SeedResult) -> None:
    print(f"{r.genre:<10} {r.defect:<28} {r.status:<16} {r.fixer or '':<20} {r.detail[:60]}", flush=True)


async def _command(rt: Runtime, args: argparse.Namespace, catalogue: list[SeedDefect]) -> int:
    if args.cases_command == "list":
        rows = await list_cases(rt, args.tenant)
        print(json.dumps(rows, indent=2) if args.json else "\n".join(map(_case_line, rows)) or "no cases")
        return 0
    if args.cases_command == "clear":
        print(f"cleared {await clear_cases(rt, args.tenant)} key(s)")
        return 0
    results = await seed_library(rt, catalogue, args.genre or None, args.only or None,
                                 progress=None if args.json else _seed_line)
    if args.json:
        print(json.dumps([r.as_dict() for r in results], indent=2))
    fixed = sum(r.status.startswith("fixed") for r in results)
    by_fixer = sum(r.status == "fixed_by_fixer" for r in results)
    print(f"seeded: {fixed} of {len(results)} defects fixed and recorded ({by_fixer} by a fixer)", file=sys.stderr)
    return 1 if any(r.status in ("not_fixed", "template_fails") for r in results) else 0


def cases_command(settings: Settings, args: argparse.Namespace,
                  catalogue: Sequence[tuple[str, Callable[[Path], None]]]) -> int:
    """``tier2 cases seed|list|clear`` on the service's Redis (the embedded one by default)."""
    from tier2.store.embedded import redis_url

    security = load_security(settings.config_dir)
    defects = [SeedDefect(name, apply) for name, apply in catalogue]

    async def run(url: str) -> int:
        async with open_runtime(settings, url) as rt:
            return await _command(rt, args, defects)

    with redis_url(settings.redis_url, settings.workspaces / ".redis", security.redis.executables,
                   security.redis.appendonly, security.redis.start_timeout_s) as url:
        return asyncio.run(run(url))

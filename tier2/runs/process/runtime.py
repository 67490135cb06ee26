"""Process-wide resources of tier2 (config, pack, browser pool, run store), opened once and injected."""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

from tier2.browser import BrowserPool, find_chromium
from tier2.errors import SetupError
from tier2.learning import CaseLibrary
from tier2.packs import Pack, load_pack
from tier2.settings.loader import CONFIG_LOG, PolicyStore, SecurityConfig, Settings, load_security
from tier2.settings.secrets import Redactor
from tier2.store.cases import CaseStore
from tier2.store.connect import is_cluster
from tier2.store.keys import Keys
from tier2.store.layout import migrate_layout
from tier2.store.run_store import Durability, RunStore
from tier2.workspace import secure_workspaces_root

__all__ = ["Runtime", "open_runtime", "security_build_hash"]

log = logging.getLogger(CONFIG_LOG)


def security_build_hash(security: SecurityConfig, pack: Pack) -> str:
    """The versioned security/build tier as one hash: the security config's files (`SecurityConfig.source_hash`),
    the pack's id and version, and its pins (manifest with engine version and build profile, npm package locks)."""
    text = f"{security.source_hash}\0{pack.ref}\0{pack.pins_hash}"
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Runtime:
    settings: Settings
    security: SecurityConfig
    policies: PolicyStore
    pack: Pack
    pool: BrowserPool
    store: RunStore
    redis_url: str
    #: masks the service's secrets in everything tenants see (event summaries, the trajectory)
    redactor: Redactor = field(default_factory=Redactor)
    #: the security/build config this process runs under (`security_build_hash`), recorded with every run
    security_hash: str = ""
    #: the debug case library (`tier2.learning`): verified cases in Redis, mem0 recall when installed
    cases: CaseLibrary | None = None


@contextlib.asynccontextmanager
async def open_runtime(settings: Settings, redis_url: str, keys: Keys | None = None) -> AsyncIterator[Runtime]:
    """Load config and the pack, check the toolchain and browser, connect the store; close all on exit."""
    security = load_security(settings.config_dir)
    if is_cluster(redis_url) and security.redis.min_replicas > 0:  # WAIT counts one node's writes: say it plainly
        raise SetupError("[redis] min_replicas needs one server or Sentinel: on a Redis Cluster an acceptance writes "
                         "to several primaries and WAIT covers one (docs/operations.md §14)")
    secure_workspaces_root(settings.workspaces)  # 0700: projects and agent homes are reached only by tier2
    policies = PolicyStore(settings.config_dir, security)
    policy = policies.snapshot()  # fail fast on a broken policy (or one above a ceiling)
    pack_id = settings.pack or security.default_pack
    if pack_id not in security.allowed_packs:
        from tier2.errors import PackError

        raise PackError(f"pack {pack_id!r} is not in allowed_packs {security.allowed_packs}")
    pack = load_pack(settings.packs_dir, pack_id, settings.skills_dir)
    pack.check_toolchain()
    chromium = find_chromium(settings.chromium, security.browser.executables)
    security_hash = security_build_hash(security, pack)
    log.info("security/build config %s (config/security %s, pack %s pins %s), policy %s, chromium %s", security_hash,
             security.source_hash, pack.ref, pack.pins_hash, policy.source_hash, chromium)
    store = RunStore.from_url(redis_url, keys or Keys(prefix=settings.key_prefix),
                              Durability(security.redis.min_replicas, security.redis.replica_timeout_ms),
                              retention_s=security.retention.run_ttl_s)
    try:  # keys written before the hash tags get their tagged names (once; idempotent)
        await migrate_layout(store.r, store.keys, cluster=is_cluster(redis_url))
    except BaseException:
        await store.close()
        raise
    pool = BrowserPool(chromium, security.browser.args, isolation=security.sandbox.isolation)
    key_envs = [r.api_key_env for r in policies.snapshot().models.values() if r.api_key_env]
    redactor = Redactor.from_env(security.secrets.env_patterns, [*key_envs, "TIER2_API_KEYS", "TIER2_STREAM_SECRET"])
    try:
        yield Runtime(settings=settings, security=security, policies=policies, pack=pack, pool=pool, store=store,
                      redis_url=redis_url, redactor=redactor, security_hash=security_hash,
                      cases=CaseLibrary(CaseStore(store.r, store.keys)))
    finally:
        await pool.close()
        await store.close()

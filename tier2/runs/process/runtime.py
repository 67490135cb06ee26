"""Process-wide resources of tier2 (config, packs, browser pool, run store), opened once and injected."""

from __future__ import annotations

import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field

from tier2.browser import BrowserPool, find_chromium
from tier2.errors import PackError, SetupError
from tier2.learning import CaseLibrary
from tier2.packs import Pack
from tier2.packs.registry import allowed_packs
from tier2.settings.loader import CONFIG_LOG, PolicyStore, SecurityConfig, Settings, load_security
from tier2.settings.secrets import Redactor
from tier2.store.cases import CaseStore
from tier2.store.connect import is_cluster
from tier2.store.keys import Keys
from tier2.store.layout import migrate_layout
from tier2.store.run_store import Durability, RunStore
from tier2.workspace import secure_workspaces_root

__all__ = ["Runtime", "load_packs", "open_runtime", "security_build_hash"]

log = logging.getLogger(CONFIG_LOG)


def security_build_hash(security: SecurityConfig, packs: Sequence[Pack]) -> str:
    """The versioned security/build tier as one hash: the security config's files (`SecurityConfig.source_hash`),
    and each loaded pack's id and version and its pins (manifest with engine version and build profile, npm package
    locks), in pack-id order."""
    pins = "\0".join(f"{p.ref}\0{p.pins_hash}" for p in sorted(packs, key=lambda p: p.id))
    return hashlib.sha256(f"{security.source_hash}\0{pins}".encode()).hexdigest()[:16]


@dataclass
class Runtime:
    settings: Settings
    security: SecurityConfig
    policies: PolicyStore
    #: the default pack (``TIER2_PACK``, else ``default_pack``): a run that names none uses it
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
    #: every allowed, installed pack this process loaded, by id (the default one included): a run uses the one its
    #: request or its project names (`pack_for`)
    packs: dict[str, Pack] = field(default_factory=dict)

    def pack_for(self, ref: str | None) -> Pack:
        """The loaded pack ``ref`` names (``id`` or ``id@version``; None: the default pack). `PackError` for a pack
        this process has not loaded (not installed, not allowed) or another version of one it has."""
        if ref is None:
            return self.pack
        pack_id, _, version = ref.partition("@")
        pack = self.packs.get(pack_id) or (self.pack if self.pack.id == pack_id else None)
        if pack is None:
            raise PackError(f"pack {pack_id!r} is not loaded here (loaded: {', '.join(sorted(self.packs))})")
        if version and version != pack.manifest.version:
            raise PackError(f"pack {ref!r} is not loaded here: this process has {pack.ref}")
        return pack


def load_packs(settings: Settings, security: SecurityConfig) -> dict[str, Pack]:
    """Every allowed, installed pack (`tier2.packs.registry.allowed_packs`), its toolchain checked, by id, the
    default one first. The default pack (``TIER2_PACK``, else ``default_pack``) must be allowed and installed; an
    allowed, installed pack that does not load or whose toolchain is missing is a start error naming it (a service
    never half-serves its packs); an allowed pack that is not installed is left out, logged."""
    default = settings.pack or security.default_pack
    if default not in security.allowed_packs:
        raise PackError(f"pack {default!r} is not in allowed_packs {security.allowed_packs}")
    try:
        found = {p.id: p for p in allowed_packs(settings)}
    except SetupError as exc:
        raise type(exc)(f"an allowed pack cannot be served: {exc}") from exc
    if default not in found:
        raise PackError(f"unknown capability pack {default!r}: {settings.packs_dir / default / 'pack.yaml'} not found")
    packs = {default: found.pop(default), **found}
    for pack in packs.values():
        try:
            pack.check_toolchain()
        except SetupError as exc:
            raise type(exc)(f"pack {pack.id!r} (allowed_packs) cannot be served: {exc}") from exc
    for pack_id in security.allowed_packs:
        if pack_id not in packs:
            log.info("pack %s is allowed but not installed under %s: not served", pack_id, settings.packs_dir)
    return packs


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
    packs = load_packs(settings, security)
    pack = packs[settings.pack or security.default_pack]
    chromium = find_chromium(settings.chromium, security.browser.executables)
    security_hash = security_build_hash(security, list(packs.values()))
    log.info("security/build config %s (config/security %s, packs %s, default %s), policy %s, chromium %s",
             security_hash, security.source_hash, ", ".join(f"{p.ref} pins {p.pins_hash}" for p in packs.values()),
             pack.ref, policy.source_hash, chromium)
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
                      cases=CaseLibrary(CaseStore(store.r, store.keys)), packs=packs)
    finally:
        await pool.close()
        await store.close()

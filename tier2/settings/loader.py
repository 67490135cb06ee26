"""Load the three kinds of configuration (architecture.md §6).

* **Environment** (`Settings`): where things are — Redis URL, workspaces root, config dir, browser path.
* **Security/build config** (`SecurityConfig`, ``config/security/*.toml``): limits, pins and the ceilings of the
  hot policy (`tier2.settings.ceilings`); loaded once per process, its hash is logged, never hot-reloaded.
* **Hot policy** (`Policy`, ``config/policy/*.yaml``, `tier2.settings.policy`): iterations, model routes, gate
  modes, timeouts; `PolicyStore.snapshot()` re-reads changed files, validates them (schema, routing, ceilings)
  before they take effect — a refused edit is logged and the previous snapshot stays — and every run keeps the
  immutable snapshot it took (`tier2.runs.process.policy`).
"""

from __future__ import annotations

import hashlib
import logging
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from threading import Lock
from typing import Any

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from tier2.errors import SetupError
from tier2.settings.ceilings import PolicyCeilings, policy_violations
from tier2.settings.policy import (
    BreakerPolicy,
    BudgetOverride,
    BudgetPolicy,
    DurabilityPolicy,
    LearningPolicy,
    LegibilityPolicy,
    ModelRoute,
    Policy,
    Price,
    StuckPolicy,
    TimeoutPolicy,
    ToolsPolicy,
    VerdictPolicy,
    WriterPolicy,
)
from tier2.settings.sandbox import SandboxConfig
from tier2.settings.tenants import TenantsConfig

REPO_ROOT = Path(__file__).resolve().parents[2]

__all__ = ["REPO_ROOT", "Settings", "SecurityConfig", "Policy", "PolicyStore", "PolicyRefusal", "ModelRoute",
           "Price", "BudgetPolicy", "BudgetOverride", "BreakerPolicy", "DurabilityPolicy", "StuckPolicy",
           "TimeoutPolicy", "ToolsPolicy", "WriterPolicy", "BriefLimits", "SecretsConfig", "load_policy",
           "load_security", "CONFIG_LOG", "LegibilityPolicy", "LearningPolicy", "VerdictPolicy"]

#: configuration events (hashes at start, policy reloads and refused edits); `tier2 serve`/`worker` log it at INFO
CONFIG_LOG = "tier2.config"
log = logging.getLogger(CONFIG_LOG)


class Settings(BaseSettings):
    """Process environment (``TIER2_*`` variables, plus ``REDIS_URL``)."""

    model_config = SettingsConfigDict(env_prefix="TIER2_", extra="ignore", frozen=True)

    redis_url: str | None = Field(default=None, validation_alias=AliasChoices("REDIS_URL", "TIER2_REDIS_URL"))
    home: Path = REPO_ROOT
    workspaces: Path = REPO_ROOT / "workspaces"
    config_dir: Path = REPO_ROOT / "config"
    packs_dir: Path = REPO_ROOT / "capability_packs"
    #: skills root override (None: each pack's own ``skills/``)
    skills_dir: Path | None = None
    chromium: str | None = None
    #: the capability pack runs use (empty: the security config's ``default_pack``; `pack_id`)
    pack: str = ""
    #: server directories that POST /v1/projects may load from (default: <workspaces>/import)
    import_root: Path | None = None
    #: prefix of every tier2 Redis key (several deployments, or test suites, can share one Redis)
    key_prefix: str = Field(default="tier2", pattern=r"^[A-Za-z0-9_.-]{1,64}$")
    #: serve /docs, /redoc and /openapi.json without an API key (default: they need one, like every route)
    public_docs: bool = False
    #: host names the service answers for besides 127.0.0.1, localhost and [::1] (comma-separated; the DNS
    #: rebinding check of `tier2.service.hosts`)
    trusted_hosts: str = ""

    @property
    def trusted_host_names(self) -> list[str]:
        return [n.strip() for n in self.trusted_hosts.split(",") if n.strip()]

    @property
    def validation_cache(self) -> Path:
        """Durable validation cache (`tier2.validators.reuse`): beside the projects, inside none of them."""
        return self.workspaces / ".cache" / "validation"

    @property
    def docs_cache(self) -> Path:
        """The packs' engine-doc indexes (`tier2.packs.retrieval`), keyed by pack and type-file hash."""
        return self.workspaces / ".cache" / "docs"

    @property
    def pack_id(self) -> str:
        """``TIER2_PACK``, else the security config's ``default_pack`` (``config/security/runtime.toml``)."""
        return self.pack or load_security(self.config_dir).default_pack


class BriefLimits(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    min_chars: int = 8
    max_chars: int = 4000


class BrowserConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    executables: list[str] = ["/usr/lib/chromium/chromium", "/usr/bin/chromium", "/usr/bin/chromium-browser"]
    args: list[str] = []


class RedisConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    executables: list[str] = ["redis-server"]
    appendonly: bool = True
    start_timeout_s: float = 10.0
    #: a run is accepted (202) only once this many replicas acknowledged its write (``WAIT``); 0 = no wait
    min_replicas: int = Field(default=0, ge=0, le=16)
    #: how long the accept waits for them before answering 503 ``not_replicated``
    replica_timeout_ms: int = Field(default=1000, gt=0, le=60_000)


class RetentionConfig(BaseModel):
    """How long a run's keys live in Redis after it ends (`tier2.store.retention`; docs/operations.md §20)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: seconds after the end; 0 keeps every run until it is deleted by hand
    run_ttl_s: int = Field(default=30 * 86400, ge=0)


class ImportConfig(BaseModel):
    """Limits of POST /v1/projects (`tier2.workspace.importer`), enforced while the upload streams and unpacks."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_upload_bytes: int = Field(default=50_000_000, gt=0)
    max_files: int = Field(default=2000, gt=0)  # archive entries (directories included)
    max_file_bytes: int = Field(default=20_000_000, gt=0)
    max_total_bytes: int = Field(default=100_000_000, gt=0)
    #: unpacked bytes per compressed byte, per zip entry and over the whole archive (past the first MB)
    max_ratio: float = Field(default=100.0, gt=1, allow_inf_nan=False)
    max_name_chars: int = Field(default=240, gt=0, le=4096)  # an entry's whole path
    max_depth: int = Field(default=24, gt=0)  # path components of an entry


class ToolsConfig(BaseModel):
    """Limits on what an agent's tool call may do (the code's ceilings still apply)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_write_bytes: int = Field(default=1_000_000, gt=0)
    #: the most bytes a project's files may hold after an agent's Write or Edit (the tool refuses past it)
    max_project_bytes: int = Field(default=200_000_000, gt=0)


class SecretsConfig(BaseModel):
    """What counts as a secret: values of these environment variables (fnmatch patterns) are never shown to
    tenants or agents — masked in event summaries and the trajectory, and absent from tool processes."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    env_patterns: list[str] = ["*_KEY", "*_KEYS", "*_TOKEN", "*SECRET*", "*PASSWORD*", "*_CREDENTIALS"]


class SecurityConfig(BaseModel):
    """Versioned security & build configuration; config may only lower ceilings set in code."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    brief: BriefLimits = BriefLimits()
    browser: BrowserConfig = BrowserConfig()
    redis: RedisConfig = RedisConfig()
    retention: RetentionConfig = RetentionConfig()
    imports: ImportConfig = ImportConfig()
    tools: ToolsConfig = ToolsConfig()
    secrets: SecretsConfig = SecretsConfig()
    tenants: TenantsConfig = TenantsConfig()
    sandbox: SandboxConfig = SandboxConfig()  # workspace kinds + ceilings (tier2.settings.sandbox)
    #: the highest value the hot policy may give its budgets, iterations, steps, timeouts, attempts
    ceilings: PolicyCeilings = PolicyCeilings()
    allowed_packs: list[str] = []
    #: the pack of a run that names none (and of a project made by none) unless ``TIER2_PACK`` names another (empty:
    #: the first of ``allowed_packs``); every allowed, installed pack is served
    default_pack: str = ""
    source_hash: str = ""

    @model_validator(mode="after")
    def _default_pack(self) -> SecurityConfig:
        if not self.default_pack and self.allowed_packs:
            object.__setattr__(self, "default_pack", self.allowed_packs[0])
        return self


def _merge(dst: dict[str, Any], src: dict[str, Any]) -> dict[str, Any]:
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _merge(dst[k], v)
        else:
            dst[k] = v
    return dst


def _read_dir(directory: Path, pattern: str) -> tuple[list[tuple[Path, bytes]], str]:
    """The files (sorted by name) and their digest: sha256 over names and bytes, 16 hex characters."""
    if not directory.is_dir():
        raise SetupError(f"config directory missing: {directory}")
    files = [(path, path.read_bytes()) for path in sorted(directory.glob(pattern))]
    digest = hashlib.sha256()
    for path, raw in files:
        digest.update(path.name.encode() + b"\0" + raw)
    return files, digest.hexdigest()[:16]


def _parse(files: list[tuple[Path, bytes]], parse: Any) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for path, raw in files:
        try:
            data = parse(raw) or {}
        except Exception as exc:  # noqa: BLE001 - any parse error is a setup error
            raise SetupError(f"cannot parse {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise SetupError(f"{path} must hold a mapping at top level")
        _merge(merged, data)
    return merged


def load_security(config_dir: Path) -> SecurityConfig:
    files, digest = _read_dir(config_dir / "security", "*.toml")
    data = _parse(files, lambda b: tomllib.loads(b.decode()))
    try:
        return SecurityConfig(**data, source_hash=digest)
    except Exception as exc:  # pydantic ValidationError
        raise SetupError(f"invalid security config in {config_dir / 'security'}: {exc}") from exc


def _policy(files: list[tuple[Path, bytes]], digest: str, where: Path, security: SecurityConfig | None) -> Policy:
    data = _parse(files, yaml.safe_load)
    try:
        policy = Policy(**data, source_hash=digest)
    except Exception as exc:
        raise SetupError(f"invalid policy in {where}: {exc}") from exc
    if security is not None:
        problems = policy_violations(policy, security.ceilings, security.sandbox, security.tools.max_write_bytes)
        if problems:
            raise SetupError(f"policy in {where} raises a ceiling of the security config {security.source_hash}: "
                             + "; ".join(problems))
    return policy


def load_policy(config_dir: Path, security: SecurityConfig | None = None) -> Policy:
    """The policy in ``config_dir/policy``; with ``security``, refused (`SetupError`) when a value passes one of
    its ceilings (`tier2.settings.ceilings`)."""
    files, digest = _read_dir(config_dir / "policy", "*.yaml")
    return _policy(files, digest, config_dir / "policy", security)


@dataclass(frozen=True)
class PolicyRefusal:
    """A policy edit that did not take effect: the refused files' digest, why, and the policy that stays."""

    digest: str
    reason: str
    in_effect: str
    at: float


class PolicyStore:
    """Hot-reloading holder of the current `Policy`; `snapshot()` is cheap when nothing changed.

    Files that changed are validated before they take effect — schema, model routing, and the ceilings of the
    security config (loaded once here, or passed in). The first load fails loudly (`SetupError`); a later edit that
    does not validate is refused: logged with the reason, kept in `refused`, and the previous snapshot stays in
    effect until the files change again."""

    def __init__(self, config_dir: Path, security: SecurityConfig | None = None) -> None:
        self._dir = config_dir / "policy"
        self.security = security if security is not None else load_security(config_dir)
        self._lock = Lock()
        self._stamp: tuple[tuple[str, int, int], ...] = ()
        self._policy: Policy | None = None
        self._refused: PolicyRefusal | None = None

    @property
    def refused(self) -> PolicyRefusal | None:
        """The edit on disk that was refused (None: the files on disk are the policy in effect)."""
        return self._refused

    def _current_stamp(self) -> tuple[tuple[str, int, int], ...]:
        stamp = []
        for path in sorted(self._dir.glob("*.yaml")):
            try:
                st = path.stat()
            except OSError:  # removed while listing: the next call sees the new state
                continue
            stamp.append((path.name, st.st_mtime_ns, st.st_size))
        return tuple(stamp)

    def snapshot(self) -> Policy:
        with self._lock:
            stamp = self._current_stamp()  # before reading: a change while reading is seen by the next call
            if self._policy is not None and stamp == self._stamp:
                return self._policy
            files, digest = _read_dir(self._dir, "*.yaml")
            current = self._policy
            if current is not None and digest in (current.source_hash, getattr(self._refused, "digest", None)):
                self._stamp = stamp  # touched, or the same refused bytes: nothing new to decide
                if digest == current.source_hash:
                    self._refused = None
                return current
            try:
                policy = _policy(files, digest, self._dir, self.security)
            except SetupError as exc:
                if current is None:
                    raise
                self._refused = PolicyRefusal(digest, str(exc), current.source_hash, time.time())
                self._stamp = stamp
                log.warning("policy edit refused (files %s): %s; policy %s stays in effect", digest, exc,
                            current.source_hash)
                return current
            if current is not None:
                log.info("policy %s in effect (was %s)", digest, current.source_hash)
            self._policy, self._stamp, self._refused = policy, stamp, None
            return policy

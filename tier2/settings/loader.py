"""Load the three kinds of configuration (architecture.md §6).

* **Environment** (`Settings`): where things are — Redis URL, workspaces root, config dir, browser path.
* **Security/build config** (`SecurityConfig`, ``config/security/*.toml``): limits and pins; loaded once per
  process, its hash is logged, never hot-reloaded.
* **Hot policy** (`Policy`, ``config/policy/*.yaml``): iterations, model routes, gate modes, timeouts;
  `PolicyStore.snapshot()` re-reads changed files and every run keeps the immutable snapshot it took.
"""

from __future__ import annotations

import hashlib
import tomllib
from pathlib import Path
from threading import Lock
from typing import Any, Literal

import yaml
from pydantic import AliasChoices, BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from tier2.errors import SetupError

REPO_ROOT = Path(__file__).resolve().parents[2]

__all__ = ["REPO_ROOT", "Settings", "SecurityConfig", "Policy", "PolicyStore", "ModelRoute", "Price"]


class Settings(BaseSettings):
    """Process environment (``TIER2_*`` variables, plus ``REDIS_URL``)."""

    model_config = SettingsConfigDict(env_prefix="TIER2_", extra="ignore", frozen=True)

    redis_url: str | None = Field(default=None, validation_alias=AliasChoices("REDIS_URL", "TIER2_REDIS_URL"))
    home: Path = REPO_ROOT
    workspaces: Path = REPO_ROOT / "workspaces"
    config_dir: Path = REPO_ROOT / "config"
    packs_dir: Path = REPO_ROOT / "capability_packs"
    skills_dir: Path = REPO_ROOT / "skills"
    chromium: str | None = None
    pack: str = "phaser"
    #: server directories that POST /v1/projects may load from (default: <workspaces>/import)
    import_root: Path | None = None


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


class ImportConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    max_upload_bytes: int = 50_000_000
    max_files: int = 2000
    max_file_bytes: int = 20_000_000
    max_total_bytes: int = 100_000_000


class SecurityConfig(BaseModel):
    """Versioned security & build configuration; config may only lower ceilings set in code."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    brief: BriefLimits = BriefLimits()
    browser: BrowserConfig = BrowserConfig()
    redis: RedisConfig = RedisConfig()
    imports: ImportConfig = ImportConfig()
    allowed_packs: list[str] = ["phaser"]
    source_hash: str = ""


class ModelRoute(BaseModel):
    """One named model route: the offline policy or an OpenAI-compatible endpoint."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["offline", "openai"]
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    parameters: dict[str, Any] = {}
    context_size: int = 128_000
    stream: bool = True
    max_retries: int = 2
    fallback: str | None = None


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000


class WriterPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    max_iters: int = 24
    max_fix_rounds: int = 2


class TimeoutPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    build_s: float = 60.0
    validation_s: float = 45.0
    gate_s: float = 10.0
    boot_s: float = 15.0
    model_call_s: float = 120.0


class Policy(BaseModel):
    """Hot policy snapshot (immutable; one per run)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    default_model: str = "offline"
    models: dict[str, ModelRoute] = {}
    prices: dict[str, Price] = {}
    writer: WriterPolicy = WriterPolicy()
    timeouts: TimeoutPolicy = TimeoutPolicy()
    gates: dict[str, Literal["observe", "enforce"]] = {}
    strict_acyclic: bool = False  # data gate policy: reject every crafting cycle, not just bootstrap-free ones
    l3_scorer: str | None = None  # a model route for the L3 visual score; None = the offline heuristic
    l3_timeout_s: float = 30.0
    source_hash: str = ""

    def route(self, name: str | None) -> tuple[str, ModelRoute]:
        from tier2.errors import ModelRouteError

        key = name or self.default_model
        if key not in self.models:
            known = ", ".join(sorted(self.models)) or "(none)"
            raise ModelRouteError(f"unknown model route {key!r}; configured routes: {known}")
        return key, self.models[key]


def _merge(dst: dict[str, Any], src: dict[str, Any]) -> dict[str, Any]:
    for k, v in src.items():
        if isinstance(v, dict) and isinstance(dst.get(k), dict):
            _merge(dst[k], v)
        else:
            dst[k] = v
    return dst


def _load_dir(directory: Path, pattern: str, parse: Any) -> tuple[dict[str, Any], str]:
    merged: dict[str, Any] = {}
    digest = hashlib.sha256()
    if not directory.is_dir():
        raise SetupError(f"config directory missing: {directory}")
    for path in sorted(directory.glob(pattern)):
        raw = path.read_bytes()
        digest.update(path.name.encode() + b"\0" + raw)
        try:
            data = parse(raw) or {}
        except Exception as exc:  # noqa: BLE001 - any parse error is a setup error
            raise SetupError(f"cannot parse {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise SetupError(f"{path} must hold a mapping at top level")
        _merge(merged, data)
    return merged, digest.hexdigest()[:16]


def load_security(config_dir: Path) -> SecurityConfig:
    data, digest = _load_dir(config_dir / "security", "*.toml", lambda b: tomllib.loads(b.decode()))
    try:
        return SecurityConfig(**data, source_hash=digest)
    except Exception as exc:  # pydantic ValidationError
        raise SetupError(f"invalid security config in {config_dir / 'security'}: {exc}") from exc


def load_policy(config_dir: Path) -> Policy:
    data, digest = _load_dir(config_dir / "policy", "*.yaml", yaml.safe_load)
    try:
        return Policy(**data, source_hash=digest)
    except Exception as exc:
        raise SetupError(f"invalid policy in {config_dir / 'policy'}: {exc}") from exc


class PolicyStore:
    """Hot-reloading holder of the current `Policy`; `snapshot()` is cheap when nothing changed."""

    def __init__(self, config_dir: Path) -> None:
        self._dir = config_dir / "policy"
        self._config_dir = config_dir
        self._lock = Lock()
        self._stamp: tuple[tuple[str, float, int], ...] = ()
        self._policy: Policy | None = None

    def _current_stamp(self) -> tuple[tuple[str, float, int], ...]:
        return tuple(
            (p.name, p.stat().st_mtime, p.stat().st_size) for p in sorted(self._dir.glob("*.yaml"))
        )

    def snapshot(self) -> Policy:
        with self._lock:
            stamp = self._current_stamp()
            if self._policy is None or stamp != self._stamp:
                self._policy = load_policy(self._config_dir)
                self._stamp = stamp
            return self._policy


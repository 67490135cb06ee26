"""Per-tenant limits (security config ``[tenants.default]`` / ``[tenants.overrides.<tenant>]``, loaded once).

An override replaces the default field by field (an operator may give one tenant more or less); the hard ceilings
below are compiled in and bound every configured value, so no config can lift them. The Redis side of the limits
is in `tier2.store.quotas` and `tier2.store.dispatch`; the use case (admit a run, charge an upload) in
`tier2.runs.tenancy`.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LOCAL_TENANT", "TenantLimits", "TenantOverride", "TenantsConfig", "MAX_QUEUED_CEILING",
           "MAX_RUNNING_CEILING", "SUBMISSIONS_PER_MINUTE_CEILING", "UPLOAD_BYTES_PER_DAY_CEILING", "USD_CEILING",
           "TOKENS_CEILING", "DEADLINE_S_CEILING", "DISK_BYTES_CEILING", "SNAPSHOT_BYTES_CEILING",
           "SNAPSHOT_BLOB_BYTES_CEILING", "SNAPSHOT_TTL_S_CEILING"]

#: The tenant of a service started without API keys, and of runs started from the CLI (``tier2 generate``): a local
#: ``tier2 serve`` and its Studio show the CLI's runs; a service with API keys never maps a caller to it (unless an
#: operator names a key's tenant ``local``).
LOCAL_TENANT = "local"

#: Runs a tenant may have accepted and not yet ended (waiting + running).
MAX_QUEUED_CEILING: Final = 1000
#: Runs of one tenant executing at once (workers start no more).
MAX_RUNNING_CEILING: Final = 64
#: Accepted submissions (POST /v1/runs) per tenant in any 60 s window.
SUBMISSIONS_PER_MINUTE_CEILING: Final = 600
#: Request-body bytes of POST /v1/projects per tenant per UTC day.
UPLOAD_BYTES_PER_DAY_CEILING: Final = 20_000_000_000
#: The largest budget any run may have, whatever the config or request says.
USD_CEILING: Final = 1000.0
TOKENS_CEILING: Final = 1_000_000_000
DEADLINE_S_CEILING: Final = 86_400.0
#: Bytes of the tenant's projects on disk (unpacked: what the files take, not what an upload weighed).
DISK_BYTES_CEILING: Final = 1_000_000_000_000
#: Bytes of the tenant's snapshot blobs in Redis (`tier2.store.snapshots`).
SNAPSHOT_BYTES_CEILING: Final = 64_000_000_000
#: The largest single file a snapshot stores as a blob (a bigger file stops the run: it could not be restored).
SNAPSHOT_BLOB_BYTES_CEILING: Final = 512_000_000
#: How long a snapshot (its manifest and blobs) lives after the last snapshot that referenced it.
SNAPSHOT_TTL_S_CEILING: Final = 30 * 86_400


class TenantLimits(BaseModel):
    """The limits of one tenant (every field set): ``[tenants.default]`` or a default merged with an override."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_queued: int = Field(default=20, ge=1, le=MAX_QUEUED_CEILING)
    max_running: int = Field(default=2, ge=1, le=MAX_RUNNING_CEILING)
    submissions_per_minute: int = Field(default=30, ge=1, le=SUBMISSIONS_PER_MINUTE_CEILING)
    upload_bytes_per_day: int = Field(default=500_000_000, ge=1, le=UPLOAD_BYTES_PER_DAY_CEILING)
    max_usd: float = Field(default=5.0, gt=0, le=USD_CEILING, allow_inf_nan=False)
    max_tokens: int = Field(default=5_000_000, ge=1, le=TOKENS_CEILING)
    max_deadline_s: float = Field(default=3600.0, gt=0, le=DEADLINE_S_CEILING, allow_inf_nan=False)
    #: model routes the tenant's runs may use (writer route and its fallbacks); None = every configured route
    allowed_routes: tuple[str, ...] | None = None
    disk_bytes: int = Field(default=2_000_000_000, ge=1, le=DISK_BYTES_CEILING)
    snapshot_bytes: int = Field(default=500_000_000, ge=1, le=SNAPSHOT_BYTES_CEILING)
    snapshot_blob_bytes: int = Field(default=20_000_000, ge=1, le=SNAPSHOT_BLOB_BYTES_CEILING)
    snapshot_ttl_s: int = Field(default=3 * 86_400, ge=3600, le=SNAPSHOT_TTL_S_CEILING)

    def budget_ceiling(self) -> dict[str, float | int]:
        """The ceiling a run's budget is clamped to (``usd``, ``tokens``, ``deadline_s``)."""
        return {"usd": self.max_usd, "tokens": self.max_tokens, "deadline_s": self.max_deadline_s}

    def route_allowed(self, route: str) -> bool:
        return self.allowed_routes is None or route in self.allowed_routes


class TenantOverride(BaseModel):
    """``[tenants.overrides.<tenant>]``: the fields given replace the default's; same bounds."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_queued: int | None = Field(default=None, ge=1, le=MAX_QUEUED_CEILING)
    max_running: int | None = Field(default=None, ge=1, le=MAX_RUNNING_CEILING)
    submissions_per_minute: int | None = Field(default=None, ge=1, le=SUBMISSIONS_PER_MINUTE_CEILING)
    upload_bytes_per_day: int | None = Field(default=None, ge=1, le=UPLOAD_BYTES_PER_DAY_CEILING)
    max_usd: float | None = Field(default=None, gt=0, le=USD_CEILING, allow_inf_nan=False)
    max_tokens: int | None = Field(default=None, ge=1, le=TOKENS_CEILING)
    max_deadline_s: float | None = Field(default=None, gt=0, le=DEADLINE_S_CEILING, allow_inf_nan=False)
    allowed_routes: tuple[str, ...] | None = None
    disk_bytes: int | None = Field(default=None, ge=1, le=DISK_BYTES_CEILING)
    snapshot_bytes: int | None = Field(default=None, ge=1, le=SNAPSHOT_BYTES_CEILING)
    snapshot_blob_bytes: int | None = Field(default=None, ge=1, le=SNAPSHOT_BLOB_BYTES_CEILING)
    snapshot_ttl_s: int | None = Field(default=None, ge=3600, le=SNAPSHOT_TTL_S_CEILING)


class TenantsConfig(BaseModel):
    """``[tenants]``: the default limits and per-tenant overrides."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    default: TenantLimits = TenantLimits()
    overrides: dict[str, TenantOverride] = {}

    def limits(self, tenant: str) -> TenantLimits:
        """The tenant's effective limits: its override's fields over the default."""
        own = self.overrides.get(tenant)
        if own is None:
            return self.default
        return self.default.model_copy(update=own.model_dump(exclude_none=True))

    def max_running_table(self) -> dict[str, int]:
        """``{"": default, tenant: n, ...}`` for the dispatch script (every overridden tenant listed)."""
        table = {"": self.default.max_running}
        table.update({t: self.limits(t).max_running for t in self.overrides})
        return table

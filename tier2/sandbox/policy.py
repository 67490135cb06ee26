"""Which workspace kind a run gets, and with which limits: the security config is the ceiling, the hot policy and
the run's own option may only pick among what it allows and lower limits (never raise them, never add network)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tier2.errors import BadInput
from tier2.settings.sandbox import KINDS, Kind, SandboxConfig, SandboxLimits, SandboxPolicy

__all__ = ["WorkspaceChoice", "allowed_kinds", "resolve_workspace"]


@dataclass(frozen=True)
class WorkspaceChoice:
    kind: Kind
    limits: SandboxLimits
    network: bool = False


def allowed_kinds(security: SandboxConfig, policy: SandboxPolicy | None = None) -> list[Kind]:
    """The security config's kinds, narrowed by the hot policy (a kind the policy names but the config does not
    allow stays forbidden)."""
    kinds = [k for k in KINDS if k in security.allowed_kinds]
    if policy is not None and policy.allowed_kinds is not None:
        kinds = [k for k in kinds if k in policy.allowed_kinds]
    return kinds


def resolve_workspace(security: SandboxConfig, policy: SandboxPolicy | None = None,
                      requested: Any = None, requested_limits: Any = None) -> WorkspaceChoice:
    """The run's workspace kind and limits, or `BadInput` naming the ceiling a request would pass.

    ``requested``: the run's ``workspace`` option (``tier2 generate --workspace``, ``"workspace"`` on POST
    /v1/runs), a kind name or a mapping ``{"kind": ..., "network": false, "limits": {...}}``."""
    network = False
    if isinstance(requested, dict):
        unknown = set(requested) - {"kind", "network", "limits"}
        if unknown:
            raise BadInput(f"workspace: unknown field(s) {sorted(unknown)}")
        network = requested.get("network", False)
        requested_limits = requested.get("limits", requested_limits)
        requested = requested.get("kind")
    if network is not False or (policy is not None and policy.network):
        raise BadInput("workspace network is never allowed (security config [sandbox] network = false)")
    kinds = allowed_kinds(security, policy)
    if not kinds:
        raise BadInput("no workspace kind is allowed: the hot policy's sandbox.allowed_kinds excludes every kind "
                       f"the security config allows ({security.allowed_kinds})")
    if requested is None:
        preferred = policy.default_kind if policy is not None and policy.default_kind else security.default_kind
        kind = preferred if preferred in kinds else kinds[0]
    else:
        if requested not in KINDS:
            raise BadInput(f"unknown workspace kind {requested!r}: use one of {', '.join(KINDS)}")
        if requested not in kinds:
            raise BadInput(f"workspace kind {requested!r} is not allowed here (allowed: {', '.join(kinds)})")
        kind = requested
    limits = security.limits.lowered(policy.limits if policy is not None else None)
    if requested_limits is not None:
        try:
            asked = SandboxLimits(**{**limits.model_dump(), **dict(requested_limits)})
        except Exception as exc:  # noqa: BLE001 - pydantic's message names the field
            raise BadInput(f"workspace limits: {exc}") from exc
        limits = limits.lowered(asked)
    return WorkspaceChoice(kind=kind, limits=limits)

"""Error hierarchy, split by audience.

``AgentFacingError`` subclasses become tool results or hints the agent can act on;
``OperatorError`` subclasses surface to whoever runs tier2 (CLI exit codes, HTTP 4xx/5xx,
run failures). Every tier2 error derives from ``Tier2Error``.
"""

from __future__ import annotations

__all__ = [
    "Tier2Error",
    "AgentFacingError",
    "OperatorError",
    "BadInput",
    "SetupError",
    "RedisUnavailable",
    "BrowserUnavailable",
    "ToolchainMissing",
    "PackError",
    "ModelRouteError",
    "NotFound",
    "RunLimitReached",
    "StaleLease",
]


class Tier2Error(Exception):
    """Root of every tier2 error."""

    #: CLI exit code used when this error ends a command.
    exit_code: int = 1


class AgentFacingError(Tier2Error):
    """A problem the agent can fix (fed back as a tool result)."""


class OperatorError(Tier2Error):
    """A problem for the operator or the caller (bad input, broken setup)."""

    exit_code = 2


class BadInput(OperatorError):
    """The caller sent something invalid (empty or oversized brief, bad path...)."""


class NotFound(OperatorError):
    """An unknown id or path."""


class SetupError(OperatorError):
    """The machine lacks something tier2 needs."""


class RedisUnavailable(SetupError):
    """No Redis could be reached or started."""


class BrowserUnavailable(SetupError):
    """Chromium is missing or could not start."""


class ToolchainMissing(SetupError):
    """esbuild / node packages of a capability pack are missing."""


class PackError(SetupError):
    """A capability pack manifest is invalid or incomplete."""


class ModelRouteError(OperatorError):
    """A model route is unknown or misconfigured."""


class RunLimitReached(Tier2Error):
    """A governance limit (budget cap, deadline, step cap, stuck pattern, timeout) stopped the run.

    The message names the exact limit, e.g. ``budget: 0.41 USD cap, 17 calls, 0.398 spent``; the run ends
    ``stopped`` with it as the reason and delivers the best verified result so far."""

    def __init__(self, limit: str, detail: str) -> None:
        super().__init__(f"{limit}: {detail}")
        self.limit, self.detail = limit, detail


class StaleLease(Tier2Error):
    """This worker's lease on a run was taken over (its fencing token is no longer current): stop writing."""

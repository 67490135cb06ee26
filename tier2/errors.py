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

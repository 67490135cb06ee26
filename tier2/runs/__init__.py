"""Run use cases: turn a brief into a delivered (or honestly failed) game project.

The names below load on first use (PEP 562): a command that needs one use case (``tier2 validate`` →
`tier2.runs.commands.validate`) does not pay for importing the agent stack the others need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tier2.runs.generate import RunOutcome, RunRequest, execute_run, validate_brief
    from tier2.runs.process.runtime import Runtime, open_runtime

__all__ = ["RunOutcome", "RunRequest", "Runtime", "execute_run", "open_runtime", "validate_brief"]

_HOME = {"RunOutcome": "generate", "RunRequest": "generate", "execute_run": "generate", "validate_brief": "generate",
         "Runtime": "process.runtime", "open_runtime": "process.runtime"}


def __getattr__(name: str) -> Any:
    if name in _HOME:
        return getattr(importlib.import_module(f"tier2.runs.{_HOME[name]}"), name)
    raise AttributeError(f"module 'tier2.runs' has no attribute {name!r}")

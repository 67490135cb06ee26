"""Run use cases: turn a brief into a delivered (or honestly failed) game project."""

from tier2.runs.generate import RunOutcome, RunRequest, execute_run, validate_brief
from tier2.runs.runtime import Runtime, open_runtime

__all__ = ["RunOutcome", "RunRequest", "Runtime", "execute_run", "open_runtime", "validate_brief"]

"""Every Redis key tier2 uses, in one place (AgentScope's own keys stay under ``agentscope:``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Keys", "SCHEMA_VERSION"]

#: Version stamped into every persisted payload.
SCHEMA_VERSION = 1


@dataclass(frozen=True)
class Keys:
    """Key templates under one prefix; tests pass their own prefix to stay isolated."""

    prefix: str = "tier2"

    def run(self, run_id: str) -> str:
        return f"{self.prefix}:run:{run_id}"

    def run_events(self, run_id: str) -> str:
        return f"{self.prefix}:run:{run_id}:events"

    def run_event_seq(self, run_id: str) -> str:
        return f"{self.prefix}:run:{run_id}:event_seq"

    def run_channel(self, run_id: str) -> str:
        return f"{self.prefix}:run:{run_id}:live"

    def runs_index(self) -> str:
        return f"{self.prefix}:runs"

    def idempotency(self, tenant: str, key: str) -> str:
        return f"{self.prefix}:idem:{tenant}:{key}"

    def thread(self, thread_id: str) -> str:
        return f"{self.prefix}:thread:{thread_id}"

    def thread_runs(self, thread_id: str) -> str:
        return f"{self.prefix}:thread:{thread_id}:runs"

    def thread_state(self, thread_id: str) -> str:
        return f"{self.prefix}:thread:{thread_id}:state"

    def project(self, project_id: str) -> str:
        return f"{self.prefix}:project:{project_id}"

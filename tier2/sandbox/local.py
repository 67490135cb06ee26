"""``local``: today's host workspace — commands run on the host with a clean environment (operators only: the
writer gets no Bash in this kind)."""

from __future__ import annotations

from pathlib import Path

from tier2.sandbox.base import BASE_ENV, Sandbox

__all__ = ["LocalSandbox"]


class LocalSandbox(Sandbox):
    kind = "local"

    def wrap(self, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
             interactive: bool = False) -> list[str]:
        full = {**BASE_ENV, "HOME": str(self.spec.home), **(env or {})}
        # env(1) sets exactly this environment (-i: nothing inherited) and chdir's via the spawn's cwd below
        return ["env", "-i", "-C", str(cwd or self.project), *[f"{k}={v}" for k, v in full.items()], *argv]

    def chromium(self, executable: str) -> str:
        return executable  # the host browser, as before (the pool already gives it no service environment)

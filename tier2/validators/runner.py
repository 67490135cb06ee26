"""The one place that owns validation policy.

* L1 always enforces — config cannot turn it off (mechanism, pinned by a test).
* L2 gates are observe or enforce per gate from hot policy.
* L3 is recorded and never blocks, whatever it returns, raises or however long it takes.
"""

from __future__ import annotations

import time
from pathlib import Path

from tier2.browser import BrowserPool
from tier2.packs import Pack
from tier2.settings.loader import Policy
from tier2.toolchain import BuildResult, run_build
from tier2.validators.base import Finding, ValidationResult
from tier2.validators.l1.runtime_gates import RUNTIME_GATES
from tier2.validators.probe import probe_contract_game
from tier2.validators.report import ValidationReport

__all__ = ["ValidationRunner", "apply_policy", "build_gate"]


def apply_policy(result: ValidationResult, policy: Policy) -> ValidationResult:
    """Set the gate's mode: L1 enforce (always), L3 observe (always), L2 from policy (default observe)."""
    if result.layer == "L1":
        mode = "enforce"
    elif result.layer == "L3":
        mode = "observe"
    else:
        mode = policy.gates.get(result.id, "observe")
    return result.model_copy(update={"mode": mode})


def build_gate(build: BuildResult) -> ValidationResult:
    if build.ok:
        return ValidationResult(id="l1.builds", layer="L1", passed=True,
                                summary=f"esbuild ok in {build.duration_ms} ms, {build.bundle_bytes} bytes",
                                evidence={"bundle": build.bundle_path, "sha256": build.bundle_sha256})
    return ValidationResult(id="l1.builds", layer="L1", passed=False,
                            summary=f"build failed with {len(build.errors)} error(s)",
                            findings=[Finding(message=str(e)) for e in build.errors[:10]],
                            evidence={"log_tail": build.log[-2000:]})


class ValidationRunner:
    """Build + probe + gates for one project; reuses the pool's browser."""

    def __init__(self, pool: BrowserPool, pack: Pack, policy: Policy) -> None:
        self.pool, self.pack, self.policy = pool, pack, policy

    async def validate_project(
        self, project: Path, out_dir: Path, build: BuildResult | None = None,
    ) -> ValidationReport:
        started = time.monotonic()
        t = self.policy.timeouts
        if build is None:
            build = await run_build(self.pack, project, timeout_s=t.build_s)
        gates = [build_gate(build)]
        screenshots: list[str] = []
        notes: list[str] = []
        if build.ok and build.html_path:
            trace = await probe_contract_game(self.pool, Path(build.html_path), out_dir,
                                              boot_timeout_s=t.boot_s, total_timeout_s=t.validation_s)
            gates += [gate(trace) for gate in RUNTIME_GATES]
            screenshots, notes = trace.screenshots, trace.notes
        gates = [apply_policy(g, self.policy) for g in gates]
        report = ValidationReport(
            target=str(project), passed=not any(g.blocking for g in gates), gates=gates,
            screenshots=screenshots, build=build.to_dict(), notes=notes,
            duration_ms=int((time.monotonic() - started) * 1000),
        )
        report.write(out_dir / "report.json")
        return report

"""Validate an existing tier2 game project (build + L1 gates) outside of a run."""

from __future__ import annotations

import time
from pathlib import Path

from tier2.browser import BrowserPool, find_chromium
from tier2.errors import BadInput
from tier2.hostio import ProjectDir
from tier2.packs import load_pack
from tier2.settings.loader import PolicyStore, Settings, load_security
from tier2.validators import ValidationReport, ValidationRunner
from tier2.validators.runner import Mode

__all__ = ["validate_path"]


async def validate_path(settings: Settings, target: str, out: Path | None = None, mode: Mode = "auto",
                        brief: str = "") -> ValidationReport:
    """Validate a project directory or a loopback URL; the report goes to ``out`` (default: a fresh dir
    under the workspaces root, or ``<project>/.tier2/reports/validate`` for tier2 projects)."""
    if mode not in ("auto", "contract", "generic"):
        raise BadInput(f"unknown mode {mode!r}: use auto, contract or generic")
    security = load_security(settings.config_dir)
    pack = load_pack(settings.packs_dir, settings.pack_id, settings.skills_dir)
    pack.check_toolchain()
    local = Path(target).expanduser()
    if out is None:
        if local.is_dir() and ProjectDir(local).is_dir(".tier2"):
            out = local / ".tier2" / "reports" / "validate"
        else:
            out = settings.workspaces / "validations" / time.strftime("%Y%m%d-%H%M%S")
    pool = BrowserPool(find_chromium(settings.chromium, security.browser.executables), security.browser.args,
                       isolation=security.sandbox.isolation)
    try:
        policy = PolicyStore(settings.config_dir, security).snapshot()
        scorer = None
        if policy.l3_route():  # (the model scorer's agent stack is only imported when a route is configured)
            from tier2.runs.loop.addons.l3 import l3_scorer

            scorer = l3_scorer(policy)
        runner = ValidationRunner(pool, pack, policy, cache_dir=settings.validation_cache, l3_scorer=scorer)
        return await runner.validate_target(target, out.resolve(), mode, brief=brief)
    finally:
        await pool.close()

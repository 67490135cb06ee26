"""Validate an existing tier2 game project (build + L1 gates) outside of a run."""

from __future__ import annotations

import time
from pathlib import Path

from tier2.browser import BrowserPool, find_chromium
from tier2.errors import BadInput
from tier2.hostio import ProjectDir
from tier2.packs import Pack, load_pack
from tier2.packs.registry import load_installed
from tier2.settings.loader import PolicyStore, Settings, load_security
from tier2.validators import ValidationReport, ValidationRunner
from tier2.validators.runner import Mode
from tier2.workspace.projects import pack_imported, project_pack

__all__ = ["validate_path"]


def _pack_of(settings: Settings, local: Path) -> Pack:
    """The pack that reads a project folder: the one it was made with (its ``.tier2/project.json``), else the one
    installed pack whose engine its sources import, else the configured pack (a URL, or a game of no pack's
    engine: generic mode then chooses the engine adapter by evidence)."""
    configured = load_pack(settings.packs_dir, settings.pack_id, settings.skills_dir)
    if not local.is_dir():
        return configured
    named = project_pack(local)
    if named is not None and (settings.packs_dir / named / "pack.yaml").is_file():
        return load_pack(settings.packs_dir, named)
    return pack_imported(local, load_installed(settings.packs_dir)[0]) or configured


async def validate_path(settings: Settings, target: str, out: Path | None = None, mode: Mode = "auto",
                        brief: str = "") -> ValidationReport:
    """Validate a project directory or a loopback URL; the report goes to ``out`` (default: a fresh dir
    under the workspaces root, or ``<project>/.tier2/reports/validate`` for tier2 projects)."""
    if mode not in ("auto", "contract", "generic"):
        raise BadInput(f"unknown mode {mode!r}: use auto, contract or generic")
    security = load_security(settings.config_dir)
    local = Path(target).expanduser()
    pack = _pack_of(settings, local)
    pack.check_toolchain()
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

"""Validate an existing tier2 game project (build + L1 gates) outside of a run."""

from __future__ import annotations

from pathlib import Path

from tier2.browser import BrowserPool, find_chromium
from tier2.errors import BadInput
from tier2.packs import load_pack
from tier2.settings.loader import PolicyStore, Settings, load_security
from tier2.validators import ValidationReport, ValidationRunner

__all__ = ["validate_path"]


async def validate_path(settings: Settings, path: Path, out: Path | None = None) -> ValidationReport:
    project = path.expanduser().resolve()
    if not project.is_dir():
        raise BadInput(f"{project} is not a directory")
    security = load_security(settings.config_dir)
    pack = load_pack(settings.packs_dir, settings.pack, settings.skills_dir)
    pack.check_toolchain()
    if not (project / pack.manifest.build.entry).exists():
        raise BadInput(f"{project} has no {pack.manifest.build.entry}: not a {pack.ref} project")
    pool = BrowserPool(find_chromium(settings.chromium, security.browser.executables), security.browser.args)
    try:
        runner = ValidationRunner(pool, pack, PolicyStore(settings.config_dir).snapshot())
        return await runner.validate_project(project, out or project / ".tier2" / "reports" / "validate")
    finally:
        await pool.close()

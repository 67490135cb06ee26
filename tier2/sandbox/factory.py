"""Open the sandbox of a project for a workspace kind (the one place that maps a kind to its implementation)."""

from __future__ import annotations

from pathlib import Path

from tier2.sandbox.base import Sandbox, SandboxOwner, SandboxSpec
from tier2.sandbox.bwrap import BwrapSandbox
from tier2.sandbox.docker import DockerEngine, DockerSandbox
from tier2.sandbox.local import LocalSandbox
from tier2.settings.sandbox import CgroupConfig, DockerConfig, IsolationConfig, Kind, SandboxLimits

__all__ = ["make_sandbox", "TOOLCHAIN_DIR"]

#: tier2's own toolchain runner (confined_build.mjs), visible read-only in every sandbox
TOOLCHAIN_DIR = Path(__file__).resolve().parents[1] / "toolchain"


def make_sandbox(kind: Kind, project: Path, home: Path, *, read_only: list[Path] | None = None,
                 limits: SandboxLimits | None = None, workspaces: Path | None = None,
                 docker: DockerConfig | None = None, label: str = "tier2", isolation: IsolationConfig | None = None,
                 cgroups: CgroupConfig | None = None, owner: SandboxOwner | None = None) -> Sandbox:
    """A sandbox of ``kind`` over ``project``; ``home`` holds tier2's files for it (outside the project),
    ``read_only`` the extra host paths commands may read (the pack's packages, skills; the toolchain is added);
    ``isolation``/``cgroups``: the security config's ``[sandbox.isolation]`` / ``[sandbox.cgroups]``; ``owner``: the
    run attempt it works for (its executors are stopped when a newer attempt of the run opens its sandbox)."""
    spec = SandboxSpec(project=project.resolve(), home=home,
                       read_only=tuple(dict.fromkeys([TOOLCHAIN_DIR, *(read_only or [])])),
                       limits=limits or SandboxLimits(), label=label, owner=owner,
                       isolation=isolation or IsolationConfig(),
                       cgroups=cgroups or CgroupConfig())
    if kind == "local":
        return LocalSandbox(spec)
    if kind == "isolated":
        return BwrapSandbox(spec)
    if kind == "docker":
        root = (workspaces or home.parent) / ".docker"
        return DockerSandbox(spec, DockerEngine.shared(root, docker or DockerConfig()))
    raise ValueError(f"unknown workspace kind {kind!r}")

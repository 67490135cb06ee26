"""Fixtures for the workspace-kind tests: a sandbox of each kind over a fresh project, and a private Docker daemon.

The docker kind runs against a daemon this test session starts itself (its own data root, exec root, pidfile and
socket in a temporary directory, with ``--bridge=none --iptables=false --ip-forward=false --ip-masq=false``; the
host's network is never touched) or the one ``TIER2_DOCKER_HOST`` names; tests of that kind are skipped, with the
reason, when neither can run here.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tier2.packs import Pack
from tier2.sandbox import Sandbox, bwrap_available, docker_available, make_sandbox
from tier2.sandbox.docker import DockerEngine
from tier2.settings.sandbox import DockerConfig, SandboxLimits
from tier2.workspace import new_project

KINDS = ["local", "isolated", "docker"]
_DOCKER_SKIP: dict[str, str] = {}
#: the host's network state before this session's Docker daemon started (it must be the same after)
HOST_NET: dict[str, str] = {}
SANDBOXED = ["isolated", "docker"]


@pytest.fixture(scope="session")
def docker_host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str | None]:
    """The unix socket of a Docker daemon for this session (None: docker cannot run here)."""
    if docker_available():
        yield None
        return
    configured = os.environ.get("TIER2_DOCKER_HOST")
    HOST_NET["ip_forward"] = Path("/proc/sys/net/ipv4/ip_forward").read_text().strip()
    HOST_NET["docker0"] = str(Path("/sys/class/net/docker0").exists())
    engine = DockerEngine(tmp_path_factory.mktemp("docker"), DockerConfig(host=configured))
    try:
        engine.ensure()
    except Exception as exc:  # noqa: BLE001 - reported as the skip reason
        _DOCKER_SKIP["reason"] = f"no Docker daemon could be started here: {exc}"
        yield None
        return
    previous = os.environ.get("TIER2_DOCKER_HOST")
    os.environ["TIER2_DOCKER_HOST"] = engine.host
    try:
        yield engine.host
    finally:
        if previous is None:
            os.environ.pop("TIER2_DOCKER_HOST", None)
        else:
            os.environ["TIER2_DOCKER_HOST"] = previous
        engine.stop()


def skip_unless_kind(kind: str, docker_host: str | None) -> None:
    if kind == "isolated" and (why := bwrap_available()):
        pytest.skip(f"isolated: {why}")
    if kind == "docker" and docker_host is None:
        why = docker_available() or _DOCKER_SKIP.get("reason", "no Docker daemon")
        pytest.skip(f"docker: {why}")


@pytest.fixture
def project(tmp_path: Path, pack: Pack) -> Path:
    dest = tmp_path / "game"
    new_project(pack, dest, "p-sandbox")
    return dest.resolve()


@pytest.fixture(params=KINDS)
async def sandbox(request: pytest.FixtureRequest, docker_host: str | None, project: Path, pack: Pack,
                  tmp_path: Path) -> AsyncIterator[Sandbox]:
    kind = request.param
    skip_unless_kind(kind, docker_host)
    box = make_sandbox(kind, project, tmp_path / "home", read_only=[pack.node_modules, *pack.skill_dirs],
                       limits=SandboxLimits(pids=256, memory_mb=2048), workspaces=tmp_path / "ws")
    await box.start()
    try:
        yield box
    finally:
        await box.close()

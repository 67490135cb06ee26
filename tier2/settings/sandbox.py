"""Workspace kinds and their ceilings (security config ``[sandbox]``; hot policy ``sandbox:`` may only lower them).

* ``local``    — today's host workspace: file tools behind the path guard, Build/RunGame on the host, no Bash;
* ``isolated`` — bubblewrap: read-only system, only the project writable, no network, no host home or secrets,
  all capabilities dropped, user/pid/ipc/uts/net namespaces, resource limits (prlimit, cgroup when available);
* ``docker``   — a container per run from an image built locally (no registry), ``--network none``, read-only root,
  memory/cpu/pids limits, the project the only writable volume.

The compiled ceilings below bound every configured value; **network is never allowed** (the field exists so the
config states it, and only ``false`` validates). A run's ``workspace`` option and the hot policy can pick among the
allowed kinds and lower limits, never raise them (`tier2.sandbox.policy`).
"""

from __future__ import annotations

from typing import Final, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["KINDS", "Kind", "SandboxConfig", "SandboxLimits", "SandboxLimitsOverride", "SandboxPolicy",
           "CommandConfig", "DockerConfig", "IsolationConfig", "CgroupConfig",
           "MEMORY_MB_CEILING", "PIDS_CEILING", "CPU_S_CEILING", "FILE_MB_CEILING", "NOFILE_CEILING"]

Kind = Literal["local", "isolated", "docker"]
KINDS: Final[tuple[Kind, ...]] = ("local", "isolated", "docker")

MEMORY_MB_CEILING: Final = 16_384
PIDS_CEILING: Final = 4096
CPU_S_CEILING: Final = 3600
FILE_MB_CEILING: Final = 2048
NOFILE_CEILING: Final = 4096


class SandboxLimits(BaseModel):
    """Per-sandbox resource limits (every command, build and browser of one run's workspace)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    memory_mb: int = Field(default=3072, ge=64, le=MEMORY_MB_CEILING)  # cgroup / docker --memory
    pids: int = Field(default=512, ge=16, le=PIDS_CEILING)  # processes+threads: RLIMIT_NPROC in the userns, pids cgroup
    cpus: float = Field(default=1.5, gt=0, le=64)  # docker --cpus
    cpu_s: int = Field(default=900, ge=1, le=CPU_S_CEILING)  # RLIMIT_CPU of each command
    file_mb: int = Field(default=512, ge=1, le=FILE_MB_CEILING)  # RLIMIT_FSIZE: the largest file a command writes
    nofile: int = Field(default=1024, ge=64, le=NOFILE_CEILING)  # RLIMIT_NOFILE

    def lowered(self, other: SandboxLimits | SandboxLimitsOverride | None) -> SandboxLimits:
        """The field-wise minimum with ``other``'s set fields (hot policy / run options never raise a limit)."""
        if other is None:
            return self
        return SandboxLimits(**{k: min(getattr(self, k), v) if (v := getattr(other, k)) is not None
                                else getattr(self, k) for k in type(self).model_fields})


class SandboxLimitsOverride(BaseModel):
    """Hot policy ``sandbox.limits``: only the fields it names, each only lowering the security config's."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    memory_mb: int | None = Field(default=None, ge=64)
    pids: int | None = Field(default=None, ge=16)
    cpus: float | None = Field(default=None, gt=0)
    cpu_s: int | None = Field(default=None, ge=1)
    file_mb: int | None = Field(default=None, ge=1)
    nofile: int | None = Field(default=None, ge=64)


class CommandConfig(BaseModel):
    """The writer's Bash command sessions."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    slice_s: float = Field(default=10.0, gt=0, le=120)  # a command still running after this returns a session id
    max_slice_s: float = Field(default=60.0, gt=0, le=600)  # the most a call may ask to wait
    output_chars: int = Field(default=8000, ge=200, le=100_000)  # shown per call; the rest is in the log
    log_bytes: int = Field(default=20_000_000, ge=10_000, le=200_000_000)  # a session's full log (then cut)
    max_sessions: int = Field(default=4, ge=1, le=32)  # live sessions per run
    stdin_chars: int = Field(default=100_000, ge=1, le=1_000_000)


class DockerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    image: str = "tier2-sandbox:local"  # built locally by tier2 (`docker import` of a skeleton rootfs), never pulled
    #: an existing daemon socket to use (else tier2 starts a private dockerd with host networking untouched)
    host: str | None = None
    start_timeout_s: float = Field(default=20.0, gt=0)


class IsolationConfig(BaseModel):
    """The unprivileged host identities of everything tenant- or model-influenced, when tier2 runs as root
    (`tier2.sandbox.identity`): bubblewrap is started as ``uid``/``gid`` (so the sandbox maps to it, never to root),
    docker containers run ``--user uid:gid``, the local kind's Chromium runs as ``browser_uid``/``browser_gid``
    with its own sandbox on. Run as a non-root user, tier2 uses its own uid for both (it is unprivileged already)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    uid: int = Field(default=70000, ge=1000, le=2**31 - 2)
    gid: int = Field(default=70000, ge=1000, le=2**31 - 2)
    browser_uid: int = Field(default=70001, ge=1000, le=2**31 - 2)
    browser_gid: int = Field(default=70001, ge=1000, le=2**31 - 2)

    @model_validator(mode="after")
    def _distinct(self) -> IsolationConfig:
        if self.uid == self.browser_uid:
            raise ValueError("sandbox.isolation: uid and browser_uid must differ (the shared browser must not "
                             "be able to signal or trace the sandboxes' processes)")
        return self


class CgroupConfig(BaseModel):
    """Where ``isolated`` makes a pids and a memory cgroup per sandbox (`tier2.sandbox.cgroups`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: where the cgroup file systems are mounted (v1 hierarchies under it, or v2 at it / at ``unified``)
    mount: str = "/sys/fs/cgroup"
    #: a delegated cgroup v2 directory tier2 makes its sandboxes' cgroups in (unset: ``<v2 mount>/tier2``)
    v2_root: str | None = None
    #: run ``isolated`` with prlimit-only limits where no cgroup can be made (else it is refused): a fork bomb
    #: or an OOM inside then reaches the host's uid-wide limits, shared by every sandbox
    accept_rlimit_only: bool = False


class SandboxConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    allowed_kinds: list[Kind] = ["local", "isolated", "docker"]
    default_kind: Kind = "local"
    network: Literal[False] = False  # ceiling: no workspace kind ever gets a network
    limits: SandboxLimits = SandboxLimits()
    commands: CommandConfig = CommandConfig()
    docker: DockerConfig = DockerConfig()
    isolation: IsolationConfig = IsolationConfig()
    cgroups: CgroupConfig = CgroupConfig()

    @model_validator(mode="after")
    def _default_allowed(self) -> SandboxConfig:
        if not self.allowed_kinds:
            raise ValueError("sandbox.allowed_kinds must name at least one workspace kind")
        if self.default_kind not in self.allowed_kinds:
            raise ValueError(f"sandbox.default_kind {self.default_kind!r} is not in allowed_kinds "
                             f"{self.allowed_kinds}")
        return self


class SandboxPolicy(BaseModel):
    """Hot policy ``sandbox:``: may narrow the allowed kinds, pick the default among them and lower limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    allowed_kinds: list[Kind] | None = None
    default_kind: Kind | None = None
    network: bool = False  # asking for network is refused: the security ceiling is always false
    limits: SandboxLimitsOverride | None = None

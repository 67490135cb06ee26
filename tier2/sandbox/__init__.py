"""Workspace kinds behind one contract (files, exec, build, browser, skills): ``local``, ``isolated``
(bubblewrap), ``docker``; the writer's command sessions; the choice of a kind under the security ceilings."""

from tier2.sandbox.base import BASE_ENV, ExecResult, Sandbox, SandboxOwner, SandboxSpec
from tier2.sandbox.bwrap import BwrapSandbox, bwrap_available
from tier2.sandbox.commands import CommandReport, CommandSessions, UnknownSession
from tier2.sandbox.docker import DockerEngine, DockerSandbox, docker_available
from tier2.sandbox.factory import TOOLCHAIN_DIR, make_sandbox
from tier2.sandbox.local import LocalSandbox
from tier2.sandbox.policy import WorkspaceChoice, allowed_kinds, resolve_workspace

__all__ = ["BASE_ENV", "BwrapSandbox", "CommandReport", "CommandSessions", "DockerEngine", "DockerSandbox",
           "ExecResult", "LocalSandbox", "Sandbox", "SandboxOwner", "SandboxSpec", "TOOLCHAIN_DIR", "UnknownSession",
           "WorkspaceChoice", "allowed_kinds", "bwrap_available", "docker_available", "make_sandbox",
           "resolve_workspace"]

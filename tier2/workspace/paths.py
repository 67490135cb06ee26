"""The path policy of a project: what an agent's tool call may name, checked exactly as the tool will use it.

One owner for "is this path inside the project": the path guard (every file-tool argument), tier2's own
Glob/Grep tools and the project importer use these functions, so the rule cannot drift between them.

* A path must be **absolute** (a relative path would be resolved against the tool's working directory, which is
  not the project) and its real path (symlinks resolved) must be the project root or below it.
* Some names inside a project belong to tier2 and AgentScope, not to the game: the agent may read them where
  they exist but never write them (``dist/`` is written by the Build tool only; ``.tier2/`` holds reports;
  ``delivery.json`` is the run's record; ``.mcp``/``skills``/``sessions`` are AgentScope workspace files, which
  live outside the project — a copy inside a project is inert, and nobody may plant one).
"""

from __future__ import annotations

import os
from pathlib import PurePosixPath

__all__ = ["RESERVED_NAMES", "PathRefused", "resolve_inside", "check_writable", "check_glob_pattern"]

#: Top-level names of a project that no agent or tenant may write (see the module docstring).
RESERVED_NAMES = frozenset({".mcp", "skills", "sessions", ".tier2", "delivery.json", "screenshot.png", "dist",
                            "node_modules", ".git"})


class PathRefused(ValueError):
    """A path an agent's tool call may not use; the message is meant for the agent."""


def _has_control(value: str) -> bool:
    return any(ord(c) < 32 or c == "\x7f" for c in value)


def resolve_inside(root: str, candidate: object, *, what: str = "path") -> str:
    """The real path of ``candidate`` if it is an absolute path inside ``root``; else `PathRefused`."""
    if not isinstance(candidate, str) or not candidate:
        raise PathRefused(f"{what} is required and must be an absolute path inside the project {root}")
    if _has_control(candidate) or len(candidate) > 4096:
        raise PathRefused(f"{what} contains control characters or is too long")
    if not os.path.isabs(candidate):
        raise PathRefused(f"{what} {candidate!r} is relative: use an absolute path inside the project {root}")
    root_real = os.path.realpath(root)
    real = os.path.realpath(candidate)
    if real != root_real and not real.startswith(root_real + os.sep):
        raise PathRefused(f"{candidate} is outside the project directory {root}")
    return real


def check_writable(root: str, candidate: object) -> str:
    """`resolve_inside`, and not one of the project's reserved names (`RESERVED_NAMES`)."""
    real = resolve_inside(root, candidate, what="file_path")
    rel = os.path.relpath(real, os.path.realpath(root))
    if rel == ".":
        raise PathRefused("file_path names the project directory itself")
    top = rel.split(os.sep, 1)[0]
    if top in RESERVED_NAMES:
        raise PathRefused(f"{candidate}: {top} is reserved (written by tier2, not by agents)")
    return real


def check_glob_pattern(pattern: object) -> str:
    """A glob pattern relative to its base directory: not absolute, no ``..`` segment, no control characters, at
    most one ``**`` (each extra one multiplied the work of a recursive walk)."""
    if not isinstance(pattern, str) or not pattern:
        raise PathRefused("pattern is required")
    if _has_control(pattern) or len(pattern) > 1000:
        raise PathRefused("pattern contains control characters or is too long")
    if pattern.startswith(("/", "~")) or ".." in PurePosixPath(pattern).parts:
        raise PathRefused(f"pattern {pattern!r} must be relative to path and may not contain '..'")
    if pattern.count("**") > 1:
        raise PathRefused(f"pattern {pattern!r} has more than one '**': one already matches any depth")
    return pattern

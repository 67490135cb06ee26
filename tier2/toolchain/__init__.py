"""Build toolchain: the esbuild runner (plain async functions, no agent types)."""

from tier2.toolchain.esbuild import BuildError, BuildResult, run_build

__all__ = ["BuildError", "BuildResult", "run_build"]

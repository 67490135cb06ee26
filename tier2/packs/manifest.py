"""The capability-pack manifest (``pack.yaml``): a validated, frozen description of one engine's support."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["EngineSpec", "BuildProfile", "PackManifest"]


class EngineSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    version: str


class BuildProfile(BaseModel):
    """How esbuild bundles a project of this pack (options are data; the confined runner owns the build)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    entry: str = "src/main.js"
    outfile: str = "dist/bundle.js"
    format: Literal["iife", "esm"] = "iife"
    minify: bool = True
    target: str = "es2020"
    sourcemap: bool = False
    loaders: dict[str, str] = {".json": "json"}
    html: str = "index.html"
    max_bundle_bytes: int = 5_000_000


class PackManifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str
    version: str
    engine: EngineSpec
    contract: int
    template: str = "template"
    skills: list[str] = []
    build: BuildProfile = BuildProfile()
    data_tables: list[str] = []
    behaviours: list[str] = []

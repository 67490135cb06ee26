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
    #: the folder of genre templates (``<genres_dir>/<id>/genre.yaml``, see `tier2.packs.genres`)
    genres_dir: str = "genres"
    #: the genre a project gets when nothing names one
    default_genre: str
    skills: list[str] = []
    build: BuildProfile = BuildProfile()
    #: the pack's docs for agents and retrieval (markdown files)
    docs: str = "docs"
    #: genres a brief may name that the pack cannot build: genre id -> brief words (honest scope)
    unsupported_genres: dict[str, list[str]] = {}

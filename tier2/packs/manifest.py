"""The capability-pack manifest (``pack.yaml``): a validated, frozen description of one engine's support."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

__all__ = ["AdapterSpec", "EngineSpec", "BuildProfile", "PackManifest", "PackTexts"]


class EngineSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the npm package (``node_modules/<name>``) pinned at ``version``
    name: str
    version: str
    #: the engine as prompts and texts name it
    title: str


class AdapterSpec(BaseModel):
    """The pack's engine adapter (`tier2.packs.engine`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the adapter's folder in the pack (a Python package plus its in-page scripts)
    dir: str = "adapter"
    #: the engine's own names and APIs: none of them may appear in core (tests/unit/packs/test_core_knows_no_engine.py)
    identifiers: list[str] = []


class PackTexts(BaseModel):
    """Engine-facing texts prompts and the design take from the pack, never from core."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the skill that defines the game contract (the writer prompt names it)
    contract_skill: str
    #: the skill `tier2 packs docs` regenerates from the genres' schemas
    tables_skill: str
    #: design notes by designer role (e.g. ``audio``: what the pack does not ship), stated in the design
    scope_notes: dict[str, str] = {}


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
    adapter: AdapterSpec = AdapterSpec()
    texts: PackTexts
    contract: int
    #: the folder of genre templates (``<genres_dir>/<id>/genre.yaml``, see `tier2.packs.genres`)
    genres_dir: str = "genres"
    #: the genre a project gets when nothing names one
    default_genre: str
    skills: list[str] = []
    build: BuildProfile = BuildProfile()
    #: the pack's docs for agents and retrieval (markdown files)
    docs: str = "docs"
    #: the engine's defect taxonomy (a seed-protocol JSON in the pack; `tier2.learning.taxonomy`), empty: none
    taxonomy: str = ""
    #: genres a brief may name that the pack cannot build: genre id -> brief words (honest scope)
    unsupported_genres: dict[str, list[str]] = {}

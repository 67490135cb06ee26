"""Capability packs: manifests (content lives in ``capability_packs/<id>/``), loading and the registry."""

from tier2.packs.engine import EngineAdapter, choose_adapter
from tier2.packs.genres import Genre, GenreSpec
from tier2.packs.knobs import Applied, Knob, KnobEdit
from tier2.packs.manifest import BuildProfile, PackManifest
from tier2.packs.registry import Pack, configured_pack, load_pack, pack_by_ref

__all__ = ["Applied", "BuildProfile", "EngineAdapter", "Genre", "GenreSpec", "Knob", "KnobEdit", "Pack", "PackManifest",
           "choose_adapter", "configured_pack", "load_pack", "pack_by_ref"]

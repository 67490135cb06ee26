"""Capability packs: manifests (content lives in ``capability_packs/<id>/``), loading and the registry."""

from tier2.packs.genres import Genre, GenreSpec
from tier2.packs.knobs import Applied, Knob, KnobEdit
from tier2.packs.manifest import BuildProfile, PackManifest
from tier2.packs.registry import Pack, load_pack, pack_by_ref

__all__ = ["Applied", "BuildProfile", "Genre", "GenreSpec", "Knob", "KnobEdit", "Pack", "PackManifest", "load_pack",
           "pack_by_ref"]

"""Capability packs: manifests (content lives in ``capability_packs/<id>/``), loading and the registry."""

from tier2.packs.manifest import BuildProfile, PackManifest
from tier2.packs.registry import Pack, load_pack

__all__ = ["BuildProfile", "Pack", "PackManifest", "load_pack"]

"""Shared constants and source-mutation helpers for the static gate tests."""

from __future__ import annotations

import importlib
import re
from types import ModuleType

from tier2.packs import load_pack
from tier2.settings.loader import REPO_ROOT

PACK = REPO_ROOT / "capability_packs" / "phaser"
NODE_MODULES = PACK / "node_modules"
CREATE_GAME = "@phaserjs/create-game@1.3.2"
DEMOS = ("coin-clicker", "memory-card-game", "phasers-revenge")
#: the pack's engine adapter, as the validators load it (its modules: `adapter_module`)
ADAPTER = load_pack(REPO_ROOT / "capability_packs", "phaser").adapter
#: the shop genre's whole template (the pack's common parts under the genre's own files)
TEMPLATE = load_pack(REPO_ROOT / "capability_packs", "phaser").genre("shop").template_dir


def adapter_module(name: str) -> ModuleType:
    """A module of the Phaser adapter (``api``, ``engine_calls``, ``engine_version``, ``dts``) — the very module
    object the validators run, so a monkeypatch reaches them."""
    return importlib.import_module(f"{ADAPTER.module.__name__}.{name}")


def inject(src: dict[str, str], file: str, code: str) -> dict[str, str]:
    """A copy of `src` with `code` inserted as the first statement of `file`'s create() method."""
    text = src[file]
    m = re.search(r"^(\s*)create\s*\([^)]*\)\s*\{\n", text, re.M)
    assert m, f"{file} has no create() method to inject into"
    out = dict(src)
    out[file] = text[: m.end()] + f"{m.group(1)}  {code}\n" + text[m.end():]
    return out


def injected_line(src: dict[str, str], file: str, code: str) -> int:
    return src[file].splitlines().index(next(ln for ln in src[file].splitlines() if ln.strip() == code)) + 1

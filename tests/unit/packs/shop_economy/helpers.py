from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from tier2.packs import load_pack
from tier2.settings.loader import REPO_ROOT


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def error_messages(result) -> list[str]:
    return [f.message for f in result.findings if f.severity == "error"]


def shop_economy() -> Any:
    """The shop genre's economy package (its linkage and economy gates), imported the way the pack loads it."""
    pack = load_pack(Path(REPO_ROOT) / "capability_packs", "phaser")
    pack.genre("shop").code  # noqa: B018 - registers the genre's package
    return importlib.import_module(f"{pack.genre('shop').package}.economy")

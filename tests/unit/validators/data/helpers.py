from __future__ import annotations

import json
from pathlib import Path


def read_json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def error_messages(result) -> list[str]:
    return [f.message for f in result.findings if f.severity == "error"]

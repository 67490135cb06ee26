"""Fail when a tier2 module imports a package from a higher architectural layer (every import, lazy ones too).

Direction: app/cli → service → runs → assembly → tools → {validators, middleware, models}
→ {workspace, browser, toolchain, store, sandbox} → {packs, telemetry} → {events, settings, prompts} → errors.
Nothing imports ``service`` except the composition root; ``validators`` never imports ``assembly``.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

RANKS: dict[str, int] = {
    "errors": 0,
    "events": 1, "settings": 1, "prompts": 1,
    "packs": 2, "telemetry": 2,
    "workspace": 3, "browser": 3, "toolchain": 3, "store": 3, "sandbox": 3,
    "validators": 4, "middleware": 4, "models": 4,
    "tools": 5,
    "assembly": 6, "design": 6,
    "runs": 7,
    "service": 8,
    "app": 9, "testing": 9,
    "cli": 10,
    "__main__": 11, "__init__": 11,
}


def top(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "tier2" and len(parts) > 1 else None


def check(root: Path) -> list[str]:
    problems: list[str] = []
    for path in sorted((root / "tier2").rglob("*.py")):
        rel = path.relative_to(root)
        own = rel.parts[1].removesuffix(".py")
        if own not in RANKS:
            problems.append(f"{rel}: package {own!r} has no layer in ci/check_imports.py")
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(rel))):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                other = top(name)
                if other is None or other == own:
                    continue
                if other not in RANKS:
                    problems.append(f"{rel}:{node.lineno}: imports unknown package tier2.{other}")
                elif RANKS[other] >= RANKS[own] and own != "__init__":
                    problems.append(f"{rel}:{node.lineno}: {own} (layer {RANKS[own]}) must not import "
                                    f"tier2.{other} (layer {RANKS[other]})")
    return problems


if __name__ == "__main__":
    found = check(Path(__file__).resolve().parents[1])
    for p in found:
        print(p)
    print(f"import direction: {len(found)} violation(s)")
    sys.exit(1 if found else 0)

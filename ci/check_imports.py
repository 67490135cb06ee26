"""Fail when a tier2 module imports a package from a higher architectural layer (every import, lazy ones too).

Direction: app/cli/client → {service, studio} → runs → assembly → {tools, learning, companions} → {validators,
middleware, models, context} → {workspace, browser, toolchain, store, sandbox} → {packs, telemetry, design} →
{events, settings, prompts} → {errors, hostio} (hostio: the one way to touch project files from the host).
Nothing imports ``service`` except the composition root; ``validators`` never imports ``assembly``.
Relative imports are resolved against the importing file's package first (``from ..runs import x`` inside
``tier2/service/`` is ``tier2.runs``).

Usage: ``python ci/check_imports.py [ROOT]`` (ROOT: the checkout holding ``tier2/``, default this one).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

RANKS: dict[str, int] = {
    "errors": 0, "hostio": 0,
    "events": 1, "settings": 1, "prompts": 1, "lexis": 1,
    "packs": 2, "telemetry": 2, "design": 2,
    "workspace": 3, "browser": 3, "toolchain": 3, "store": 3, "sandbox": 3,
    "validators": 4, "middleware": 4, "models": 4, "context": 4,
    "tools": 5, "learning": 5, "companions": 5,
    "assembly": 6,
    "runs": 7,
    "service": 8, "studio": 8,
    "app": 9, "testing": 9, "client": 9,
    "cli": 10,
    "__main__": 11, "__init__": 11,
}


def top(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if parts[0] == "tier2" and len(parts) > 1 else None


def absolute(node: ast.ImportFrom, rel: Path) -> list[str]:
    """The absolute module names a ``from ... import`` statement reaches (relative ones resolved)."""
    base = node.module or ""
    if node.level:
        package = list(rel.with_suffix("").parts[:-1])  # tier2/service/app.py or __init__.py: tier2.service
        if node.level - 1 >= len(package):
            return []                                    # climbs above tier2/: not a tier2 module
        base = ".".join([*package[:len(package) - (node.level - 1)], *([node.module] if node.module else [])])
    # `from tier2 import runs` and `from .. import runs` reach tier2.runs through the imported name (a name that is
    # no tier2 package, e.g. `from tier2 import __version__`, is an attribute of the package already named)
    subs = [f"{base}.{a.name}" for a in node.names if a.name != "*"]
    return [base, *(s for s in subs if top(s) in RANKS)]


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
            elif isinstance(node, ast.ImportFrom):
                names = absolute(node, rel)
            for other in dict.fromkeys(top(name) for name in names):
                if other is None or other == own:
                    continue
                if other not in RANKS:
                    problems.append(f"{rel}:{node.lineno}: imports unknown package tier2.{other}")
                elif RANKS[other] >= RANKS[own] and own != "__init__":
                    problems.append(f"{rel}:{node.lineno}: {own} (layer {RANKS[own]}) must not import "
                                    f"tier2.{other} (layer {RANKS[other]})")
    return problems


if __name__ == "__main__":
    found = check(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    for p in found:
        print(p)
    print(f"import direction: {len(found)} violation(s)")
    sys.exit(1 if found else 0)

"""Fail when a tier2 module imports a package from a higher architectural layer (every import, lazy ones too).

Direction: cli → evals → app/client → {service, studio} → runs → assembly → {tools, learning, companions} → {validators,
middleware, models, context} → {workspace, browser, toolchain, store, sandbox} → {packs, telemetry, design} →
{events, settings, prompts} → {errors, hostio} (hostio: the one way to touch project files from the host).
Nothing imports ``service`` except the composition root; ``validators`` never imports ``assembly``.
Relative imports are resolved against the importing file's package first (``from ..runs import x`` inside
``tier2/service/`` is ``tier2.runs``).

Also: no import cycle between tier2 modules, inside a package or across (every import counts, lazy and
``TYPE_CHECKING`` ones too — a cycle held together by a type-only import is still a cycle in the design); and the
run session (`tier2.runs.loop.session`) is imported only by the run's entry point (`tier2.runs.generate`): the
run's parts — phases, add-ons, setup — never import it.

Usage: ``python ci/check_imports.py [ROOT]`` (ROOT: the checkout holding ``tier2/``, default this one).
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

RANKS: dict[str, int] = {
    "errors": 0, "hostio": 0,
    "events": 1, "settings": 1, "prompts": 1, "lexis": 1, "plan": 1,
    "packs": 2, "telemetry": 2, "design": 2,
    "workspace": 3, "browser": 3, "toolchain": 3, "store": 3, "sandbox": 3,
    "validators": 4, "middleware": 4, "models": 4, "context": 4,
    "tools": 5, "learning": 5, "companions": 5,
    "assembly": 6,
    "runs": 7,
    "service": 8, "studio": 8,
    "app": 9, "testing": 9, "client": 9,
    "evals": 10,
    "cli": 11,
    "__main__": 12, "__init__": 12,
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


#: module → the only tier2 modules that may import it
ONLY_IMPORTED_BY: dict[str, frozenset[str]] = {
    "tier2.runs.loop.session": frozenset({"tier2.runs.generate"}),
}


_TREES: dict[Path, ast.Module] = {}


def parsed(path: Path, rel: Path) -> ast.Module:
    """Each file parsed once per check (the layer check and the cycle check walk the same trees)."""
    if path not in _TREES:
        _TREES[path] = ast.parse(path.read_text(), str(rel))
    return _TREES[path]


def import_nodes(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, lazy ones inside functions, classes, ``if``/``try``/``with`` blocks
    included. Only statement bodies are walked (an import is always a statement): a tenth of a full `ast.walk`."""
    found: list[ast.Import | ast.ImportFrom] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
            continue
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if isinstance(children, list):
                stack.extend(c for c in children if isinstance(c, ast.stmt | ast.excepthandler | ast.match_case))
    return sorted(found, key=lambda n: n.lineno)


def module_name(rel: Path) -> str:
    name = ".".join(rel.with_suffix("").parts)
    return name.removesuffix(".__init__")


def module_imports(root: Path) -> dict[str, dict[str, int]]:
    """Every tier2 module → the tier2 modules it imports (with the first line that does)."""
    modules = {module_name(p.relative_to(root)): p for p in sorted((root / "tier2").rglob("*.py"))}
    graph: dict[str, dict[str, int]] = {}
    for name, path in modules.items():
        rel = path.relative_to(root)
        edges: dict[str, int] = {}
        for node in import_nodes(parsed(path, rel)):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = absolute(node, rel)
            for target in names:
                if target in modules and target != name:
                    edges.setdefault(target, node.lineno)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(graph[w])))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    scc = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        scc.append(w)
                        if w == v:
                            break
                    if len(scc) > 1:
                        found.append(sorted(scc))
    return found


def check_graph(root: Path) -> list[str]:
    graph = module_imports(root)
    problems = [f"import cycle between {len(c)} modules: {' -> '.join(c)}" for c in cycles(graph)]
    for target, allowed in ONLY_IMPORTED_BY.items():
        for name, edges in graph.items():
            if target in edges and name not in allowed and name != target:
                path = name.replace(".", "/")
                problems.append(f"{path}.py:{edges[target]}: {name} must not import {target} (only "
                                f"{', '.join(sorted(allowed))} may)")
    return problems


def check(root: Path) -> list[str]:
    problems: list[str] = []
    for path in sorted((root / "tier2").rglob("*.py")):
        rel = path.relative_to(root)
        own = rel.parts[1].removesuffix(".py")
        if own not in RANKS:
            problems.append(f"{rel}: package {own!r} has no layer in ci/check_imports.py")
            continue
        for node in import_nodes(parsed(path, rel)):
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
    return problems + check_graph(root)


if __name__ == "__main__":
    found = check(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1])
    for p in found:
        print(p)
    print(f"import direction: {len(found)} violation(s)")
    sys.exit(1 if found else 0)

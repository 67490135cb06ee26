"""Fail when a module under tier2/ imports a denied module (the denylist is ``ci/forbidden_imports.txt``).

Every import form is checked: ``import x``, ``from x import y``, relative imports (resolved against the importing
file's package), ``importlib.import_module("x")`` (also ``import_module("..x", package=__package__)``) and
``__import__("x")`` when the module name is a string literal. Lazy imports inside functions count too.

Usage: ``python ci/check_forbidden_imports.py [--root DIR] [--denylist FILE]`` — exit 1 and one
``path:line: ...`` line per violation, exit 0 on a clean tree.
"""

from __future__ import annotations

import argparse
import ast
import sys
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_denylist(path: Path) -> list[str]:
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        name = line.split("#", 1)[0].strip()
        if name:
            if not all(part.isidentifier() for part in name.split(".")):
                raise SystemExit(f"{path}: not a module name: {name!r}")
            names.append(name)
    return names


def package_of(rel: Path) -> list[str]:
    """``tier2/service/app.py`` -> ``["tier2", "service"]``; a package's ``__init__.py`` is its own package."""
    return list(rel.with_suffix("").parts[:-1])


def resolve(module: str | None, level: int, package: list[str]) -> str | None:
    """The absolute name of a (possibly relative) module reference; None when it climbs above the root."""
    if level == 0:
        return module
    if level - 1 > len(package):
        return None
    base = package[:len(package) - (level - 1)]
    parts = base + (module.split(".") if module else [])
    return ".".join(parts) or None


def _literal(node: ast.expr | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _int_literal(node: ast.expr | None) -> int | None:
    return node.value if isinstance(node, ast.Constant) and type(node.value) is int else None


def _kwarg(call: ast.Call, name: str, position: int) -> ast.expr | None:
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return call.args[position] if len(call.args) > position else None


def imported(tree: ast.AST, package: list[str]) -> Iterator[tuple[int, str, str]]:
    """``(line, absolute module, how)`` for every import in the tree, including the dynamic forms."""
    importlib_names = {"importlib"}       # names bound to the importlib module
    import_module_names = set()           # names bound to importlib.import_module
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == "importlib":
                    importlib_names.add(a.asname or "importlib")
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module == "importlib":
            import_module_names.update(a.asname or a.name for a in node.names if a.name == "import_module")
    here = ".".join(package)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield node.lineno, a.name, f"import {a.name}"
        elif isinstance(node, ast.ImportFrom):
            how = f"from {'.' * node.level}{node.module or ''} import {', '.join(a.name for a in node.names)}"
            if node.level - 1 > len(package):
                continue
            base = resolve(node.module, node.level, package) or ""
            if base:
                yield node.lineno, base, how
            for a in node.names:  # `from x import y` may import the submodule x.y
                if a.name != "*":
                    yield node.lineno, f"{base}.{a.name}".lstrip("."), how
        elif isinstance(node, ast.Call):
            func = node.func
            is_import_module = (isinstance(func, ast.Attribute) and func.attr == "import_module"
                                and isinstance(func.value, ast.Name) and func.value.id in importlib_names) or (
                isinstance(func, ast.Name) and func.id in import_module_names)
            name = _literal(node.args[0]) if node.args else _literal(_kwarg(node, "name", 0))
            if name is None:
                continue
            if is_import_module:
                level = len(name) - len(name.lstrip("."))
                pkg_node = _kwarg(node, "package", 1)
                pkg = _literal(pkg_node)
                if pkg is None and isinstance(pkg_node, ast.Name) and pkg_node.id in ("__package__", "__name__"):
                    pkg = here
                target = resolve(name[level:] or None, level, pkg.split(".") if pkg else package) if level \
                    else name
                if target:
                    yield node.lineno, target, f"importlib.import_module({name!r})"
            elif isinstance(func, ast.Name) and func.id == "__import__":
                level = _int_literal(_kwarg(node, "level", 4)) or 0
                target = resolve(name, level, package)
                if target:
                    yield node.lineno, target, f"__import__({name!r})"


def denied_by(module: str, denylist: list[str]) -> str | None:
    return next((d for d in denylist if module == d or module.startswith(d + ".")), None)


def check(root: Path, denylist: list[str]) -> list[str]:
    problems: list[str] = []
    for path in sorted((root / "tier2").rglob("*.py")):
        rel = path.relative_to(root)
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(rel))
        except SyntaxError as exc:
            problems.append(f"{rel}:{exc.lineno}: cannot parse: {exc.msg}")
            continue
        seen: set[tuple[int, str]] = set()
        for line, module, how in sorted(imported(tree, package_of(rel)), key=lambda t: t[0]):
            rule = denied_by(module, denylist)
            if rule and (line, rule) not in seen:
                seen.add((line, rule))
                problems.append(f"{rel}:{line}: forbidden import of {module!r} ({how}); "
                                f"{rule!r} is denied by ci/forbidden_imports.txt")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=HERE.parent, help="checkout holding tier2/ (default: this one)")
    ap.add_argument("--denylist", type=Path, default=HERE / "forbidden_imports.txt")
    args = ap.parse_args(argv)
    if not (args.root / "tier2").is_dir():
        print(f"{args.root}: no tier2/ package here")
        return 2
    found = check(args.root, load_denylist(args.denylist))
    for p in found:
        print(p)
    print(f"forbidden imports: {len(found)} violation(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

"""The genre interface a pack implements, checked when the pack loads (`tier2.packs.genres.load_genres`).

A genre's Python is three modules of its folder; each hook has one signature — the parameters below, in this order
(more parameters only with defaults):

* ``builder.py``: ``build_tables(brief)`` → the offline tables (every ``data_tables`` entry), ``hold_tables(tables)``
  → the tables if they pass the genre's gates (raises otherwise), optionally ``adjust_count(tables, knob_id, n,
  brief)`` (a ``count_of`` knob) and ``MIRROR`` (the rules in Python, for the latch split);
* ``probe.py``: ``win_action(state, actions, tables)`` and ``lose_action(state, actions, tables)`` (a
  `tier2.packs.genres.ProbePolicy` each), optionally ``actions_from_controls(controls)`` (contract-1 games);
* ``checks.py`` (optional module): ``check_tables(tables, options)`` → the genre's data-check results.

`bind_genre_code` imports the modules, checks every hook and returns them typed (`GenreCode`); a genre that does
not meet the interface is refused with every reason at once (`PackError`), so ``tier2 packs check`` names them.
Callers use the bound hooks and nothing else: no attribute probing or signature sniffing at call time.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Final, Literal

from tier2.errors import PackError

__all__ = ["GENRE_HOOKS", "GenreCode", "Hook", "bind_genre_code"]

ModuleName = Literal["builder", "probe", "checks"]
Tables = dict[str, Any]
ProbePolicy = Callable[[dict[str, Any], dict[str, Any], dict[str, Any]], Any]


@dataclass(frozen=True)
class Hook:
    module: ModuleName
    name: str
    params: tuple[str, ...]
    required: bool


#: every hook of a genre's Python (the module docstring says what each does)
GENRE_HOOKS: Final = (
    Hook("builder", "build_tables", ("brief",), True),
    Hook("builder", "hold_tables", ("tables",), True),
    Hook("builder", "adjust_count", ("tables", "knob_id", "n", "brief"), False),
    Hook("probe", "win_action", ("state", "actions", "tables"), True),
    Hook("probe", "lose_action", ("state", "actions", "tables"), True),
    Hook("probe", "actions_from_controls", ("controls",), False),
    Hook("checks", "check_tables", ("tables", "options"), False),
)


@dataclass(frozen=True)
class GenreCode:
    """A genre's hooks, bound and checked."""

    build_tables: Callable[[str], Mapping[str, Any]]
    hold_tables: Callable[[Tables], Mapping[str, Any]]
    win_action: ProbePolicy
    lose_action: ProbePolicy
    adjust_count: Callable[[Tables, str, int, str], Mapping[str, Any]] | None = None
    actions_from_controls: Callable[[dict[str, Any]], Mapping[str, Any]] | None = None
    check_tables: Callable[[Tables, dict[str, Any]], list[Any]] | None = None
    #: the builder's rules in Python (``MIRROR``), when it has them
    mirror: Any = None


def _signature_problem(fn: Any, hook: Hook) -> str | None:
    if not callable(fn):
        return f"{hook.module}.{hook.name} is not a function"
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return f"{hook.module}.{hook.name}: its signature cannot be read"
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    names = tuple(p.name for p in positional[:len(hook.params)])
    extra = [p.name for p in positional[len(hook.params):] if p.default is p.empty]
    extra += [p.name for p in params if p.kind == p.KEYWORD_ONLY and p.default is p.empty]
    if names != hook.params or extra:
        got = ", ".join(p.name for p in params)
        return f"{hook.module}.{hook.name}({got}) must be {hook.name}({', '.join(hook.params)})"
    return None


def bind_genre_code(genre_id: str, load: Callable[[ModuleName], ModuleType | None]) -> GenreCode:
    """The genre's hooks from ``load(module name)`` (None: the genre has no such file); `PackError` naming every
    hook that is missing or has another signature."""
    problems: list[str] = []
    modules: dict[str, ModuleType | None] = {}
    for name in ("builder", "probe", "checks"):
        try:
            modules[name] = load(name)
        except PackError as exc:
            problems.append(str(exc))
            modules[name] = None
    for required in ("builder", "probe"):
        if modules[required] is None and not any(required in p for p in problems):
            problems.append(f"no {required}.py")
    bound: dict[str, Any] = {}
    for hook in GENRE_HOOKS:
        mod = modules[hook.module]
        if mod is None:
            continue
        fn = getattr(mod, hook.name, None)
        if fn is None:
            if hook.required:
                problems.append(f"{hook.module}.py has no {hook.name}({', '.join(hook.params)})")
            continue
        problem = _signature_problem(fn, hook)
        if problem:
            problems.append(problem)
        else:
            bound[hook.name] = fn
    if problems:
        raise PackError(f"genre {genre_id} does not meet the genre interface (tier2/packs/interface.py): "
                        + "; ".join(problems))
    builder = modules["builder"]
    return GenreCode(**bound, mirror=getattr(builder, "MIRROR", None))

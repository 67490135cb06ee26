"""A normalised crafting model and adapters from real game data (tier2 tables, minecraft-data, GRMC).

Every adapter is total: malformed rows are skipped (or become dangling references), never an exception, because
the input may be written by a model. Item ids are strings; ``references`` lists every place (``where``) that
names an item, so the linkage gate can report a dangling one exactly.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["CraftGraph", "Demand", "Recipe", "from_grmc", "from_minecraft", "from_tier2_tables", "item_edges",
           "self_sourced", "strongly_connected", "table"]


@dataclass(frozen=True)
class Recipe:
    id: str
    inputs: dict[str, int]
    outputs: dict[str, int]


@dataclass(frozen=True)
class Demand:
    """Something the game asks the player to produce (an order)."""

    id: str
    item: str
    qty: int = 1


@dataclass
class CraftGraph:
    items: set[str] = field(default_factory=set)
    raw: set[str] = field(default_factory=set)  # raw/buyable sources: available without crafting
    recipes: list[Recipe] = field(default_factory=list)
    demands: list[Demand] = field(default_factory=list)
    references: list[tuple[str, str]] = field(default_factory=list)  # (where, item id)


_T = TypeVar("_T")
_D = TypeVar("_D")


def _typed(value: object, kind: type[_T], default: _D) -> _T | _D:
    """``value`` when it is a ``kind``, else ``default`` (tables are untrusted JSON)."""
    return value if isinstance(value, kind) else default


def _qty(v: Any, default: int = 1) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else default


def _add(counts: dict[str, int], item: str, qty: int) -> None:
    counts[item] = counts.get(item, 0) + qty


def table(tables: dict[str, Any], name: str) -> dict[str, Any]:
    """``tables["<name>.json"]`` (or ``tables["<name>"]``) as a dict; {} when missing or not an object."""
    for key in (f"{name}.json", name):
        value = tables.get(key) if isinstance(tables, dict) else None
        if isinstance(value, dict):
            return value
    return {}


def rows(obj: dict[str, Any], key: str) -> list[tuple[int, dict[str, Any]]]:
    """(index, row) of the object rows of ``obj[key]`` (a list); [] when missing."""
    value = obj.get(key)
    return [(i, r) for i, r in enumerate(value) if isinstance(r, dict)] if isinstance(value, list) else []


def item_edges(recipes: Iterable[Recipe]) -> dict[str, set[str]]:
    """input -> output edges of the item graph, self-loops left out."""
    adj: dict[str, set[str]] = {}
    for r in recipes:
        for a in r.inputs:
            for b in r.outputs:
                if a != b:
                    adj.setdefault(a, set()).add(b)
    return adj


def strongly_connected(nodes: Iterable[str], adj: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components (iterative Tarjan; no recursion, so 10k+ nodes are fine)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(set(nodes) | set(adj)):
        if root in index:
            continue
        work = [(root, iter(sorted(adj.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(adj.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    comp.append(member)
                    if member == node:
                        break
                out.append(sorted(comp))
    return out


def self_sourced(nodes: Iterable[str], recipes: list[Recipe]) -> set[str]:
    """Members of the cycles (strongly connected components) that no recipe enters from outside.

    A component is entered when some recipe makes a member from inputs that are all outside it. An item that no
    recipe makes is a one-member component that nothing enters; so is one made only by recipes that consume it.
    """
    comps = strongly_connected(nodes, item_edges(recipes))
    comp = {n: k for k, members in enumerate(comps) for n in members}
    entered = {comp[out] for r in recipes for out in r.outputs
               if out in comp and not any(comp.get(i) == comp[out] for i in r.inputs)}
    return {n for n, k in comp.items() if k not in entered}


# --- tier2 tables -------------------------------------------------------------------------------------------------

def from_tier2_tables(tables: dict[str, Any]) -> CraftGraph:
    """The crafting graph of a tier2 game (docs/game-contract.md): raw = ``kind: raw`` items with a buy price."""
    g = CraftGraph()
    kinds: dict[str, Any] = {}
    for _, it in rows(table(tables, "items"), "items"):
        if isinstance(it.get("id"), str):
            g.items.add(it["id"])
            kinds.setdefault(it["id"], it.get("kind"))
    prices = table(tables, "prices")
    buy = _typed(prices.get("buy"), dict, None)
    g.raw = {i for i, k in kinds.items() if k == "raw" and (buy is None or i in buy)}

    def ref(where: str, item: Any) -> str:
        label = item if isinstance(item, str) else repr(item)
        g.references.append((where, label))
        return label

    for i, r in rows(table(tables, "recipes"), "recipes"):
        rid = _typed(r.get("id"), str, f"recipes[{i}]")
        at = f"recipes.json recipes[{i}] ({rid})"
        inputs: dict[str, int] = {}
        for j, inp in enumerate(_typed(r.get("inputs"), list, [])):
            if isinstance(inp, dict):
                _add(inputs, ref(f"{at}.inputs[{j}].item", inp.get("item")), _qty(inp.get("qty")))
        out = r.get("output")
        outputs: dict[str, int] = {}
        if isinstance(out, dict):
            _add(outputs, ref(f"{at}.output.item", out.get("item")), _qty(out.get("qty")))
        g.recipes.append(Recipe(rid, inputs, outputs))
    for i, o in rows(table(tables, "orders"), "orders"):
        oid = _typed(o.get("id"), str, f"orders[{i}]")
        item = ref(f"orders.json orders[{i}] ({oid}).item", o.get("item"))
        g.demands.append(Demand(oid, item, _qty(o.get("qty"))))
    for side in ("buy", "sell"):
        if isinstance(prices.get(side), dict):
            for item in prices[side]:
                ref(f"prices.json {side}.{item}", item)
    return g


# --- minecraft-data -----------------------------------------------------------------------------------------------

def from_minecraft(items_json: list[dict[str, Any]], recipes_json: dict[str, list[dict[str, Any]]],
                   blocks_json: list[dict[str, Any]] | None = None) -> CraftGraph:
    """minecraft-data ``items.json`` + ``recipes.json`` (shaped ``inShape``/``outShape``, shapeless ``ingredients``).

    Items are named by ``name``; an id that is not an item becomes ``"#<id>"`` (``"<block name>#<id>"`` when
    ``blocks_json`` names it). Each recipe variant is one Recipe (``<result name>#<variant>``); items left in the
    grid after crafting (``outShape``, e.g. empty buckets) are extra outputs. References are the ingredients (the
    result is what the recipe, keyed by its id, defines).

    Raw = items that no recipe makes without already holding a member of their own cycle (``self_sourced``). For
    an acyclic item that is "not the output of any recipe"; it also covers items whose every recipe starts from
    the item itself or its cycle (repairing an elytra, coal <-> coal_block, copper_ingot -> copper_block ->
    waxed_copper_block -> copper_ingot): those a Minecraft player mines or finds in the world.
    """
    names = {it["id"]: str(it["name"]) for it in items_json if isinstance(it, dict) and "id" in it and "name" in it}
    blocks = {b["id"]: str(b["name"]) for b in blocks_json or [] if isinstance(b, dict) and "id" in b and "name" in b}
    g = CraftGraph(items=set(names.values()))

    def label(entry: Any) -> str | None:
        iid = entry.get("id") if isinstance(entry, dict) else entry
        if iid is None:
            return None
        if iid in names:
            return names[iid]
        return f"{blocks[iid]}#{iid}" if iid in blocks else f"#{iid}"

    for key, variants in recipes_json.items():
        for v, var in enumerate(variants if isinstance(variants, list) else []):
            if not isinstance(var, dict):
                continue
            result = _typed(var.get("result"), dict, {})
            out_name = label(result) or f"#{key}"
            at = f"recipes[{key}][{v}] ({out_name})"
            inputs: dict[str, int] = {}
            outputs: dict[str, int] = {out_name: _qty(result.get("count"))}
            seen: set[str] = set()
            for part, target in (("inShape", inputs), ("ingredients", inputs), ("outShape", outputs)):
                cells = var.get(part) or []
                flat = [c for row in cells for c in (row if isinstance(row, list) else [row])]
                for c in flat:
                    name = label(c)
                    if name is not None:
                        _add(target, name, 1)
                        if target is inputs and name not in seen:
                            seen.add(name)
                            g.references.append((f"{at}.{part}", name))
            g.recipes.append(Recipe(f"{out_name}#{v}", inputs, outputs))
    g.raw = self_sourced(g.items, g.recipes) & g.items
    return g


# --- GRMC cooking game --------------------------------------------------------------------------------------------

def from_grmc(tables: dict[str, Any]) -> CraftGraph:
    """GRMC kitchen: INGREDIENTS are raw (always at hand), each RECIPE is a dish made of one of each ingredient.

    Demands: every level's ``scriptedOrderKeys``, plus (levels with ``allowRandomOrders``) every dish whose
    difficulty is in ``allowedDifficulties``.
    """
    ingredients = _typed(tables.get("INGREDIENTS"), dict, {})
    g = CraftGraph(items=set(ingredients), raw=set(ingredients))
    dishes: dict[str, Any] = {}
    for i, r in rows(tables, "RECIPES"):
        key = _typed(r.get("key"), str, f"RECIPES[{i}]")
        dishes[key] = r.get("difficulty")
        g.items.add(key)
        inputs: dict[str, int] = {}
        for j, ing in enumerate(_typed(r.get("ingredients"), list, [])):
            name = ing if isinstance(ing, str) else repr(ing)
            g.references.append((f"RECIPES[{i}] ({key}).ingredients[{j}]", name))
            _add(inputs, name, 1)
        g.recipes.append(Recipe(key, inputs, {key: 1}))
    for i, lvl in rows(tables, "LEVELS"):
        lid = lvl.get("id", i + 1)
        scripted = _typed(lvl.get("scriptedOrderKeys"), list, [])
        for j, key in enumerate(scripted):
            name = key if isinstance(key, str) else repr(key)
            g.references.append((f"LEVELS[{i}].scriptedOrderKeys[{j}]", name))
            g.demands.append(Demand(f"level{lid}:scripted[{j}]", name, 1))
        if lvl.get("allowRandomOrders"):
            allowed = lvl.get("allowedDifficulties")
            for key, diff in dishes.items():
                if not isinstance(allowed, list) or diff in allowed:
                    g.demands.append(Demand(f"level{lid}:random:{key}", key, 1))
    return g

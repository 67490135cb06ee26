"""L1 cross-table linkage: dangling references, unreachable demands and bootstrap-free cycles of a CraftGraph.

Rules (docs/architecture.md §3): every reference names an existing item; every demand (order) asks for a
**reachable** item, where reachable = raw ∪ outputs of recipes whose inputs are all reachable, to a fixpoint; a
cycle of the item graph (input → output edges, self-loops ignored) is an error only when it is bootstrap-free (no
member reachable). Self-loops (dyeing wool with wool) and storage round-trips (coal ↔ coal_block) are legitimate.
``strict_acyclic`` is a policy option that rejects every cycle of two or more items.
"""

from __future__ import annotations

import time

from tier2.validators.base import Finding, ValidationResult

from .graph import CraftGraph, item_edges, strongly_connected

__all__ = ["GATE_ID", "check_linkage", "reachable_items", "self_loops"]

GATE_ID = "l1.data_linkage"
EXAMPLES = 20


def reachable_items(graph: CraftGraph) -> set[str]:
    """raw ∪ outputs of recipes whose inputs are all reachable, to a fixpoint (worklist, linear time)."""
    reach = set(graph.raw)
    missing = [len(set(r.inputs)) for r in graph.recipes]
    waiting: dict[str, list[int]] = {}
    for k, r in enumerate(graph.recipes):
        for item in set(r.inputs):
            waiting.setdefault(item, []).append(k)
    fresh = list(reach)
    queue = [k for k, n in enumerate(missing) if n == 0]
    while fresh or queue:
        for item in fresh:
            for k in waiting.get(item, ()):
                missing[k] -= 1
                if missing[k] == 0:
                    queue.append(k)
        fresh = []
        for k in queue:
            for out in graph.recipes[k].outputs:
                if out not in reach:
                    reach.add(out)
                    fresh.append(out)
        queue = []
    return reach


def self_loops(graph: CraftGraph) -> list[tuple[str, str]]:
    """(recipe id, item) for every recipe that consumes an item it also produces."""
    return [(r.id, item) for r in graph.recipes for item in sorted(set(r.inputs) & set(r.outputs))]


def _members(cycle: list[str]) -> str:
    return "{" + ", ".join(cycle) + "}"


def check_linkage(graph: CraftGraph, strict_acyclic: bool = False) -> ValidationResult:
    """Dangling references, unreachable demands and bootstrap-free cycles are errors (every cycle when strict)."""
    started = time.perf_counter()
    dangling = [(where, item) for where, item in graph.references if item not in graph.items]
    reach = reachable_items(graph)
    unreachable = [d for d in graph.demands if d.item in graph.items and d.item not in reach]
    cycles = sorted((c for c in strongly_connected(graph.items, item_edges(graph.recipes)) if len(c) > 1),
                    key=lambda c: (-len(c), c))
    stranded = [c for c in cycles if not reach.intersection(c)]
    allowed = [c for c in cycles if reach.intersection(c)]
    strict = allowed if strict_acyclic else []
    loops = self_loops(graph)
    unreachable_items = sorted(graph.items - reach)

    findings = [Finding(message=f"{where}: unknown item {item!r} (dangling reference)")
                for where, item in dangling[:EXAMPLES]]
    findings += [Finding(message=f"demand {d.id}: item {d.item!r} is not reachable (no recipe chain makes it "
                                 f"from raw items)") for d in unreachable[:EXAMPLES]]
    findings += [Finding(message=f"bootstrap-free cycle {_members(c)}: its members only craft from each other and "
                                 f"none is obtainable from outside the cycle") for c in stranded[:EXAMPLES]]
    findings += [Finding(message=f"cycle {_members(c)} (policy: crafting graph strictly acyclic)")
                 for c in strict[:EXAMPLES]]
    for label, bad in (("dangling references", dangling), ("unreachable demands", unreachable),
                       ("bootstrap-free cycles", stranded), ("cycles", strict)):
        if len(bad) > EXAMPLES:
            findings.append(Finding(message=f"... and {len(bad) - EXAMPLES} more {label}"))
    errors = len(dangling) + len(unreachable) + len(stranded) + len(strict)
    if allowed and not strict_acyclic:
        findings.append(Finding(severity="info", message=f"{len(allowed)} bootstrapped cycle(s), allowed "
                                                        f"(e.g. {_members(allowed[0])})"))
    if loops:
        findings.append(Finding(severity="info", message=f"{len(loops)} self-loop recipe input(s), allowed "
                                                        f"(e.g. recipe {loops[0][0]})"))

    counts = {"items": len(graph.items), "raw": len(graph.raw), "recipes": len(graph.recipes),
              "demands": len(graph.demands), "references": len(graph.references), "dangling": len(dangling),
              "cycles": len(cycles), "bootstrap_free_cycles": len(stranded),
              "self_loops": len({i for _, i in loops}), "self_loop_recipes": len({r for r, _ in loops}),
              "unreachable_demands": len(unreachable), "unreachable_items": len(unreachable_items)}
    evidence = {
        **counts, "strict_acyclic": strict_acyclic,
        "cycle_sizes": {str(n): sum(len(c) == n for c in cycles) for n in sorted({len(c) for c in cycles})},
        "examples": {
            "dangling": [{"where": w, "item": i} for w, i in dangling[:EXAMPLES]],
            "unreachable_demands": [{"id": d.id, "item": d.item} for d in unreachable[:EXAMPLES]],
            "cycles": cycles[:EXAMPLES],
            "bootstrap_free_cycles": stranded[:EXAMPLES],
            "self_loops": [{"recipe": r, "item": i} for r, i in loops[:EXAMPLES]],
            "unreachable_items": unreachable_items[:EXAMPLES],
        },
    }
    passed = errors == 0
    facts = (f"{counts['items']} items, {counts['recipes']} recipes, {counts['dangling']} dangling, "
             f"{counts['unreachable_demands']} unreachable demands, {counts['cycles']} cycles "
             f"({counts['bootstrap_free_cycles']} bootstrap-free), {counts['self_loops']} self-loops")
    summary = ("ok: " if passed else f"failed ({errors} error(s)): ") + facts
    return ValidationResult(id=GATE_ID, layer="L1", passed=passed, summary=summary, findings=findings,
                            evidence=evidence, duration_ms=int((time.perf_counter() - started) * 1000))

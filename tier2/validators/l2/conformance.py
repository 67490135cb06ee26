"""One ``l2.req.<id>`` gate per spec requirement: its predicate judged on the play, the tables and the sources.

Contract mode reads the game's hook snapshots (state before/after each probed input, the latch-split plays);
where a predicate needs something the play did not exercise, the gate fails saying what was not observed — it
never passes on a guess. `completion_map` turns the gates into the delivery's "N of M requirements verified", the
structural (genre) and content (the brief's own words) requirements counted apart.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tier2.design.asset_pool import read_manifest
from tier2.hostio import ProjectDir
from tier2.packs import Pack
from tier2.validators.base import Finding, ValidationResult
from tier2.validators.l2.genre import genre_gate
from tier2.validators.trace import PlayTrace

__all__ = ["completion_map", "conformance_gates", "is_content", "requirement_gate_id"]



def requirement_gate_id(req_id: str) -> str:
    return f"l2.req.{req_id}"


def _states(trace: PlayTrace) -> list[dict[str, Any]]:
    out = []
    for p in trace.inputs:
        out += [s for s in (p.before, p.idle_after, p.after) if isinstance(s, dict)]
    return out


def _sources(project: Path | None) -> dict[str, str]:
    if project is None:
        return {}
    pdir = ProjectDir(project)  # never through a link (tier2.hostio)
    return {rel: text for sub in ("src", "data")
            for rel, text in pdir.text_files(sub, suffixes=(".js", ".ts", ".mjs", ".json"), max_bytes=999_999)}


def _changed(before: dict[str, Any] | None, after: dict[str, Any] | None, idle: dict[str, Any] | None) -> list[str]:
    if not isinstance(before, dict) or not isinstance(after, dict):
        return []
    drift = {k for k in before if isinstance(idle, dict) and idle.get(k) != before.get(k)}
    return [k for k in after if after.get(k) != before.get(k) and k not in drift and "ms" not in k.lower()]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def _label_shown(text: str, trace: PlayTrace | None, sources: dict[str, str]) -> tuple[bool, str, dict[str, Any]]:
    """A UI label is verified on screen: some text object drawn on a screen the play visited holds it (the
    display-list snapshots of `tier2.validators.legibility`). Being in the sources only is not being shown."""
    where = [name for name, body in sources.items() if text in body]
    found = f"; it is in {', '.join(where[:3])}" if where else "; it is not in src/ or data/ either"
    if trace is None or not trace.booted:
        return False, f"the game did not boot, so “{text}” could not be seen{found}", {"files": where[:5]}
    snaps = [s for s in trace.legibility if isinstance(s.get("texts"), list)]
    if not snaps:
        return False, f"no screen's texts could be read, so “{text}” could not be seen{found}", {"files": where[:5]}
    want = _norm(text)
    for snap in snaps:
        for item in snap["texts"]:
            drawn = item.get("text") if isinstance(item, dict) else None
            alpha = item.get("alpha_peak", item.get("alpha", 1)) if isinstance(item, dict) else 0
            if isinstance(drawn, str) and want in _norm(drawn) and not (isinstance(alpha, int | float) and alpha <= 0):
                scene = item.get("scene") or "?"
                return True, f"“{text}” drawn on screen {snap.get('screen')} (scene {scene})", {
                    "screen": snap.get("screen"), "scene": scene, "files": where[:5]}
    screens = ", ".join(str(s.get("screen")) for s in snaps[:6])
    return False, f"“{text}” is drawn on none of the screens the play visited ({screens}){found}", {
        "screens": [s.get("screen") for s in snaps], "files": where[:5]}


def _asset_role(role: str, asset: str, trace: PlayTrace, registered: set[str] | None,
                ) -> tuple[bool, str, dict[str, Any]]:
    """A display object the game reported for ``role`` in play drew the registered asset ``asset``."""
    report = trace.assets
    if report is None:
        return False, (f"the game reports no assets (window.__TIER2__.assets()), so the {role}'s look could not be "
                       "observed"), {}
    seen: dict[str, list[str]] = (report.get("roles") or {}).get(role) or {}
    ev: dict[str, Any] = {"role": role, "asset": asset, "seen": seen}
    if registered is not None and asset not in registered:
        shown = ", ".join(sorted(seen)) or "nothing"
        return False, (f"{asset} is not registered in assets/manifest.json (or does not verify); the {role} was "
                       f"drawn with {shown}"), ev
    if asset in seen:
        return True, f"the {role} is drawn with the registered asset {asset} (screens {', '.join(seen[asset])})", ev
    if not seen:
        return False, f"no display object was reported for role {role} on the screens the play visited", ev
    drawn = ", ".join(f"{k} ({', '.join(v)})" for k, v in sorted(seen.items()))
    return False, f"the {role} is drawn with {drawn}, not the registered asset {asset}", ev


def _judge(pred: dict[str, Any], trace: PlayTrace | None, tables: dict[str, Any], sources: dict[str, str],
           gates: dict[str, ValidationResult], registered: set[str] | None = None,
           ) -> tuple[bool, str, dict[str, Any]]:
    kind = pred.get("kind")
    if kind == "min_count":
        rows = (tables.get(pred["table"]) or {}).get(pred["field"])
        n = len(rows) if isinstance(rows, (list, dict)) else 0
        return n >= pred["n"], f"data/{pred['table']} has {n} {pred['field']} (need ≥ {pred['n']})", {"count": n}
    if kind == "table_value":
        return _table_value(pred, tables)
    if kind == "gate_passes":
        g = gates.get(pred["gate"])
        if g is None:
            return False, f"{pred['gate']} did not run on this build", {}
        return g.passed, f"{pred['gate']} {'passed' if g.passed else 'failed'}: {g.summary[:200]}", {"gate": g.id}
    if kind == "ui_label":
        return _label_shown(pred["text"], trace, sources)
    if trace is None or not trace.booted:
        return False, "the game did not boot, so this could not be observed", {}
    if kind == "asset_role":
        return _asset_role(pred["role"], pred["asset"], trace, registered)
    states = _states(trace)
    if kind == "scene_exists":
        scene = pred["scene"]
        seen = {trace.first_scene} | {s.get("scene") for s in states}
        if scene in seen:
            return True, f"scene {scene} shown in play", {"observed": True}
        pat = re.compile(rf"""(?:super\(\s*|key\s*:\s*)["']{re.escape(scene)}["']""")
        where = [n for n, body in sources.items() if n.startswith("src/") and pat.search(body)]
        return bool(where), (f"scene {scene} declared in {where[0]} (not reached by the scripted play)" if where
                             else f"no scene {scene}: not shown in play, not declared in src/"), {"files": where}
    if kind == "key_action":
        probes = [p for p in trace.inputs if p.key == pred["key"] or p.label == pred["action"]
                  or p.label.startswith(pred["action"] + "_")]
        if not probes:
            return False, (f"the scripted play never pressed {pred['key']} ({pred['action']}): not observed"), {}
        for p in probes:
            changed = _changed(p.before, p.after, p.idle_after)
            if changed:
                return True, f"{p.key} ({p.label}) changed {', '.join(changed[:5])}", {"changed": changed[:10]}
        return False, f"{pred['key']} ({pred['action']}) changed nothing in the game state", {}
    if kind == "play_outcome":
        latch = trace.latch or {}
        got = latch.get("win") if pred["outcome"] == "won" else latch.get("lose")
        return got == pred["outcome"], f"the scripted {pred['outcome']} play ended {got or 'without an outcome'}", {
            "latch": {k: latch.get(k) for k in ("win", "lose", "win_actions")}}
    if kind == "play_event":
        counter = pred["counter"]
        values = [s[counter] for s in states if isinstance(s.get(counter), (int, float))]
        if len(values) >= 2 and max(values) > values[0]:
            return True, f"{counter} went {values[0]} → {max(values)} in play", {"values": values[:10]}
        latch = trace.latch or {}
        w0, w1 = (latch.get("win_start") or {}).get(counter), (latch.get("win_end") or {}).get(counter)
        if isinstance(w0, (int, float)) and isinstance(w1, (int, float)) and w1 > w0:
            return True, (f"{counter} went {w0:g} → {w1:g} in the genre probe's win play "
                          f"({latch.get('win_actions')} actions through real key presses, ended "
                          f"{latch.get('win') or 'running'})"), {"win_play": [w0, w1]}
        return False, (f"the game state has no counter {counter}" if not values
                       else f"{counter} never went up in play ({values[0]})"), {}
    if kind == "state_value":
        key = pred["key"]
        start = next((s for s in states if s.get("scene") == "Play"), states[0] if states else {})
        v = start.get(key)
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            return False, f"the game state has no number {key}", {}
        ok = pred.get("min", v) <= v <= pred.get("max", v)
        return ok, f"{key} = {v} at the start of play (want {pred.get('min', '-')}..{pred.get('max', '-')})", {
            "value": v}
    return False, f"unknown predicate kind {kind!r}", {}


def _table_value(pred: dict[str, Any], tables: dict[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    """The value(s) at ``path`` in the built ``data/<table>`` (``a[*].b``: every element's) against ``equals`` /
    ``min`` / ``max``."""
    values: list[Any] = [tables.get(pred["table"])]
    for part in str(pred["path"]).split("."):
        star = part.endswith("[*]")
        key = part[:-3] if star else part
        nxt: list[Any] = []
        for v in values:
            item = v.get(key) if isinstance(v, dict) else None
            if star:
                nxt += list(item) if isinstance(item, list) else [None]
            else:
                nxt.append(item)
        values = nxt
    where = f"data/{pred['table']} {pred['path']}"
    if not values or any(v is None for v in values):
        return False, f"{where} is not in the built tables", {}

    def holds(v: Any) -> bool:
        if "equals" in pred:
            return bool(v == pred["equals"])
        if not isinstance(v, (int, float)) or isinstance(v, bool):
            return False
        return bool(pred.get("min", v) <= v <= pred.get("max", v))

    ok = all(holds(v) for v in values)
    want = (f"= {pred['equals']}" if "equals" in pred else f"{pred.get('min', '-')}..{pred.get('max', '-')}")
    shown = ", ".join(str(v) for v in values[:6]) + ("…" if len(values) > 6 else "")
    return ok, f"{where} is {shown} (want {want})", {"values": values[:20]}


def conformance_gates(spec: dict[str, Any], brief: str, trace: PlayTrace | None, tables: dict[str, Any] | None,
                      project: Path | None, earlier: list[ValidationResult], pack: Pack) -> list[ValidationResult]:
    """The genre gate, then one gate per requirement (a ``gate_passes`` requirement sees every other gate)."""
    genre = genre_gate(spec, brief, trace, pack)
    gates = {g.id: g for g in earlier} | {genre.id: genre}
    sources = _sources(project)
    registered = read_manifest(project).ids if project is not None else None
    out = [genre]
    for req in spec.get("requirements", []):
        ok, summary, evidence = _judge(req["predicate"], trace, tables or {}, sources, gates, registered)
        out.append(ValidationResult(
            id=requirement_gate_id(req["id"]), layer="L2", passed=ok, summary=f"{req['text']}: {summary}",
            findings=[] if ok else [Finding(message=f"{req['id']} ({req['source']}): {summary}")],
            evidence={"requirement": req["id"], "predicate": req["predicate"], **evidence,
                      **{k: req[k] for k in ("kind", "origin", "mode") if k in req}}))
    return out


def is_content(req: dict[str, Any]) -> bool:
    """A requirement from the brief's own words (``origin: brief``, or a content ``kind``) — not the genre's
    structure. A requirement with neither field (older specs, a model's) counts as structural."""
    return req.get("origin") == "brief" or req.get("kind") not in (None, "structural")


def _share(rows: list[dict[str, Any]]) -> dict[str, int]:
    return {"verified": sum(1 for r in rows if r["status"] == "verified"), "total": len(rows)}


def _content_summary(rows: list[dict[str, Any]]) -> str:
    """"content: 5 of 7 verified (unverified: 'city backdrop' — <why>; ...)"; "" when the spec has no content."""
    if not rows:
        return ""
    n = sum(1 for r in rows if r["status"] == "verified")
    missing = [r for r in rows if r["status"] != "verified"]
    why = "; ".join(f"'{r['text']}' — {r['reason'].removeprefix(r['text'] + ': ')[:140]}" for r in missing[:3])
    more = f"; {len(missing) - 3} more" if len(missing) > 3 else ""
    return f"content: {n} of {len(rows)} verified" + (f" (unverified: {why}{more})" if missing else "")


def completion_map(spec: dict[str, Any], gates: list[ValidationResult] | None, why_unverified: str = "",
                   kept: dict[str, list[str]] | None = None) -> dict[str, Any]:
    """Every requirement → the gate(s) that verified it, or ``unverified`` with the reason; the structural
    requirements (the genre's) and the content ones (from the brief's words) counted apart — ``structural`` and
    ``content`` ``{verified, total}`` — and the content line of the summary ("content: 5 of 7 verified
    (unverified: 'city backdrop' — why)"). ``kept``: requirement id -> the gates that verified it on the last
    build, for a run that built nothing (its plan node still verified, its inputs unchanged)."""
    by_id = {g.id: g for g in gates or []}
    rows = []
    for req in spec.get("requirements", []):
        gid = requirement_gate_id(req["id"])
        g = by_id.get(gid)
        verifying = [gid] if g is not None and g.passed else []
        if g is not None and g.passed and req["predicate"].get("kind") == "gate_passes":
            verifying.append(req["predicate"]["gate"])
        if not verifying and g is None and kept and req["id"] in kept:  # no build this run; the last one holds
            verifying = list(kept[req["id"]]) or [gid]
        reason = "" if verifying else (g.summary if g is not None else why_unverified or "no gate ran on a build")
        rows.append({"id": req["id"], "text": req["text"], "source": req["source"], "role": req.get("role"),
                     "kind": req.get("kind") or "structural", "origin": req.get("origin") or "genre",
                     **({"span": req["span"]} if "span" in req else {}),
                     **({"mode": g.mode} if g is not None else {}),
                     "status": "verified" if verifying else "unverified", "gates": verifying,
                     "reason": reason})
    n = sum(1 for r in rows if r["status"] == "verified")
    content = [r for r, req in zip(rows, spec.get("requirements", []), strict=True) if is_content(req)]
    structural = [r for r, req in zip(rows, spec.get("requirements", []), strict=True) if not is_content(req)]
    line = _content_summary(content)
    scope = spec.get("scope", {})
    return {"verified": n, "total": len(rows), "summary": f"{n} of {len(rows)} requirements verified" + (
        f" — {line}" if line else ""), "content_summary": line,
            "structural": _share(structural), "content": _share(content),
            "genre": spec.get("genre"), "buildable": scope.get("buildable"),
            "unsupported": scope.get("unsupported", []), "requirements": rows}

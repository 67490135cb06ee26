"""The offline writer policy: conversation in, next action out — a pure, deterministic function.

It plays the writer role with real tool calls, in this order:

1. ``Glob`` the project's ``src/**/*.js`` and ``data/*.json``;
2. ``Read`` every file it will rewrite (``Write`` refuses to overwrite unread files);
3. with the ``RequestAsset`` tool and a design (the run request names ``design/spec.json``): ``Grep`` the spec
   for its ``asset_role`` keys and request one asset per key (the player, the enemies... the spec names), under
   that very key (`asset_requests`; the tool records the requirements that name it);
4. ``Write`` the six data tables derived from the brief (`theme.derive_game`) and the ``src/`` files it read
   (the pack template's code with a header naming the game); if only part of that batch ran (a crash cut it),
   it writes the rest before building;
5. ``Build``; on a syntax error in a file it wrote, re-``Read`` and re-``Write`` that file from the content it
   first read (a repair), then ``Build`` again;
6. ``RunGame``; on a ``tier2 data error`` naming a table it wrote, rewrite that table in full, rebuild and rerun;
   — first, once per conversation and when it has the ``Explore`` tool, it asks the explorer which files read
   the key the error names (`tier2.companions`; the answer does not change what it writes);
7. finish with a summary when RunGame passes, or stop with ``STOP:`` and the reason when it sees an error it
   has no repair for, or when a repair did not help.

Steps 5 and 6 are the policy's own *fallback* repairs: with the debug case library on (`tier2.learning`), a known
fault is fixed by the library's fixer before the policy reads the failure; model parameter ``repairs: false``
turns the policy's repairs off altogether (it stops instead), so a run shows what the library fixes alone.

Faults (model parameter ``faults``) make the first write deliberately wrong — ``syntax_error`` in
``src/scenes/Play.js`` or ``missing_data_key``
(the first number of the last table with one: ``economy.start_money`` in the default genre) — so the repairs run.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any, Literal

from tier2.design.asset_pool import name_of
from tier2.design.assets import asset_key
from tier2.design.goal import split_goal
from tier2.models.offline.follow_up import effective_tables
from tier2.models.offline.history import Conversation, strip_line_numbers
from tier2.packs import Genre, pack_by_ref

__all__ = ["Action", "decide", "FAULTS", "MAX_REPAIRS", "asset_requests"]

FAULTS = frozenset({"syntax_error", "missing_data_key"})
MAX_REPAIRS = 2
_SYNTAX_TARGET = "src/scenes/Play.js"
_DATA_ERROR = re.compile(r"tier2 data error:?\s*(?:data/)?([a-z_]+\.json)", re.I)
#: a data error naming its table and key, or the debug case library's note of the key it restored
_DATA_KEY = re.compile(
    r"(?:tier2 data error:?\s*(?:data/)?|restored data/)([a-z_]+)\.json\s+(?:key\s+)?([A-Za-z_][\w.]*)", re.I)
#: pack files the policy leaves as they are (the asset loader shared by every template: nothing game-specific in it)
_KEEP = frozenset({"src/assets.js"})
_BUILD_LOC = re.compile(r"^- (?P<file>[^\s:]+):(?P<line>\d+):\d+: (?P<msg>.*)$", re.M)


@dataclass
class Action:
    """Tool calls to make (``calls``) or a final answer (``text``)."""

    kind: Literal["tools", "final"]
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    text: str = ""


def _rel(conv: Conversation, path: str) -> str:
    root = (conv.project or "").rstrip("/") + "/"
    return path[len(root):] if path.startswith(root) else path


def _abs(conv: Conversation, rel: str) -> str:
    return f"{(conv.project or '').rstrip('/')}/{rel}"


def _targets(conv: Conversation) -> list[str]:
    """Relative paths of the files to rewrite, from the Glob results."""
    found: list[str] = []
    for step in conv.steps:
        if step.name == "Glob" and step.ok and step.result:
            for line in step.result.splitlines():
                line = line.strip()
                if line.endswith((".js", ".json")) and "/node_modules/" not in line:
                    rel = _rel(conv, line)
                    if rel.startswith(("src/", "data/")) and rel not in found and rel not in _KEEP:
                        found.append(rel)
    return sorted(found)


def genre_of_names(pack_ref: str | None, genre: str | None) -> Genre | None:
    """The pack genre named (its builder makes the tables): the pack's default when the genre is not one of its
    own; None when no pack is loaded by that ref."""
    pack = pack_by_ref(pack_ref) if pack_ref else None
    if pack is None:
        return None
    return pack.genres.get(genre or "") or pack.default_genre


def genre_of(conv: Conversation) -> Genre | None:
    return genre_of_names(conv.pack, conv.genre)


@functools.lru_cache(maxsize=64)
def _built(pack: str | None, genre: str | None, goal: str) -> dict[str, Any]:
    found = genre_of_names(pack, genre)
    if found is None:
        return {}
    owner = pack_by_ref(pack) if pack else None
    # the goal's tables: the brief's, with every follow-up's changes — the very tables the offline design studio
    # wrote into data/ (`follow_up.effective_tables`), derived again from the words, so a compression that took
    # the first reads away changes nothing
    return (effective_tables(owner, found.id, goal) if owner is not None else {}) or found.build_tables(goal)


def _tables(conv: Conversation) -> dict[str, Any]:
    """The tables to write for the goal (deterministic; cached — callers copy before changing)."""
    return _built(conv.pack, conv.genre, conv.brief)


def _first_line(brief: str) -> str:
    """The goal's first version (a follow-up's run request carries every version: `tier2.design.goal`)."""
    return split_goal(brief)[0]


def _render_table(conv: Conversation, name: str, faulty: bool) -> str:
    table = dict(_tables(conv)[name])
    if faulty:  # the first numeric key goes missing
        table.pop(next((k for k, v in table.items() if isinstance(v, (int, float))), ""), None)
    return json.dumps(table, indent=2, ensure_ascii=False) + "\n"


def _fault_table(conv: Conversation) -> str:
    """The table the ``missing_data_key`` fault breaks: the last one with a top-level number."""
    return next((n for n, t in reversed(list(_tables(conv).items()))
                 if isinstance(t, dict) and any(isinstance(v, (int, float)) for v in t.values())), "")


def _title(conv: Conversation) -> str:
    return str(_tables(conv).get("theme.json", {}).get("title") or "the game")


def _render_source(conv: Conversation, rel: str, original: str, faulty: bool) -> str:
    title = _title(conv)
    header = (f"// {title}: {PurePosixPath(rel).name} (tier2 offline writer, from the "
              f"{_first_line(conv.brief)[:60]!r} brief)\n")
    body = original[original.index("\n") + 1:] if original.startswith("// ") and "tier2 offline writer" in original \
        else original
    if faulty:
        body = body + "\nfunction brokenByFault( {\n"
    return header + body


def _faults(params: dict[str, Any]) -> set[str]:
    return {f for f in params.get("faults", []) if f in FAULTS}


def _write_all(conv: Conversation, targets: list[str], faults: set[str]) -> Action:
    reads = conv.read_results()
    calls: list[tuple[str, dict[str, Any]]] = []
    for rel in targets:
        path = _abs(conv, rel)
        if rel.startswith("data/"):
            name = PurePosixPath(rel).name
            if name not in _tables(conv):
                continue
            content = _render_table(conv, name, faulty="missing_data_key" in faults and name == _fault_table(conv))
        else:
            content = _render_source(conv, rel, reads.get(path, ""), faulty="syntax_error" in faults
                                     and rel == _SYNTAX_TARGET)
        if content != reads.get(path):  # what is already there (the design's tables, an unchanged file) stays
            calls.append(("Write", {"file_path": path, "content": content}))
    return Action("tools", calls)


_SPEC = "design/spec.json"


#: what the policy greps the spec for: each requirement's id and text, and an asset_role predicate's asset key (a few
#: lines, not the whole spec in the conversation)
_SPEC_KEYS = r'"asset"\s*:\s*"'
_SPEC_GREP = r'"(?:id|text|asset)"\s*:\s*"'
_DIGEST_KEY = re.compile(r'"asset"\s*:\s*"[a-z][a-z0-9_]*\.u[0-9a-f]{8}"')
_SPEC_FIELD = re.compile(r'"(id|text|asset)"\s*:\s*"((?:[^"\\]|\\.)*)"')


def _description_for(role: str, asset: str, text: str) -> str | None:
    """A description whose asset key is ``asset``: the key's own words, else the requirement's text or the part of
    it that names the entity (``goods: 面包`` → ``面包``; ``面包店 backdrop`` → ``面包店``: a digest key is only
    given back by the very name it was made from)."""
    slug = asset.split(".", 1)[1] if "." in asset else ""
    cands = [] if re.fullmatch(r"u[0-9a-f]{8}", slug) else [slug.replace("_", " ")]  # (a digest is no name)
    cands += [text, *(p.strip() for p in re.split(r"[:：]", text)[1:]), *text.split()]
    return next((c for c in cands if c.strip() and asset_key(role, name_of(c)) == asset), None)


def asset_requests(spec_lines: str) -> list[dict[str, Any]]:
    """The RequestAsset calls for the ``asset_role`` predicates in the spec's text (the whole spec or the lines a
    grep for ids, texts and assets kept): each asset key with the requirement id and text before it; its role is the
    key's role part. A key no description gives is left out (its gate says so)."""
    out: dict[str, dict[str, Any]] = {}
    req_id, text = "", ""
    for m in _SPEC_FIELD.finditer(spec_lines):
        field_, value = m.group(1), json.loads(f'"{m.group(2)}"')
        if field_ == "id":
            req_id, text = value, ""
        elif field_ == "text":
            text = value
        elif "." in value:
            role = value.split(".", 1)[0]
            desc = _description_for(role, value, text)
            if desc is None:
                continue
            call = out.setdefault(value, {"role": role, "description": desc})
            if re.fullmatch(r"R[0-9]{1,3}", req_id) and req_id not in call.setdefault("requirements", []):
                call["requirements"].append(req_id)
    return list(out.values())[:24]


def _assets_first(conv: Conversation, params: dict[str, Any]) -> Action | None:
    """Before the first write pass: grep the design spec's asset keys (a line per ``asset_role`` predicate; their
    texts too only when a key is a digest, which only a text gives back), then request those assets (once). The
    tool itself records which requirements name each key: the conversation stays small."""
    if "RequestAsset" not in params.get("tools", ()) or _SPEC not in conv.last_user:
        return None
    path = _abs(conv, _SPEC)
    greps = [s for s in conv.steps if s.name == "Grep" and s.args.get("path") == path]
    if not greps:
        return Action("tools", [("Grep", {"pattern": _SPEC_KEYS, "path": path, "output_mode": "content"})])
    first = greps[0].result or ""
    if not greps[0].ok or not first or first.startswith("No matches") or conv.last("RequestAsset") is not None:
        return None
    if len(greps) == 1 and _DIGEST_KEY.search(first):
        return Action("tools", [("Grep", {"pattern": _SPEC_GREP, "path": path, "output_mode": "content"})])
    calls = asset_requests(greps[-1].result or "")
    return Action("tools", [("RequestAsset", c) for c in calls]) if calls else None


def _repair_count(conv: Conversation, rel: str) -> int:
    return max(0, conv.writes_of(_abs(conv, rel)) - 1)


def _repair_file(conv: Conversation, rel: str, content: str) -> Action:
    path = _abs(conv, rel)
    last_read = conv.index_of_last("Read")
    last_write = max((i for i, s in enumerate(conv.steps) if s.name == "Write" and s.args.get("file_path") == path),
                     default=-1)
    read_fresh = last_read > last_write and conv.steps[last_read].args.get("file_path") == path
    if not read_fresh:
        return Action("tools", [("Read", {"file_path": path})])
    return Action("tools", [("Write", {"file_path": path, "content": content})])


def _stop(reason: str) -> Action:
    return Action("final", text=f"STOP: {reason}")


def _after_build_failure(conv: Conversation, result: str) -> Action:
    reads = _first_reads(conv)
    for m in _BUILD_LOC.finditer(result):
        rel = _rel(conv, m["file"])
        path = _abs(conv, rel)
        if rel.startswith("src/") and path in reads:
            if _repair_count(conv, rel) >= MAX_REPAIRS:
                return _stop(f"build still fails in {rel} after {MAX_REPAIRS} repairs: {m['msg']}")
            return _repair_file(conv, rel, _render_source(conv, rel, reads[path], faulty=False))
    return _stop("build failed with an error the offline policy cannot repair:\n" + result[:1500])


def _first_reads(conv: Conversation) -> dict[str, str]:
    """file_path -> the content the file had before this request changed it: its first Read — or, once a
    compression took the first reads away (a later Read may show this request's own writes), the pack
    template's file when the template has it."""
    out: dict[str, str] = {}
    for s in conv.steps:
        path = s.args.get("file_path", "")
        if s.name == "Read" and s.ok and s.result is not None and path not in out:
            out[path] = s.result
    reads = {k: strip_line_numbers(v) for k, v in out.items()}
    if conv.earlier.get("Write"):
        genre = genre_of(conv)
        for path in list(reads):
            original = genre.template_dir / _rel(conv, path) if genre is not None else None
            if original is not None and original.is_file():
                reads[path] = original.read_text(encoding="utf-8")
    return reads


def _after_run_failure(conv: Conversation, result: str) -> Action:
    m = _DATA_ERROR.search(result)
    if m and m.group(1) in _tables(conv):
        rel = f"data/{m.group(1)}"
        if _repair_count(conv, rel) >= MAX_REPAIRS:
            return _stop(f"{rel} still rejected by the game after {MAX_REPAIRS} repairs")
        return _repair_file(conv, rel, _render_table(conv, m.group(1), faulty=False))
    return _stop("the game fails a gate the offline policy cannot repair:\n" + result[:1500])


def decide(conv: Conversation, params: dict[str, Any]) -> Action:
    """The next action for this conversation (pure: same conversation → same action)."""
    if not conv.project:
        return _stop("no project directory in the system prompt")
    if genre_of(conv) is None:
        return _stop(f"the run request names no capability pack this process has loaded ({conv.pack or 'none'})")
    if conv.earlier and (done := _finished_before(conv)) is not None:  # a compression right at the end
        return done
    if conv.last("Glob") is None:
        return Action("tools", [("Glob", {"pattern": "src/**/*.js", "path": conv.project}),
                                ("Glob", {"pattern": "data/*.json", "path": conv.project})])
    targets = _targets(conv)
    if not targets:
        return _stop("the project has no src/ or data/ files to work on")
    reads = conv.read_results()
    unread = [rel for rel in targets if _abs(conv, rel) not in reads]
    if unread:
        return Action("tools", [("Read", {"file_path": _abs(conv, rel)}) for rel in unread])
    if conv.index_of_last("Build") < 0 and not conv.earlier.get("Build"):  # (a compression may hide the pass)
        if (assets := _assets_first(conv, params)) is not None:
            return assets
        # the first write pass; after a resumed attempt only part of that batch may have run: write the rest
        written = {s.args.get("file_path") for s in conv.steps if s.name == "Write"}
        pending = [c for c in _write_all(conv, targets, _faults(params)).calls if c[1]["file_path"] not in written]
        if pending:
            return Action("tools", pending)
    last = conv.steps[-1]
    if last.name == "Read" and conv.index_of_last("Build") >= 0:
        return _after_pending_read(conv, last)
    build_i, run_i = conv.index_of_last("Build"), conv.index_of_last("RunGame")
    last_write_i = max((i for i, s in enumerate(conv.steps) if s.name == "Write"), default=-1)
    if build_i < 0 and last_write_i < 0:  # nothing to change (a follow-up whose design changed no file here),
        return Action("tools", [("Build", {})])  # or the first pass is behind a compression: build what is there
    if build_i < last_write_i:
        return Action("tools", [("Build", {})])
    build = conv.steps[build_i]
    repairs = params.get("repairs", True) is not False
    if not build.ok:
        return _after_build_failure(conv, build.result or "") if repairs else _no_repair("build", build.result)
    if run_i < build_i:
        return Action("tools", [("RunGame", {})])
    run = conv.steps[run_i]
    if (ask := _explore_first(conv, params, run.result or "")) is not None:  # a data error (fixed or not)
        return ask
    if not run.ok:
        return _after_run_failure(conv, run.result or "") if repairs else _no_repair("game", run.result)
    tasks = open_tasks(conv)
    if tasks:  # every gate passes: the tasks the run gave are done
        return Action("tools", [("TaskUpdate", {"task_id": t, "status": "completed"}) for t in tasks])
    title = _title(conv)
    return Action("final", text=f"DONE: {title} builds and passes every L1 gate.\n{run.result or ''}")


_TASK_LINE = re.compile(r"^- \[([0-9]{1,4})\] ", re.M)
_TASKS = re.compile(r"<tasks>\n(.*?)</tasks>", re.S)


def open_tasks(conv: Conversation) -> list[str]:
    """The ids of the tasks the run's messages gave (a fix round may give one again) that this conversation has not
    closed as many times with TaskUpdate."""
    given: dict[str, int] = {}
    for text in conv.user_texts:
        for block in _TASKS.findall(text):
            for tid in _TASK_LINE.findall(block):
                given[tid] = given.get(tid, 0) + 1
    closed: dict[str, int] = {}
    for s in conv.steps:
        if s.name == "TaskUpdate" and s.ok and s.args.get("status") == "completed":
            tid = str(s.args.get("task_id"))
            closed[tid] = closed.get(tid, 0) + 1
    return [t for t, n in sorted(given.items(), key=lambda kv: int(kv[0])) if closed.get(t, 0) < n]


def _finished_before(conv: Conversation) -> Action | None:
    """After a compression: when the kept conversation shows RunGame passing with nothing written after it, the
    work is done — close the tasks and finish (never start the plan over)."""
    run_i = conv.index_of_last("RunGame")
    last_write = max((i for i, s in enumerate(conv.steps) if s.name in ("Write", "Edit")), default=-1)
    if run_i < 0 or not conv.steps[run_i].ok or last_write > run_i:
        return None
    tasks = open_tasks(conv)
    if tasks:
        return Action("tools", [("TaskUpdate", {"task_id": t, "status": "completed"}) for t in tasks])
    return Action("final", text=f"DONE: {_title(conv)} builds and passes every L1 gate.\n"
                                f"{conv.steps[run_i].result or ''}")


def _explore_first(conv: Conversation, params: dict[str, Any], result: str) -> Action | None:
    """Once per conversation, when RunGame's result names a data error's key — failing, or fixed by the debug case
    library before the writer read it — and the writer has ``Explore``: ask which files read that key."""
    m = _DATA_KEY.search(result)
    if m is None or "Explore" not in params.get("tools", ()) or conv.last("Explore") is not None:
        return None
    return Action("tools", [("Explore", {"question": f"which files read data key {m.group(1)}.{m.group(2)}"})])


def _no_repair(what: str, result: str | None) -> Action:
    return _stop(f"the {what} fails and the policy's own repairs are off (repairs: false):\n" + (result or "")[:1500])


def _after_pending_read(conv: Conversation, read: Any) -> Action:
    """A repair Read just returned: write the repaired content for that file."""
    rel = _rel(conv, read.args.get("file_path", ""))
    if rel.startswith("data/"):
        return _repair_file(conv, rel, _render_table(conv, PurePosixPath(rel).name, faulty=False))
    reads = _first_reads(conv)
    return _repair_file(conv, rel, _render_source(conv, rel, reads.get(_abs(conv, rel), ""), faulty=False))

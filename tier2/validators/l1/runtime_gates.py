"""L1 runtime gates: pure functions of a `PlayTrace` (no browser here, so each is unit-testable)."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import Any
from urllib.parse import urlparse

from tier2.settings.loader import Policy
from tier2.validators.base import Finding, ValidationResult
from tier2.validators.legibility import legible
from tier2.validators.trace import InputProbe, PixelStats, PlayTrace

__all__ = ["RUNTIME_GATES", "bound_gates", "input_reaction", "reaction", "boots", "no_errors", "frames_advance",
           "canvas_not_blank", "activity", "input_changes_state", "control_responsiveness", "latch_split",
           "state_delta", "legible", "classify_errors"]

MIN_FRAME_SHARE = 0.3  # at least 30% of the frames the virtual time allows
MAX_REACT_FRAMES = 10
MIN_COLORS = 3
MIN_NON_BACKGROUND = 0.002
#: State keys that are clocks, not game state: their change alone is not a reaction to input.
TIME_KEYS = frozenset({"elapsed_ms", "time", "time_ms", "frame", "frames", "clock", "now", "remaining_ms"})


def _fail(gate: str, summary: str, findings: list[str], **evidence: Any) -> ValidationResult:
    return ValidationResult(id=gate, layer="L1", passed=False, summary=summary,
                            findings=[Finding(message=f) for f in findings], evidence=evidence)


def _ok(gate: str, summary: str, **evidence: Any) -> ValidationResult:
    return ValidationResult(id=gate, layer="L1", passed=True, summary=summary, evidence=evidence)


def boots(t: PlayTrace) -> ValidationResult:
    gate = "l1.boots"
    if not t.loaded:
        return _fail(gate, "page did not load", t.errors[:5])
    if t.timed_out and not t.booted:
        return _fail(gate, "page stopped answering during boot", [t.timed_out])
    if not t.hook_present and t.mode == "contract":
        return _fail(gate, "window.__TIER2__ test hook missing", t.errors[:5])
    if not t.booted:
        return _fail(gate, f"game did not reach its first scene in {t.boot_virtual_ms:.0f} ms of game time",
                     t.errors[:5] or ["the game never reported booted or the scene stayed in Boot/Preload"])
    d = t.default_renderer
    if d is not None and not d.get("booted"):
        return _fail(gate, "boots on the Canvas renderer but not on the default (WebGL) renderer",
                     [e for e in t.errors if e.startswith("[")][:5] or [str(d.get("timed_out", "no scene started"))])
    renderers = f"{t.renderer}" + (f" + {d.get('renderer')}" if d else "")
    return _ok(gate, f"booted into {t.first_scene!r} ({renderers})", first_scene=t.first_scene,
               renderer=t.renderer, default_renderer=d, boot_virtual_ms=t.boot_virtual_ms)


#: asset files a game loads (a 404 for one that is never shown is not the game's defect in generic mode)
_ASSET_404 = re.compile(r"^request failed: HTTP 404 (\S+?\.(?:png|jpe?g|gif|webp|svg|bmp|mp3|ogg|oga|wav|m4a|aac|"
                        r"flac|webm|mp4|json|xml|fnt|atlas|csv|tmx|ttf|otf|woff2?)(?:\?\S*)?)$", re.I)
_LOAD_404 = re.compile(r"Failed to load resource: the server responded with a status of 404", re.I)
#: a service-worker registration that failed (not any error of code that merely touches the API)
_SERVICE_WORKER = re.compile(r"service ?worker.*regist|regist.*service ?worker", re.I)
#: how a refused request surfaces in the page (fetch/XHR/beacon errors, the browser's own console echo)
_NETWORK_FAILURE = re.compile(r"Failed to fetch|Network ?Error|Load failed|net::ERR_|ERR_FAILED|Network request failed|"
                              r"Failed to load resource", re.I)
_RULE = "l1.no_errors."
_SESSION_TAG = re.compile(r"^\[[\w-]+\] ")


def _host(entry: str) -> str:
    return urlparse(entry.split(" ", 1)[0]).hostname or ""


def classify_errors(t: PlayTrace, blocked: list[str], plays: bool) -> list[tuple[str | None, str]]:
    """(rule, problem) for every problem of a play: a rule of hot policy ``verdicts:`` when the problem is one a
    game may have without being broken — only for a game that boots and plays (and draws, for missing assets);
    otherwise, and for everything else, None (a defect). Blocked requests come first."""
    problems = list(t.errors) + ([t.timed_out] if t.timed_out else [])
    if not plays:
        defects: list[tuple[str | None, str]] = [(None, p) for p in problems]
        return defects + [(None, f"blocked network request: {b}") for b in blocked]
    hosts = {h for h in map(_host, blocked) if h}
    # an asset 404 is noise only when the game draws and shows no object with the missing-texture placeholder
    draws = bool(t.pixels) and t.pixels[-1].colors >= MIN_COLORS and not t.missing_textures
    missing = [m.group(1) for p in problems if (m := _ASSET_404.match(_SESSION_TAG.sub("", p)))] if draws else []
    out: list[tuple[str | None, str]] = [(f"{_RULE}blocked_request",
                                          f"blocked network request (the game plays without it): {b}")
                                         for b in blocked]
    for p in problems:
        rule: str | None = None
        bare = _SESSION_TAG.sub("", p)  # "[webgl] console.error: ..." (the default-renderer session's)
        if bare.startswith(("pageerror:", "console.error:", "uncaught:")) and _SERVICE_WORKER.search(p):
            rule = "service_worker"
        elif missing and (_ASSET_404.match(bare) or _LOAD_404.search(bare)):
            rule = "unshown_asset"
        elif blocked and (_NETWORK_FAILURE.search(p) or any(h in p for h in hosts)) \
                and bare.startswith(("pageerror:", "console.error:", "uncaught:")):
            rule = "blocked_request_error"
        out.append((f"{_RULE}{rule}" if rule else None, p))
    return out


def no_errors(t: PlayTrace) -> ValidationResult:
    """Uncaught errors, console errors, failed requests, dialogs and hangs fail. What a game may have without being
    broken — a blocked outside request it plays without (a web font, analytics), the error that request causes, a
    service-worker registration refused on the validation origin, a 404 for an asset of a game that plays and
    draws — is tagged with its rule (`classify_errors`); hot policy ``verdicts:`` decides per mode whether it is a
    verdict (tier2's own games: their contract has no external URLs) or a finding (`runner.apply_verdicts`)."""
    gate = "l1.no_errors"
    blocked = list(dict.fromkeys(t.blocked))
    plays = t.booted and not t.timed_out and any(input_reaction(p) for p in t.inputs)
    classified = classify_errors(t, blocked, plays)
    defects = [p for rule, p in classified if rule is None]
    tagged = [(rule, p) for rule, p in classified if rule is not None]
    ev: dict[str, Any] = {"blocked_requests": blocked[:20]} if blocked else {}
    if t.budget:
        ev["budget"] = t.budget
    if tagged:
        ev["classified"] = [{"rule": rule, "problem": p[:300]} for rule, p in tagged[:30]]
    if not classified:
        return _ok(gate, "no uncaught errors, console errors, failed or blocked requests", **ev)
    findings = [Finding(message=p) for p in defects[:10]] + [Finding(message=p, rule=r) for r, p in tagged[:30]]
    summary = f"{len(defects)} error(s) during play" if defects else "no error of the game's own"
    return ValidationResult(id=gate, layer="L1", passed=False, findings=findings,
                            summary=summary + (f"; {len(tagged)} problem(s) a working game may have (rules of hot "
                                               "policy verdicts:)" if tagged else ""),
                            evidence={"errors": [p for _, p in classified][:20], **ev})


def frames_advance(t: PlayTrace) -> ValidationResult:
    gate = "l1.frames_advance"
    if len(t.frames) < 2:
        return _fail(gate, "frame counter not sampled (game did not boot)", [])
    samples = t.frame_samples or [("after boot", 500.0, t.frames[-1] - t.frames[0])]
    stalled = [(when, ms, n) for when, ms, n in samples if n < MIN_FRAME_SHARE * ms / (1000 / 60)]
    ev = {"frames": t.frames, "samples": [{"when": w, "ms": ms, "frames": n} for w, ms, n in samples],
          "frame_ms": t.frame_ms}
    if stalled:
        return _fail(gate, "game loop stalled: " + "; ".join(f"{n} frames in {ms:.0f} ms {w}" for w, ms, n in stalled),
                     [], **ev)
    return _ok(gate, "game loop advances: " + "; ".join(f"{n} frames in {ms:.0f} ms {w}" for w, ms, n in samples),
               **ev)


def canvas_not_blank(t: PlayTrace) -> ValidationResult:
    gate = "l1.canvas_not_blank"
    if not t.pixels:
        return _fail(gate, "no screenshot taken (game did not boot)", [])
    def is_blank(p: PixelStats) -> bool:
        return p.colors < MIN_COLORS or p.non_background_fraction < MIN_NON_BACKGROUND

    ev = {"screenshots": [p.path for p in t.pixels],
          "stats": [{"colors": p.colors, "non_background": p.non_background_fraction} for p in t.pixels]}
    last = t.pixels[-1]
    d = t.default_renderer or {}
    smoke = t.pixels[0] if t.pixels and t.pixels[0].path.endswith("00-default-renderer.png") else None
    main_first = next((p for p in t.pixels if p is not smoke), None)
    # blank on the default renderer where the Canvas run at the same point was not: a WebGL-only defect
    if d.get("booted") and smoke and is_blank(smoke) and main_first is not None and not is_blank(main_first):
        return _fail(gate, f"the screen is blank on the default renderer ({d.get('renderer')})",
                     [f"{t.pixels[0].path}: {t.pixels[0].colors} colours"], **ev)
    if is_blank(last):  # the game as played must show something; a blank title/loading screen alone is tolerated
        return _fail(gate, "the screen is blank during play",
                     [f"{last.path}: {last.colors} colours, {last.non_background_fraction:.2%} non-background"], **ev)
    blank_earlier = [p.path for p in t.pixels[:-1] if is_blank(p)]
    if blank_earlier:
        ev["blank_before_play"] = blank_earlier
    return _ok(gate, f"{len(t.pixels)} screenshots, the played screen shows content", **ev)


def state_delta(before: Any, after: Any, prefix: str = "", both: bool = False) -> set[str]:
    """Dotted paths whose values differ between two JSON snapshots. With ``both``, only paths present in both
    (objects that appeared or vanished — spawned bullets, say — are not changes of an existing thing)."""
    if isinstance(before, dict) and isinstance(after, dict):
        out: set[str] = set()
        keys = set(before) & set(after) if both else set(before) | set(after)
        for key in keys:
            out |= state_delta(before.get(key), after.get(key), f"{prefix}{key}.", both)
        return out
    return set() if before == after else {prefix.rstrip(".") or "<root>"}


def reaction(before: Any, idle_after: Any, after: Any) -> set[str]:
    """What an input changed: paths changed after it, minus what changed on its own while idle (an object that
    appeared while idle — an enemy's bullet — and goes on moving, too), minus clocks; only things that exist
    before and after count."""
    drift = state_delta(before, idle_after)
    changed = state_delta(idle_after, after, both=True)
    return {k for k in changed - drift if k.split(".")[-1] not in TIME_KEYS
            and not any(k.startswith(d + ".") for d in drift)}


def input_reaction(p: InputProbe) -> set[str]:
    """What the input changed: in the settled state, or in a frame sampled while it acted (a swap that is undone
    — a match-3 move that does not match — is a reaction though the state returns to where it was)."""
    return reaction(p.before, p.idle_after, p.after) | set(p.transient)



def input_changes_state(t: PlayTrace) -> ValidationResult:
    gate = "l1.input_changes_state"
    if not t.inputs:
        return _fail(gate, "no input was scripted (game did not boot)", [])
    reactions = {p.label: sorted(input_reaction(p)) for p in t.inputs}
    dead = [p for p in t.inputs if not reactions[p.label]]
    ev = {"inputs": [{"label": p.label, "key": p.key, "changed": reactions[p.label],
                      "frames_to_react": p.frames_to_react} for p in t.inputs]}
    if dead:
        return _fail(gate, "input ignored: " + ", ".join(f"{p.label} ({p.key})" for p in dead),
                     [f"{p.key}: state unchanged apart from clocks" for p in dead] + t.notes, **ev)
    return _ok(gate, "; ".join(f"{k} → {', '.join(v[:4])}" for k, v in reactions.items()), **ev)


def activity(t: PlayTrace) -> ValidationResult:
    gate = "l1.activity"
    if not t.booted:
        return _fail(gate, "no activity measured (game did not boot)", [])
    drift = sorted({k for p in t.inputs for k in state_delta(p.before, p.idle_after)})
    pictures = len(set(t.picture_hashes))
    if drift or pictures > 1:
        return _ok(gate, f"state changes over time ({', '.join(drift[:4]) or 'no state drift'}); "
                   f"{pictures} distinct screenshots of {len(t.picture_hashes)}", drift=drift[:20],
                   distinct_pictures=pictures)
    return _fail(gate, "nothing changes over time: state and picture are frozen", [], distinct_pictures=pictures)


def control_responsiveness(t: PlayTrace) -> ValidationResult:
    gate = "l1.control_responsiveness"
    reacting = [p for p in t.inputs if input_reaction(p) and not p.label.startswith("start:")]
    if not reacting:
        if any(input_reaction(p) for p in t.inputs):  # only scene transitions reacted (they may animate)
            return _ok(gate, "only start transitions observed; no in-game control to time",
                       limit_frames=MAX_REACT_FRAMES)
        return _fail(gate, "no input reaction to time (see l1.input_changes_state)", [])
    slow = [p for p in reacting if p.frames_to_react is None or p.frames_to_react > MAX_REACT_FRAMES]
    ev = {"frames_to_react": {p.label: p.frames_to_react for p in reacting}, "limit_frames": MAX_REACT_FRAMES}
    if slow:
        return _fail(gate, f"state reacted later than {MAX_REACT_FRAMES} frames: "
                     + ", ".join(f"{p.label} ({p.frames_to_react})" for p in slow), [], **ev)
    worst = max(p.frames_to_react or 0 for p in reacting)
    return _ok(gate, f"state reacts within {worst} frame(s)", **ev)


def latch_split(t: PlayTrace) -> ValidationResult:
    gate = "l1.latch_split"
    if t.mode != "contract":
        return _ok(gate, "not applicable in generic mode (no outcome hook)", applicable=False)
    if not t.latch:
        return _fail(gate, "scripted plays did not run (game did not boot or stopped answering)", [])
    want = {"idle": "running", "abandon": "abandoned", "win": "won", "lose": "lost"}
    got = {k: t.latch.get(k) for k in want}
    wrong = [f"{k} play ended {got[k]!r}, expected {v!r}" for k, v in want.items()
             if got[k] is not None and got[k] != v]
    missing = [k for k in want if got[k] is None]
    ev = {"outcomes": got, "win_actions": t.latch.get("win_actions"), "lose_actions": t.latch.get("lose_actions"),
          "notes": t.latch.get("notes", [])}
    if wrong:
        return _fail(gate, "; ".join(wrong), wrong + list(t.latch.get("notes", [])), **ev)
    if "win" in missing or "idle" in missing:
        return _fail(gate, f"not verified: {', '.join(missing)}", list(t.latch.get("notes", [])), **ev)
    return _ok(gate, f"idle keeps running; Escape → abandoned; planned play → won in {ev['win_actions']} actions; "
               f"wasteful play → {got['lose'] or 'not probed'}", **ev)


RUNTIME_GATES: tuple[Callable[[PlayTrace], ValidationResult], ...] = (
    boots, no_errors, frames_advance, canvas_not_blank, activity, input_changes_state, control_responsiveness,
    latch_split, legible,
)


def bound_gates(policy: Policy) -> tuple[Callable[[PlayTrace], ValidationResult], ...]:
    """`RUNTIME_GATES` with the thresholds of hot policy bound (``legibility:`` for `legible`)."""
    return tuple(partial(legible, limits=policy.legibility) if g is legible else g for g in RUNTIME_GATES)

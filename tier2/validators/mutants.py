"""Mutation operators: one per defect class, applied to a copy of a real game, each with the gate meant to
catch it. Used by the tests and by ``bench/validator_accuracy.py``. Classes follow the defect taxonomy of
OpenGame's seed protocol (github leigest519/OpenGame @ c54307e, ``agent-test/debug-skill/seed-protocol``): crash at
boot, crash after input, loop stopped, invisible, input ignored, missing asset, syntax error, invented API, removed
API, infinite loop, dangling reference, unprofitable economy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Mutant", "CONTRACT_MUTANTS", "GENERIC_MUTANTS", "SITE_MUTANTS", "MutationError"]


class MutationError(RuntimeError):
    """The operator's anchor is not in the game (the operator does not apply)."""


@dataclass(frozen=True)
class Mutant:
    defect: str
    intended_gates: frozenset[str]
    apply: Callable[[Path], None]


def _edit(path: Path, pattern: str, repl: str, regex: bool = False) -> None:
    text = path.read_text()
    new = re.sub(pattern, repl, text, count=1) if regex else text.replace(pattern, repl, 1)
    if new == text:
        raise MutationError(f"anchor {pattern!r} not found in {path}")
    path.write_text(new)


def _append(path: Path, code: str) -> None:
    path.write_text(path.read_text() + "\n" + code + "\n")


def _first_scene_method(root: Path, method: str) -> tuple[Path, str]:
    """(file, 'create() {'-style anchor) of the first scene defining ``method``."""
    for path in sorted((root / "src").rglob("*.js")):
        m = re.search(rf"^\s*{method}\s*\([^)]*\)\s*\{{", path.read_text(), re.M)
        if m and "extends" in path.read_text():
            return path, m.group(0)
    raise MutationError(f"no scene with {method}() under {root / 'src'}")


def _inject(method: str, code: str) -> Callable[[Path], None]:
    def apply(root: Path) -> None:
        path, anchor = _first_scene_method(root, method)
        _edit(path, anchor, anchor + "\n" + code + "\n")
    return apply


def _missing_asset(root: Path) -> None:
    """Load an image file that does not exist and show it (in preload() when a scene has one, else from create()):
    the game draws the engine's missing-texture placeholder — a defect in every mode (a 404 for an asset the game never
    shows is only a finding for someone else's game, hot policy ``verdicts:``)."""
    show = "this.add.image(this.scale.width / 2, this.scale.height / 2, 'hero-missing').setDepth(1e6);"
    try:
        _inject("preload", "    this.load.image('hero-missing', 'assets/hero-that-was-never-drawn.png');")(root)
    except MutationError:
        _inject("create", "    this.load.image('hero-missing', 'assets/hero-that-was-never-drawn.png');"
                          f" this.load.once('complete', () => {{ {show} }}); this.load.start();")(root)
    else:
        _inject("create", f"    {show}")(root)


def _entry(root: Path) -> Path:
    return root / "src" / "main.js"


def _orders(root: Path, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    path = root / "data" / "orders.json"
    data = json.loads(path.read_text())
    data["orders"] = change(data["orders"])
    path.write_text(json.dumps(data, indent=2))


_KEY_HANDLERS = re.compile(r"keyboard\.on\('keydown',\s*\(ev\)\s*=>\s*this\.onKey\(ev\)\)")

_SHARED: list[Mutant] = [
    Mutant("crash_at_boot", frozenset({"l1.boots", "l1.no_errors"}),
           lambda r: _append(_entry(r), "spawnBossThatDoesNotExist();")),
    Mutant("loop_stopped", frozenset({"l1.frames_advance"}),
           _inject("create", "    { let n = 0; this.game.events.on('poststep', () => {"
                             " if (++n === 60) this.game.loop.sleep(); }); }")),
    Mutant("everything_invisible", frozenset({"l1.canvas_not_blank"}),
           lambda r: _edit(r / "index.html", "</head>", "<style>canvas{visibility:hidden!important}</style></head>")),
    Mutant("missing_asset", frozenset({"l1.no_errors"}), lambda r: _missing_asset(r)),
    Mutant("syntax_error", frozenset({"l1.builds"}), lambda r: _append(_entry(r), "function broken( {")),
    Mutant("invented_api", frozenset({"l1.engine_calls"}),
           _inject("create", "    if (this.sys === null) this.add.superSprite(0, 0, 'hero');")),
    Mutant("removed_api", frozenset({"l1.engine_calls"}),
           _inject("create", "    if (this.sys === null) this.tweens.timeline({ tweens: [] });")),
    Mutant("infinite_loop", frozenset({"l1.no_errors", "l1.frames_advance"}),
           _inject("update", "    for (;;) { /* stuck */ }")),
]

CONTRACT_MUTANTS: list[Mutant] = _SHARED + [
    Mutant("crash_after_input", frozenset({"l1.no_errors"}),
           lambda r: _edit(r / "src/scenes/Play.js", _KEY_HANDLERS.pattern,
                           "keyboard.on('keydown', (ev) => { this.onKey(ev); crashAfterInput(ev); })", regex=True)),
    Mutant("input_ignored", frozenset({"l1.input_changes_state"}),
           lambda r: _edit(r / "src/scenes/Play.js", _KEY_HANDLERS.pattern,
                           "keyboard.on('keydown', (ev) => void ev)", regex=True)),
    Mutant("empty_shell_ends_by_itself", frozenset({"l1.latch_split"}),
           lambda r: _edit(r / "src/scenes/Play.js", "    tick(this.st, delta);\n",
                           "    tick(this.st, delta);\n    this.st.outcome = 'won';\n")),
    Mutant("dangling_order_item", frozenset({"l1.data_linkage"}),
           lambda r: _orders(r, lambda o: o[:1] + [{**o[1], "item": "unicorn_tears"}] + o[2:])),
    Mutant("unprofitable_economy", frozenset({"l1.economy"}),
           lambda r: _orders(r, lambda o: [{**x, "reward": 1} for x in o])),
]

GENERIC_MUTANTS: list[Mutant] = _SHARED + [
    Mutant("crash_after_input", frozenset({"l1.no_errors"}),
           lambda r: _append(_entry(r), "window.addEventListener('keydown', () => { crashAfterInput(); });"
                                        "window.addEventListener('pointerdown', () => { crashAfterInput(); });")),
]


# Built sites (a Vite/webpack dist/, a script-tag game): no sources to edit, so the defect goes into the page (an
# inline script before the game's own) or the end of the bundle the page loads. A syntax error in a built bundle
# is found by the browser, not by a build.
_BUNDLE_SRC = re.compile(r"<script\b[^>]*\bsrc=[\"']([^\"']+)[\"'][^>]*>", re.I)


def _bundle(root: Path) -> Path:
    """The last local script the page loads (the game's bundle, after any vendored library)."""
    html = (root / "index.html").read_text()
    srcs: list[str] = _BUNDLE_SRC.findall(html)
    for src in reversed(srcs):
        path = root / src.split("?")[0].lstrip("/")
        if not src.startswith(("http:", "https:", "//")) and path.is_file():
            return path
    raise MutationError(f"no local script in {root / 'index.html'}")


def _page_insert(root: Path, snippet: str) -> None:
    """Put ``snippet`` first in the page: after ``<head>``, else before its first script, else at the top (a real
    game's page may have no ``<head>``)."""
    page = root / "index.html"
    text = page.read_text()
    anchor = re.search(r"<head[^>]*>", text, re.I)
    if anchor is not None:
        at = anchor.end()
    else:
        script = re.search(r"<script\b", text, re.I)
        at = script.start() if script is not None else 0
    page.write_text(text[:at] + snippet + text[at:])


def _head_script(code: str) -> Callable[[Path], None]:
    return lambda root: _page_insert(root, f"<script>{code}</script>")


def _remove_bundle(root: Path) -> None:
    """The page's own bundle is missing (a build that never wrote it, a renamed entry)."""
    _bundle(root).unlink()


#: every input event the page could get, swallowed at the window before the game's listeners (capture phase)
_SWALLOW_INPUT = ("(() => { const stop = (e) => { e.stopImmediatePropagation(); };"
                  " for (const t of ['keydown', 'keyup', 'keypress', 'pointerdown', 'pointerup', 'pointermove',"
                  " 'mousedown', 'mouseup', 'mousemove', 'click', 'touchstart', 'touchend', 'touchmove', 'wheel'])"
                  " { window.addEventListener(t, stop, true); } })();")


def _raf_after(frames: int, body: str) -> str:
    """Page code that runs ``body`` in place of the animation-frame callback after ``frames`` frames."""
    return ("(() => { let n = 0; const raf = window.requestAnimationFrame.bind(window);"
            " window.requestAnimationFrame = (cb) => raf((t) => {"
            f" if (++n > {frames}) {{ {body} }} cb(t); }}); }})();")


SITE_MUTANTS: list[Mutant] = [
    Mutant("crash_at_boot", frozenset({"l1.boots", "l1.no_errors"}),
           lambda r: _append(_bundle(r), ";spawnBossThatDoesNotExist();")),
    Mutant("loop_stopped", frozenset({"l1.frames_advance"}),
           _head_script("(() => { let n = 0; const raf = window.requestAnimationFrame.bind(window);"
                        " window.requestAnimationFrame = (cb) => (++n > 240 ? 0 : raf(cb)); })();")),
    Mutant("everything_invisible", frozenset({"l1.canvas_not_blank"}),
           lambda r: _page_insert(r, "<style>canvas{visibility:hidden!important}</style>")),
    # no missing_asset here: a built bundle's scenes cannot be reached to show the image, and a 404 for an asset a
    # game never shows is a finding of generic mode, not a defect (hot policy verdicts:, docs/validation.md)
    Mutant("syntax_error", frozenset({"l1.boots", "l1.no_errors"}),
           lambda r: _append(_bundle(r), "function broken( {")),
    Mutant("infinite_loop", frozenset({"l1.no_errors", "l1.frames_advance"}),
           _head_script(_raf_after(240, "for (;;) { /* stuck */ }"))),
    Mutant("crash_after_input", frozenset({"l1.no_errors"}),
           lambda r: _append(_bundle(r), ";window.addEventListener('keydown', () => { crashAfterInput(); });"
                                         "window.addEventListener('pointerdown', () => { crashAfterInput(); });")),
    Mutant("missing_entry", frozenset({"l1.boots"}), _remove_bundle),
    Mutant("throws_in_loop", frozenset({"l1.no_errors"}),
           _head_script("(() => { let n = 0; const raf = window.requestAnimationFrame.bind(window);"
                        " window.requestAnimationFrame = (cb) => raf((t) => { cb(t);"
                        " if (++n > 120) throw new TypeError('enemy.update is not a function'); }); })();")),
    Mutant("input_ignored", frozenset({"l1.input_changes_state"}), _head_script(_SWALLOW_INPUT)),
    Mutant("blocking_dialog", frozenset({"l1.no_errors", "l1.boots"}),
           _head_script("window.addEventListener('load', () => setTimeout(() => alert('Are you sure?'), 1500));")),
]

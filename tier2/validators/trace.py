"""Observations of one scripted play session (filled by `probe`, judged by the gates)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from tier2.validators.base import ProbeMode

__all__ = ["PixelStats", "InputProbe", "PlayTrace"]


@dataclass
class PixelStats:
    width: int
    height: int
    colors: int
    non_background_fraction: float
    path: str


@dataclass
class InputProbe:
    """State before/after an input, plus how the state drifts with time alone (to discount timers)."""

    label: str
    key: str
    before: dict[str, Any] | None = None
    idle_after: dict[str, Any] | None = None
    after: dict[str, Any] | None = None
    frames_to_react: int | None = None
    #: what changed in a frame sampled while the input acted, beyond the idle drift (also what was then undone)
    transient: list[str] = field(default_factory=list)


@dataclass
class PlayTrace:
    mode: ProbeMode = "contract"
    url: str = ""
    loaded: bool = False
    hook_present: bool = False
    booted: bool = False
    first_scene: str | None = None
    boot_virtual_ms: float = 0.0
    frames: list[int] = field(default_factory=list)
    #: (when, virtual ms advanced, frames the game loop ran in that time)
    frame_samples: list[tuple[str, float, int]] = field(default_factory=list)
    pixels: list[PixelStats] = field(default_factory=list)
    inputs: list[InputProbe] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)
    timed_out: str | None = None
    renderer: str | None = None
    screenshots: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    timings_ms: dict[str, int] = field(default_factory=dict)
    #: hash of each screenshot, in order (activity: does the picture change over time?)
    picture_hashes: list[str] = field(default_factory=list)
    #: latch-split outcomes (contract mode): idle, abandon, win, lose; None when not probed
    latch: dict[str, Any] | None = None
    #: the short default-renderer (WebGL) session: booted, renderer, frames, hash; None when not run
    default_renderer: dict[str, Any] | None = None
    #: the Canvas-renderer session refused a WebGL context the page asked for (an engine without a Canvas
    #: renderer then cannot boot there: `tier2.validators.runner.needs_webgl`)
    webgl_refused: bool = False
    #: page errors already seen when the game had booted, before any input (compared with the default renderer's)
    boot_errors: list[str] = field(default_factory=list)
    #: requests the browser refused, all but the game's own files (`tier2.browser.network`), as
    #: ``"<url> [<resource type>]"``; the gates judge them by mode
    blocked: list[str] = field(default_factory=list)
    #: real ms one virtual frame cost (measured after boot); None when not measured
    frame_ms: float | None = None
    #: the wall-clock budget actually used: base, limit, whether it was raised because the page is slow
    budget: dict[str, Any] | None = None
    #: generic mode: the controls discovered (keys, pointer, interactive objects, own motion)
    controls: dict[str, Any] | None = None
    #: generic mode: start actions used, whether the game ended during the input sweep
    sweep: dict[str, Any] | None = None
    #: display-list snapshots of the texts and what they sit on, one per screenshot (`validators.legibility`)
    legibility: list[dict[str, Any]] = field(default_factory=list)
    #: generic mode: the most visible display objects drawn with the engine's missing-texture placeholder on one
    #: screen (counted by the engine adapter: an asset that failed to load and IS shown, its 404 is then a defect)
    missing_textures: int = 0
    #: contract mode, the game's ``__TIER2__.assets()`` at each screenshot merged: ``registered``, ``loaded`` and
    #: ``failed`` asset ids, and ``roles``: role -> texture key -> the screens it was seen on (None: no report)
    assets: dict[str, Any] | None = None

    def lap(self, name: str, since: float) -> float:
        """Record wall time since ``since`` under ``name``; returns now (monotonic)."""
        now = time.monotonic()
        self.timings_ms[name] = self.timings_ms.get(name, 0) + int((now - since) * 1000)
        return now

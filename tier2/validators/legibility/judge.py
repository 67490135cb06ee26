"""The legibility judgement of one collected screen (pure: a snapshot and thresholds in, issues out).

Rules (thresholds from hot policy ``legibility:``, `LegibilityPolicy`):

* **shown** — a text counts when its (peak) effective alpha is above 5 %, some of it is on the canvas and no
  opaque shape drawn after it covers it. A text whose alpha a running tween animates (a blink, a fade) is judged at
  the highest alpha the tween reaches.
* **overlap** — two shown texts overlap when one drawn line of each intersects the other by more than
  ``overlap_px`` in both directions. The one exemption: the *same string* drawn twice within ``duplicate_px`` in
  position and size is one label with a hand-made shadow or outline copy (the lower copy's own contrast is not
  judged either). Different strings are never exempt, even when one box contains the other. Masked texts (a
  scroll area clipped on purpose) are not checked for overlaps or cuts.
* **cut** — by the canvas edge (or its scene's camera viewport) when part of the text is on screen and part is
  off by more than ``overlap_px``; by its own fixed size (a fixed text box smaller than the text, which the
  engine crops); by its panel: a shape drawn before the text — a Rectangle, a Graphics fill or outline, an opaque Image
  / Sprite / NineSlice — that holds more than ``panel_share`` of the text's box but not all of it (± overlap_px)
  and is at least as tall as the text (a bar thinner than the text on it is decoration, not its panel).
* **size** — the font size in game pixels (scale, containers and camera zoom applied, times the game's own
  ``zoom``) is at least ``min_font_px``.
* **contrast** — WCAG 2 contrast of the text colour (blended at its alpha) against what is behind it: the game
  background, then every filled shape drawn before the text that covers more than half of it, blended bottom to
  top (images by the colour grid of their texture under the text), then the text's own background colour. Large
  text (``large_px``, or ``large_bold_px`` bold) needs ``min_contrast_large``, other text ``min_contrast``. An
  outlined text (stroke of at least 1.5 px) may instead contrast with its outline. When what is behind a text is
  not known (a tilemap, a render texture, a gradient, a transparent page) its contrast is not judged and counted
  as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tier2.settings.loader import LegibilityPolicy
from tier2.validators.legibility.geometry import RGB, Box, blend, contrast_ratio, hex_colour

__all__ = ["Issue", "Shape", "TextItem", "judge_screen", "truncate"]

MIN_SHOWN_ALPHA = 0.05
OPAQUE = 0.95
MIN_STROKE_PX = 1.5
#: an Image counts as a panel when this share of its texture grid is opaque (icons and characters are not)
PANEL_OPAQUE_CELLS = 0.85


def truncate(text: str, n: int = 40) -> str:
    one = " ".join(text.split())
    return one if len(one) <= n else one[: n - 1] + "…"


def _rgb(raw: Any) -> RGB | None:
    return (float(raw[0]), float(raw[1]), float(raw[2])) if isinstance(raw, list) and len(raw) >= 3 else None


@dataclass
class TextItem:
    text: str
    box: Box
    lines: list[Box]
    order: int
    scene: str
    alpha: float
    font_px: float | None
    bold: bool
    colour: RGB | None
    colour_alpha: float
    stroke: RGB | None
    stroke_px: float
    bg: tuple[RGB, float] | None
    masked: bool
    clip: dict[str, Any] | None
    viewport: Box | None

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> TextItem | None:
        lines = [b for b in (Box.of(v) for v in raw.get("lines") or []) if b is not None and b.area > 0]
        box = Box.of(raw.get("box"))
        if lines:
            box = lines[0]
            for b in lines[1:]:
                box = box.union(b)
        if box is None or box.area <= 0:
            return None
        colour, peak = raw.get("colour"), raw.get("alpha_peak")
        bg, bg_rgb = raw.get("bg"), _rgb(raw.get("bg"))
        alpha = float(peak if isinstance(peak, int | float) else raw.get("alpha", 1))
        return cls(
            text=str(raw.get("text", "")), box=box, lines=lines or [box], order=int(raw.get("order", 0)),
            scene=str(raw.get("scene", "")), alpha=alpha, font_px=raw.get("font_px") or raw.get("line_px"),
            bold=bool(raw.get("bold")), colour=_rgb(colour),
            colour_alpha=float(colour[3]) if isinstance(colour, list) and len(colour) > 3 else 1.0,
            stroke=_rgb(raw.get("stroke")), stroke_px=float(raw.get("stroke_px") or 0),
            bg=(bg_rgb, float(bg[3])) if bg_rgb and isinstance(bg, list) and len(bg) > 3 and bg[3] > 0 else None,
            masked=bool(raw.get("masked")), clip=raw.get("clip"), viewport=Box.of(raw.get("viewport")))

    def ref(self) -> dict[str, Any]:
        return {"text": truncate(self.text), "box": self.box.as_list()}

    def name(self) -> str:
        return f'"{truncate(self.text)}" {self.box.label()}'


@dataclass
class Shape:
    type: str
    kind: str  # fill | outline | image
    box: Box
    colour: RGB | None
    alpha: float
    panel: bool
    order: int
    grid: dict[str, Any] | None = field(default=None)

    @classmethod
    def parse(cls, raw: dict[str, Any]) -> Shape | None:
        box = Box.of(raw.get("box"))
        if box is None or box.area <= 0:
            return None
        return cls(type=str(raw.get("type", "")), kind=str(raw.get("kind", "")), box=box,
                   colour=_rgb(raw.get("colour")), alpha=float(raw.get("alpha", 1)), panel=bool(raw.get("panel")),
                   order=int(raw.get("order", 0)), grid=raw.get("grid"))

    def cells_under(self, target: Box) -> tuple[RGB, float] | None:
        """Mean colour and coverage of the texture cells under ``target`` (area-weighted); None when unknown."""
        if self.kind != "image" or not self.grid:
            return None
        n, cells = int(self.grid["n"]), self.grid["cells"]
        cw, ch = self.box.w / n, self.box.h / n
        acc = [0.0, 0.0, 0.0, 0.0]
        total = 0.0
        for k, cell in enumerate(cells):
            part = Box(self.box.x + (k % n) * cw, self.box.y + (k // n) * ch, cw, ch).intersect(target)
            if part is None:
                continue
            a = float(cell[3])
            for i in range(3):
                acc[i] += cell[i] * a * part.area
            acc[3] += a * part.area
            total += part.area
        if total <= 0:
            return None
        if acc[3] <= 0:
            return (0.0, 0.0, 0.0), 0.0
        return (acc[0] / acc[3], acc[1] / acc[3], acc[2] / acc[3]), acc[3] / total

    def opaque_over(self, target: Box) -> bool:
        if self.kind == "fill":
            return self.alpha >= OPAQUE and self.colour is not None
        seen = self.cells_under(target)
        return seen is not None and seen[1] * self.alpha >= OPAQUE

    def is_panel(self) -> bool:
        if not self.panel:
            return False
        if self.kind != "image" or self.type == "NineSlice":
            return True
        cells = (self.grid or {}).get("cells") or []
        return bool(cells) and sum(1 for c in cells if c[3] >= 0.9) >= PANEL_OPAQUE_CELLS * len(cells)

    def name(self) -> str:
        what = {"fill": "filled", "outline": "outlined", "image": "image"}.get(self.kind, self.kind)
        return f"{self.type} ({what}) {self.box.label()}"


@dataclass(frozen=True)
class Issue:
    check: str  # overlap | cut | size | contrast
    screen: str
    body: str  # what is wrong, without the screen (the same problem on several screens has the same body)
    evidence: dict[str, Any]

    @property
    def message(self) -> str:
        return f"{self.screen}: {self.body}"


def _edge(t: TextItem, canvas: Box) -> Box:
    if t.viewport is None:
        return canvas
    return t.viewport.intersect(canvas) or canvas


def _duplicates(a: TextItem, b: TextItem, px: float) -> bool:
    same = " ".join(a.text.split()) == " ".join(b.text.split())
    return same and all(abs(u - v) <= px for u, v in zip(a.box.as_list(), b.box.as_list(), strict=True))


def _overlap(a: TextItem, b: TextItem, tol: float) -> Box | None:
    worst: Box | None = None
    for la in a.lines:
        for lb in b.lines:
            inter = la.intersect(lb)
            if inter and inter.w > tol and inter.h > tol and (worst is None or inter.area > worst.area):
                worst = inter
    return worst


def _behind(t: TextItem, shapes: list[Shape], background: RGB | None) -> tuple[RGB | None, list[str]]:
    """The colour behind a text (None when unknown) and the layers it was blended from, bottom to top."""
    colour, layers = background, (["game background"] if background else [])
    for s in shapes:
        if s.order >= t.order or s.kind == "outline" or t.box.share_in(s.box) <= 0.5:
            continue
        if s.kind == "image":
            seen = s.cells_under(t.box)
            if seen is None:
                colour, layers = None, [f"{s.type} of unknown colour"]
                continue
            rgb, a = seen[0], seen[1] * s.alpha
        elif s.colour is None:
            colour, layers = None, [f"{s.type} gradient"]
            continue
        else:
            rgb, a = s.colour, s.alpha
        if colour is None and a < OPAQUE:
            continue
        colour = rgb if colour is None else blend(rgb, a, colour)
        layers.append(f"{s.type} {hex_colour(rgb)}" + (f" at {a:.2f}" if a < OPAQUE else ""))
    if t.bg is not None and colour is not None:
        colour = blend(t.bg[0], t.bg[1] * t.alpha, colour)
        layers.append(f"text background {hex_colour(t.bg[0])}")
    return colour, layers


def judge_screen(snap: dict[str, Any], limits: LegibilityPolicy) -> tuple[list[Issue], dict[str, int]]:
    """Issues on one collected screen, and counts (texts shown, contrast not judged)."""
    screen = str(snap.get("screen", "?"))
    zoom = float(snap.get("zoom") or 1.0)
    tol = limits.overlap_px
    canvas = Box(0, 0, float(snap.get("width") or 0), float(snap.get("height") or 0))
    shapes = sorted((s for s in map(Shape.parse, snap.get("shapes") or []) if s), key=lambda s: s.order)
    texts = sorted((t for t in map(TextItem.parse, snap.get("texts") or []) if t), key=lambda t: t.order)
    background = _rgb(snap.get("background"))
    shown = [t for t in texts if t.alpha > MIN_SHOWN_ALPHA and t.box.intersect(_edge(t, canvas))
             and not any(s.order > t.order and t.box.inside(s.box) and s.opaque_over(t.box) for s in shapes)]
    issues: list[Issue] = []

    def add(check: str, message: str, **evidence: Any) -> None:
        issues.append(Issue(check, screen, message, {"screen": screen, "check": check, **evidence}))

    for i, a in enumerate(shown):
        for b in shown[i + 1:]:
            if a.masked or b.masked or _duplicates(a, b, limits.duplicate_px):
                continue
            inter = _overlap(a, b, tol)
            if inter is not None:
                add("overlap", f"{a.name()} overlaps {b.name()} by {inter.w:.0f}×{inter.h:.0f} px",
                    texts=[a.ref(), b.ref()], overlap=inter.as_list())
    for t in shown:
        edge = _edge(t, canvas)
        sides = t.box.overruns(edge, tol)
        if sides and not t.masked:
            add("cut", f"{t.name()} is cut by the canvas edge {edge.label()}: past the {', '.join(sides)}",
                texts=[t.ref()], edge=edge.as_list())
        if t.clip:
            add("cut", f"{t.name()} is cropped by its fixed size {t.clip.get('fixed')}: it needs "
                f"{t.clip.get('natural')}", texts=[t.ref()], fixed=t.clip.get("fixed"), natural=t.clip.get("natural"))
        panel = next((s for s in reversed(shapes) if s.order < t.order and s.is_panel()
                      and s.box.h >= t.box.h - tol and t.box.share_in(s.box) > limits.panel_share
                      and not t.box.inside(s.box, tol)), None)
        if panel is not None and not t.masked:
            add("cut", f"{t.name()} runs out of its panel {panel.name()}: past the "
                f"{', '.join(t.box.overruns(panel.box, tol))}", texts=[t.ref()], panel=panel.box.as_list(),
                panel_type=panel.type)
        size = float(t.font_px) * zoom if t.font_px else None
        if size is not None and size < limits.min_font_px:
            add("size", f"{t.name()} is set in {size:.1f} px, below {limits.min_font_px:g} px",
                texts=[t.ref()], font_px=round(size, 1), min_font_px=limits.min_font_px)
    unjudged = 0
    # the lower copy of a label drawn twice is its shadow: its own contrast does not matter
    shadows = {id(a) for i, a in enumerate(shown) for b in shown[i + 1:] if _duplicates(a, b, limits.duplicate_px)}
    for t in shown:
        if id(t) in shadows:
            continue
        behind, layers = _behind(t, shapes, background)
        if t.colour is None or behind is None:
            unjudged += 1
            continue
        seen = blend(t.colour, t.alpha * t.colour_alpha, behind)
        ratio = contrast_ratio(seen, behind)
        if t.stroke is not None and t.stroke_px >= MIN_STROKE_PX:
            ratio = max(ratio, contrast_ratio(seen, blend(t.stroke, t.alpha, behind)))
        size = float(t.font_px or 0) * zoom
        large = size >= limits.large_px or (t.bold and size >= limits.large_bold_px)
        need = limits.min_contrast_large if large else limits.min_contrast
        if ratio < need:
            add("contrast", f"{t.name()}: contrast {ratio:.2f}:1 ({hex_colour(t.colour)} at alpha {t.alpha:.2f} on "
                f"{hex_colour(behind)}) is below {need:g}:1 for {'large' if large else 'normal'} text",
                texts=[t.ref()], colour=hex_colour(t.colour), alpha=round(t.alpha, 2), behind=hex_colour(behind),
                layers=layers, ratio=round(ratio, 2), required=need)
    return issues, {"texts": len(texts), "shown": len(shown), "contrast_unjudged": unjudged}

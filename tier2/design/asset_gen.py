"""The offline asset generator: a deterministic placeholder per (role, description).

Visual roles get a PNG (Pillow) whose silhouette family comes from the description's words where one fits (a
plane/jet/rocket is a dart, a bird/bat/crane a pair of wings, a coin/gem/orb a round token...) and from its hash
otherwise; palette, size, proportions and detail come from the hash, so two descriptions differ in shape, colour
or size, and one description always gives the same bytes. A ``backdrop`` is a 400×300 scene (sky gradient and a
skyline, hills or trees the words choose). ``sound`` is a short mono 16-bit WAV (stdlib ``wave``): a tone whose
pitch, sweep, waveform and length come from the hash.
"""

from __future__ import annotations

import colorsys
import hashlib
import io
import math
import struct
import wave
from typing import Final

from PIL import Image, ImageDraw

__all__ = ["SHAPES", "generate", "shape_of", "sprite_png", "backdrop_png", "sound_wav"]

#: silhouette families, and the words that pick one (the first family with a word in the description wins)
SHAPES: Final[dict[str, tuple[str, ...]]] = {
    "dart": ("plane", "airplane", "aeroplane", "jet", "rocket", "ship", "spaceship", "starfighter", "arrow", "dart",
             "missile", "glider", "飞机", "飞船", "火箭"),
    "wings": ("bird", "birds", "bat", "bats", "crane", "cranes", "crow", "owl", "eagle", "dragon", "butterfly",
              "moth", "wing", "wings", "鸟", "蝙蝠", "鹤"),
    "token": ("coin", "coins", "gem", "gems", "orb", "orbs", "ball", "acorn", "acorns", "star", "stars", "jewel",
              "pearl", "金币", "宝石", "硬币"),
    "person": ("wizard", "witch", "knight", "girl", "boy", "man", "woman", "villager", "villagers", "customer",
               "customers", "kid", "hero", "ninja", "chef", "baker", "人", "顾客", "巫师"),
    "critter": ("squirrel", "mole", "penguin", "cat", "dog", "fox", "rabbit", "frog", "mouse", "bear", "slime",
                "blob", "worm", "snake", "snakes", "松鼠", "企鹅", "猫"),
    "box": ("crate", "box", "bread", "cake", "cakes", "potion", "potions", "bottle", "book", "block", "brick",
            "面包", "蛋糕", "药水"),
    "spiky": ("rock", "asteroid", "mine", "spike", "spikes", "cactus", "bomb", "thorn", "fire", "fireball",
              "火球", "石头"),
}
_ORDER: Final = tuple(SHAPES)
_BASE_SIZE: Final = {"player": 48, "enemy": 40, "pickup": 28, "goods": 32, "customer": 44, "obstacle": 40}


def _digest(role: str, description: str) -> bytes:
    return hashlib.sha256(f"{role}\0{' '.join(description.casefold().split())}".encode()).digest()


def shape_of(role: str, description: str) -> str:
    """The silhouette family of a description: its words first, then its hash."""
    text = description.casefold()
    words = set(text.replace(",", " ").replace(".", " ").split())
    for shape, cues in SHAPES.items():
        if any((c in words) if c.isascii() else (c in text) for c in cues):
            return shape
    return _ORDER[_digest(role, description)[0] % len(_ORDER)]


def _rgb(h: float, s: float, v: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, s, v)
    return int(r * 255), int(g * 255), int(b * 255)


def _palette(d: bytes) -> tuple[tuple[int, int, int], tuple[int, int, int], tuple[int, int, int]]:
    hue = d[1] / 256
    base = _rgb(hue, 0.55 + d[2] / 1024, 0.75 + d[3] / 1300)
    dark = _rgb(hue + 0.02, 0.7, 0.35 + d[4] / 1500)
    accent = _rgb(hue + 0.33 + d[5] / 1024, 0.6, 0.95)
    return base, dark, accent


def _png(img: Image.Image) -> bytes:
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def sprite_png(role: str, description: str) -> bytes:
    """A transparent square sprite: the description's silhouette in its palette, with hash-chosen details."""
    d = _digest(role, description)
    shape = shape_of(role, description)
    size = _BASE_SIZE.get(role, 40) + (d[6] % 5 - 2) * 4
    base, dark, accent = _palette(d)
    scale = 4  # drawn large, then reduced: smooth edges
    s = size * scale
    img = Image.new("RGBA", (s, s), (0, 0, 0, 0))
    g = ImageDraw.Draw(img)
    c = s / 2
    r = s * 0.46
    k = 0.75 + (d[7] % 50) / 200  # proportion (0.75..1.0)
    if shape == "dart":
        g.polygon([(c, c - r), (c + r * k, c + r), (c, c + r * 0.45), (c - r * k, c + r)], fill=base)
        g.polygon([(c, c - r), (c + r * 0.18, c + r * 0.5), (c - r * 0.18, c + r * 0.5)], fill=dark)
    elif shape == "wings":
        g.polygon([(c, c - r * 0.1), (c - r, c - r * k), (c - r * 0.55, c + r * 0.35), (c, c + r * 0.6)], fill=base)
        g.polygon([(c, c - r * 0.1), (c + r, c - r * k), (c + r * 0.55, c + r * 0.35), (c, c + r * 0.6)], fill=base)
        g.ellipse([c - r * 0.2, c - r * 0.45, c + r * 0.2, c + r * 0.7], fill=dark)
        g.polygon([(c - r * 0.1, c - r * 0.45), (c + r * 0.1, c - r * 0.45), (c, c - r * 0.75)], fill=accent)
    elif shape == "token":
        g.ellipse([c - r, c - r * k, c + r, c + r * k], fill=dark)
        g.ellipse([c - r * 0.8, c - r * 0.8 * k, c + r * 0.8, c + r * 0.8 * k], fill=base)
        g.ellipse([c - r * 0.45, c - r * 0.6 * k, c - r * 0.05, c - r * 0.2 * k], fill=accent)
    elif shape == "person":
        g.ellipse([c - r * 0.32, c - r, c + r * 0.32, c - r * 0.36], fill=accent)
        g.polygon([(c, c - r * 0.4), (c + r * 0.7 * k, c + r), (c - r * 0.7 * k, c + r)], fill=base)
        g.rectangle([c - r * 0.7, c - r * 0.1, c + r * 0.7, c + r * 0.05], fill=dark)
    elif shape == "critter":
        g.ellipse([c - r, c - r * 0.55 * k, c + r, c + r], fill=base)
        g.ellipse([c - r * 0.75, c - r, c - r * 0.25, c - r * 0.3], fill=dark)
        g.ellipse([c + r * 0.25, c - r, c + r * 0.75, c - r * 0.3], fill=dark)
        for dx in (-0.35, 0.35):
            g.ellipse([c + dx * r - r * 0.1, c - r * 0.05, c + dx * r + r * 0.1, c + r * 0.15], fill=accent)
    elif shape == "box":
        g.rounded_rectangle([c - r * k, c - r * 0.8, c + r * k, c + r], radius=r * 0.2, fill=base)
        g.rectangle([c - r * k, c - r * 0.15, c + r * k, c + r * 0.1], fill=dark)
        g.rectangle([c - r * 0.3, c - r, c + r * 0.3, c - r * 0.7], fill=accent)
    else:  # spiky
        n = 7 + d[8] % 5
        pts = []
        for i in range(2 * n):
            a = math.pi * i / n
            rr = r if i % 2 == 0 else r * (0.45 + (d[9 + i % 8] % 30) / 100)
            pts.append((c + math.cos(a) * rr, c + math.sin(a) * rr))
        g.polygon(pts, fill=base)
        g.ellipse([c - r * 0.3, c - r * 0.3, c + r * 0.3, c + r * 0.3], fill=dark)
    if d[10] % 3 == 0:  # a hash-chosen mark: stripes or a dot
        g.line([(c - r * 0.5, c + r * 0.6), (c + r * 0.5, c + r * 0.6)], fill=accent, width=max(2, s // 24))
    return _png(img.resize((size, size), Image.Resampling.LANCZOS))


_SCENERY: Final[dict[str, tuple[str, ...]]] = {
    "city": ("city", "town", "street", "streets", "skyline", "rooftops", "城市", "街"),
    "forest": ("forest", "woods", "trees", "treetops", "jungle", "森林", "树"),
    "hills": ("hills", "field", "fields", "meadow", "farm", "village", "mountains", "草原", "山"),
    "sea": ("sea", "ocean", "ice", "floes", "lake", "beach", "海", "冰"),
    "space": ("space", "stars", "galaxy", "planet", "太空", "星"),
}


def backdrop_png(description: str) -> bytes:
    """A 400×300 backdrop (the game scales it to its 800×600 view): a sky gradient and the scenery its words name."""
    d = _digest("backdrop", description)
    text = description.casefold()
    kind = next((k for k, cues in _SCENERY.items() if any(c in text for c in cues)),
                tuple(_SCENERY)[d[0] % len(_SCENERY)])
    w, h = 400, 300
    img = Image.new("RGB", (w, h))
    g = ImageDraw.Draw(img)
    hue = d[1] / 256
    night = kind == "space" or d[2] % 4 == 0
    for y in range(h):
        t = y / h
        g.line([(0, y), (w, y)], fill=_rgb(hue + 0.05 * t, 0.5 + 0.2 * t, (0.2 if night else 0.55) + 0.35 * t))
    ground = _rgb(hue + 0.5, 0.5, 0.22 + d[3] / 2000)
    if kind == "city":
        x = 0
        i = 0
        while x < w:
            bw = 22 + d[(i + 4) % 32] % 30
            bh = 50 + d[(i + 11) % 32] % 120
            g.rectangle([x, h - bh, x + bw - 3, h], fill=ground)
            for wy in range(h - bh + 8, h - 6, 12):
                for wx in range(x + 4, x + bw - 7, 8):
                    if (wx * 7 + wy * 3 + d[i % 32]) % 5 == 0:
                        g.rectangle([wx, wy, wx + 3, wy + 4], fill=_rgb(0.14, 0.5, 0.95))
            x += bw
            i += 1
    elif kind == "forest":
        for i in range(14):
            tx = (i * 31 + d[i % 32]) % w
            th = 70 + d[(i + 7) % 32] % 90
            g.polygon([(tx, h - th), (tx + 26, h - 20), (tx - 26, h - 20)], fill=ground)
            g.rectangle([tx - 3, h - 22, tx + 3, h], fill=_rgb(0.08, 0.6, 0.3))
    elif kind == "hills":
        for j, shade in enumerate((0.35, 0.25)):
            pts = [(0, h)] + [(x, h - 60 - j * 30 - 25 * math.sin((x + d[j] * 3) / (40 + d[j + 2] % 30)))
                              for x in range(0, w + 10, 10)] + [(w, h)]
            g.polygon(pts, fill=_rgb(0.3 + hue * 0.2, 0.5, shade + j * 0.1))
    elif kind == "sea":
        g.rectangle([0, h * 0.62, w, h], fill=_rgb(0.58, 0.6, 0.55))
        for i in range(9):
            y = int(h * 0.66 + i * 11)
            g.line([(0, y), (w, y)], fill=_rgb(0.55, 0.3, 0.85), width=1)
    else:  # space
        for i in range(90):
            sx, sy = (d[i % 32] * 37 + i * 53) % w, (d[(i + 5) % 32] * 29 + i * 17) % h
            g.point((sx, sy), fill=(255, 255, 255))
    return _png(img)


def sound_wav(description: str, rate: int = 22_050) -> bytes:
    """A short mono 16-bit WAV: pitch, sweep, waveform and length from the description's hash."""
    d = _digest("sound", description)
    f0 = 220 + d[0] * 3
    f1 = f0 * (0.4 + d[1] / 160)
    length = 0.18 + d[2] / 800  # 0.18..0.5 s
    wavef = d[3] % 3  # sine, square, saw
    n = int(rate * length)
    frames = bytearray()
    phase = 0.0
    for i in range(n):
        t = i / n
        phase += 2 * math.pi * (f0 + (f1 - f0) * t) / rate
        if wavef == 0:
            v = math.sin(phase)
        elif wavef == 1:
            v = 1.0 if math.sin(phase) >= 0 else -1.0
        else:
            v = (phase / math.pi) % 2 - 1
        env = min(1.0, i / (rate * 0.01)) * (1 - t) ** 2
        frames += struct.pack("<h", int(v * env * 0.6 * 32767))
    buf = io.BytesIO()
    with wave.open(buf, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(bytes(frames))
    return buf.getvalue()


def generate(role: str, description: str) -> bytes:
    """The placeholder asset of ``role`` for ``description`` (PNG, or WAV for ``sound``)."""
    if role == "sound":
        return sound_wav(description)
    if role == "backdrop":
        return backdrop_png(description)
    return sprite_png(role, description)

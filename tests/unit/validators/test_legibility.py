"""l1.legible's judgement on collected screens (the browser side is in tests/integration/test_legibility.py).

Snapshots here have the shape the engine adapter's `legibility.js` returns: boxes ``[x, y, w, h]`` in canvas
pixels, colours ``[r, g, b(, a)]``, render order in ``order``.
"""

from __future__ import annotations

from typing import Any

from tier2.settings.loader import REPO_ROOT, LegibilityPolicy, Policy, PolicyStore
from tier2.validators.l1.runtime_gates import RUNTIME_GATES, bound_gates
from tier2.validators.legibility import legible
from tier2.validators.legibility.geometry import contrast_ratio
from tier2.validators.legibility.judge import judge_screen
from tier2.validators.runner import apply_policy, apply_verdicts, report_findings
from tier2.validators.trace import PlayTrace

BG = [43, 29, 20]
INK = [253, 243, 225, 1]
LIMITS = LegibilityPolicy()


def text(s: str, box: list[float], order: int, **kw: Any) -> dict[str, Any]:
    return {"text": s, "box": box, "lines": [box], "order": order, "alpha": 1, "font_px": 16, "colour": INK,
            "scene": "Play", "bold": False, **kw}


def shape(box: list[float], order: int, kind: str = "fill", colour: list[int] | None = None, **kw: Any
          ) -> dict[str, Any]:
    return {"type": "Rectangle", "kind": kind, "box": box, "colour": colour if colour is not None else [74, 50, 35],
            "alpha": 1, "panel": True, "order": order, **kw}


def snap(texts: list[dict[str, Any]], shapes: list[dict[str, Any]] | None = None, screen: str = "02-play",
         **kw: Any) -> dict[str, Any]:
    return {"screen": screen, "width": 800, "height": 600, "zoom": 1, "background": BG, "texts": texts,
            "shapes": shapes or [], **kw}


def checks(s: dict[str, Any], limits: LegibilityPolicy = LIMITS) -> list[str]:
    return [i.check for i in judge_screen(s, limits)[0]]


def trace(*snaps: dict[str, Any], mode: str = "contract") -> PlayTrace:
    return PlayTrace(mode=mode, booted=True, legibility=list(snaps))  # type: ignore[arg-type]


# --- overlap -------------------------------------------------------------------------------------------------------

def test_label_and_recipe_drawn_over_each_other_overlap_naming_both_texts_and_boxes() -> None:
    issues, _ = judge_screen(snap([text("[W] Ember Draught", [416, 350, 150, 19], 1),
                                   text("1 Glowcap + 2 Fire Salt → 1 Ember Draught", [420, 352, 342, 16], 2)]), LIMITS)
    assert [i.check for i in issues] == ["overlap"]
    ev = issues[0].evidence
    assert [t["text"] for t in ev["texts"]] == ["[W] Ember Draught", "1 Glowcap + 2 Fire Salt → 1 Ember Draug…"]
    assert ev["texts"][0]["box"] == [416, 350, 150, 19] and ev["overlap"] == [420, 352, 146, 16]
    assert issues[0].message.startswith('02-play: "[W] Ember Draught" (x=416 y=350 w=150 h=19) overlaps')


def test_overlap_tolerance_is_the_policy_s_pixels() -> None:
    a = text("Flour", [0, 100, 100, 20], 1)
    assert checks(snap([a, text("Eggs", [98, 100, 100, 20], 2)])) == []  # 2 px: tolerated
    assert checks(snap([a, text("Eggs", [97, 100, 100, 20], 2)])) == ["overlap"]
    assert checks(snap([a, text("Eggs", [97, 100, 100, 20], 2)]), LegibilityPolicy(overlap_px=4)) == []


def test_same_string_drawn_twice_as_a_shadow_is_one_label_but_different_strings_never_are() -> None:
    assert checks(snap([text("GAME OVER", [300, 200, 200, 40], 1, colour=[0, 0, 0, 1]),
                        text("GAME OVER", [297, 197, 200, 40], 2)])) == []
    assert checks(snap([text("GAME OVER", [300, 200, 200, 40], 1),
                        text("GAME OVER", [290, 190, 200, 40], 2)])) == ["overlap"]  # 10 px apart: two labels
    assert checks(snap([text("Score: 10", [300, 200, 200, 40], 1),
                        text("10", [350, 205, 40, 30], 2)])) == ["overlap"]  # contained, but another string


def test_overlap_is_judged_on_drawn_lines_not_the_bounding_box() -> None:
    # a two-line text whose second line is short: a label beside that short line touches no glyph
    block = text("A much longer first line\nshort", [100, 100, 300, 40], 1,
                 lines=[[100, 100, 300, 20], [100, 120, 60, 20]])
    assert checks(snap([block, text("Price", [200, 121, 80, 19], 2)])) == []
    assert checks(snap([block, text("Price", [140, 121, 80, 19], 2)])) == ["overlap"]


def test_masked_faded_and_occluded_texts_are_not_judged() -> None:
    a = text("Row 1", [10, 100, 200, 20], 1)
    assert checks(snap([a, text("Row 2", [10, 105, 200, 20], 2, masked=True)])) == []
    assert checks(snap([a, text("Row 2", [10, 105, 200, 20], 2, alpha=0.0)])) == []
    # a modal panel drawn over the first text hides it
    assert checks(snap([a, text("Paused", [10, 105, 200, 20], 3)], [shape([0, 90, 400, 60], 2)])) == []


# --- cut ------------------------------------------------------------------------------------------------------------

def test_text_past_the_canvas_edge_is_cut_and_one_fully_off_screen_is_not_shown() -> None:
    issues, counts = judge_screen(snap([text("Salvaged Shield Generator", [700, 300, 250, 24], 1),
                                        text("offscreen", [900, 300, 100, 24], 2)]), LIMITS)
    assert [i.check for i in issues] == ["cut"] and counts["shown"] == 1
    assert issues[0].evidence["edge"] == [0, 0, 800, 600] and "right by 150 px" in issues[0].message
    # a scene whose camera viewport is smaller clips at the viewport
    assert checks(snap([text("HUD", [10, 10, 80, 20], 1, viewport=[0, 0, 50, 600])])) == ["cut"]


def test_text_cropped_by_its_fixed_size_is_cut() -> None:
    issues, _ = judge_screen(snap([text("Long name", [10, 10, 100, 20], 1,
                                        clip={"natural": [160, 20], "fixed": [100, 20]})]), LIMITS)
    assert [i.check for i in issues] == ["cut"] and "cropped by its fixed size [100, 20]" in issues[0].message


def test_text_running_out_of_the_panel_it_sits_on_is_cut() -> None:
    panel = shape([200, 280, 300, 60], 1)
    issues, _ = judge_screen(snap([text("Night-shift Nurse Amy is waiting", [212, 296, 420, 26], 2)], [panel]),
                             LIMITS)
    assert [i.check for i in issues] == ["cut"]
    assert issues[0].evidence["panel"] == [200, 280, 300, 60] and "right by 132 px" in issues[0].message
    assert checks(snap([text("fits", [212, 296, 200, 26], 2)], [panel])) == []
    # an outline frame is a panel too; a bar thinner than the text on it is decoration; a shape drawn after the
    # text is not what it sits on; a shape holding less than half of the text is not its panel
    assert checks(snap([text("label", [212, 296, 320, 26], 2)], [shape([200, 280, 300, 60], 1, kind="outline")])) \
        == ["cut"]
    assert checks(snap([text("HP 50/100", [210, 95, 120, 20], 2)], [shape([200, 100, 100, 10], 1)])) == []
    assert checks(snap([text("label", [212, 296, 320, 26], 1)], [shape([200, 280, 300, 60], 2, alpha=0.5)])) == []
    assert checks(snap([text("label", [450, 296, 320, 26], 2)], [panel])) == []


def test_only_opaque_images_are_panels() -> None:
    opaque = {"n": 2, "cells": [[80, 80, 80, 1]] * 4}
    sprite = {"n": 2, "cells": [[80, 80, 80, 1], [0, 0, 0, 0], [0, 0, 0, 0], [80, 80, 80, 1]]}  # a character
    label = text("Player One", [150, 110, 140, 20], 2, colour=[255, 255, 255, 1])
    assert checks(snap([label], [shape([100, 100, 128, 64], 1, kind="image", colour=None, type="Image",
                                       grid=opaque)])) == ["cut"]
    assert checks(snap([label], [shape([100, 100, 128, 64], 1, kind="image", colour=None, type="Sprite",
                                       grid=sprite)])) == []


# --- size and contrast ----------------------------------------------------------------------------------------------

def test_text_below_the_minimum_size_is_reported() -> None:
    issues, _ = judge_screen(snap([text("tiny", [10, 10, 30, 9], 1, font_px=8)]), LIMITS)
    assert [i.check for i in issues] == ["size"] and issues[0].evidence["font_px"] == 8
    assert checks(snap([text("tiny", [10, 10, 30, 9], 1, font_px=8, )], zoom=2)) == []  # a zoomed pixel-art game
    assert checks(snap([text("ok", [10, 10, 30, 12], 1, font_px=10)])) == []


def test_low_contrast_names_colours_and_ratio() -> None:
    issues, _ = judge_screen(snap([text("Ember Draught", [300, 290, 200, 24], 1, colour=[74, 58, 48, 1])]), LIMITS)
    assert [i.check for i in issues] == ["contrast"]
    ev = issues[0].evidence
    assert ev["colour"] == "#4a3a30" and ev["behind"] == "#2b1d14" and ev["required"] == 4.5
    assert ev["ratio"] == round(contrast_ratio((74, 58, 48), (43, 29, 20)), 2) < 1.6


def test_contrast_is_judged_against_what_is_behind_at_the_text_s_alpha() -> None:
    on_bubble = text("Mia", [120, 110, 40, 22], 2, colour=[43, 29, 20, 1])
    assert checks(snap([on_bubble], [shape([100, 100, 250, 132], 1, colour=[253, 243, 225])])) == []
    assert checks(snap([on_bubble])) == ["contrast"]  # the same dark text straight on the dark background
    dimmed = text("[Q] Bread", [10, 10, 80, 19], 1, alpha=0.4)
    assert checks(snap([dimmed])) == ["contrast"]
    assert checks(snap([{**dimmed, "alpha_peak": 1}])) == []  # a blink: judged at its brightest
    # a translucent panel is blended over the background
    light = shape([0, 0, 200, 40], 1, colour=[253, 243, 225], alpha=0.9)
    assert checks(snap([text("on light", [10, 10, 80, 19], 2)], [light])) == ["contrast"]


def test_large_text_needs_less_contrast_and_an_outline_counts() -> None:
    grey = [150, 110, 80, 1]  # about 3.9:1 on the background
    assert checks(snap([text("small", [10, 10, 80, 19], 1, colour=grey)])) == ["contrast"]
    assert checks(snap([text("large", [10, 10, 80, 30], 1, colour=grey, font_px=24)])) == []
    assert checks(snap([text("bold", [10, 10, 80, 24], 1, colour=grey, font_px=19, bold=True)])) == []
    dark = text("outlined", [10, 10, 80, 19], 1, colour=[60, 40, 30, 1], stroke=[255, 255, 255, 1], stroke_px=4)
    assert checks(snap([dark])) == []


def test_contrast_over_an_unknown_background_is_not_judged_but_counted() -> None:
    tiles = shape([0, 0, 800, 600], 1, kind="image", colour=None, type="TilemapLayer", grid=None, panel=False)
    issues, counts = judge_screen(snap([text("Score", [10, 10, 80, 19], 2, colour=[60, 40, 30, 1])], [tiles]),
                                  LIMITS)
    assert issues == [] and counts["contrast_unjudged"] == 1
    image = shape([0, 0, 800, 600], 1, kind="image", colour=None, type="Image", panel=False,
                  grid={"n": 1, "cells": [[250, 250, 250, 1]]})
    assert checks(snap([text("Score", [10, 10, 80, 19], 2, colour=[255, 255, 255, 1])], [image])) == ["contrast"]


# --- the gate -------------------------------------------------------------------------------------------------------

def test_gate_reports_a_problem_once_naming_every_screen_it_is_on() -> None:
    bad = [text("A", [0, 100, 100, 20], 1), text("B", [50, 100, 100, 20], 2)]
    result = legible(trace(snap(bad, screen="02-play"), snap(bad, screen="03-end"), snap([], screen="01-menu")))
    assert not result.passed and result.layer == "L1" and result.id == "l1.legible"
    assert result.evidence["counts"] == {"overlap": 1} and result.evidence["issues"][0]["screens"] == \
        ["02-play", "03-end"]
    assert result.findings[0].message.endswith("(also on 03-end)")
    assert "1 legibility problem(s) on 02-play, 03-end: 1 overlapping texts" == result.summary


def test_gate_passes_with_counts_and_fails_when_nothing_could_be_read() -> None:
    ok = legible(trace(snap([text("Flour", [10, 10, 80, 19], 1)])))
    assert ok.passed and "1 text(s) on 1 screen(s)" in ok.summary
    assert not legible(PlayTrace(mode="contract", booted=False)).passed
    broken = legible(trace({"screen": "01-menu", "error": "collector failed: TypeError"}))
    assert not broken.passed and "01-menu: collector failed" in broken.findings[0].message
    nothing = legible(trace({"screen": "01-start", "error": "no Phaser game found"}, mode="generic"))
    assert nothing.passed and nothing.evidence["applicable"] is False


def test_generic_mode_reports_legibility_as_findings_and_contract_mode_enforces_it() -> None:
    bad = trace(snap([text("A", [0, 100, 100, 20], 1), text("B", [50, 100, 100, 20], 2)]), mode="generic")
    gate = legible(bad)
    assert gate.layer == "L1" and not gate.passed  # the gate judges the same way in both modes
    found = apply_policy(apply_verdicts(gate, "generic", Policy()), Policy())
    assert found.passed and not found.blocking and found.evidence["verdicts"]["would_fail"] is True
    assert found.findings and all(f.severity == "warning" and f.rule == "l1.legible" for f in found.findings)
    assert found.evidence["issues"][0]["check"] == "overlap"  # the evidence stays
    assert report_findings([found])[0]["evidence"]["check"] == "overlap"
    enforced = apply_policy(apply_verdicts(gate, "contract", Policy()), Policy())
    assert enforced.blocking  # tier2's own games must pass it
    strict = Policy(verdicts={"l1.legible": {"generic": "verdict"}})
    assert apply_policy(apply_verdicts(gate, "generic", strict), strict).blocking


def test_thresholds_come_from_the_hot_policy_files() -> None:
    policy = PolicyStore(REPO_ROOT / "config").snapshot()
    assert policy.legibility == LegibilityPolicy()  # the file states the defaults
    assert legible in RUNTIME_GATES
    small = trace(snap([text("note", [10, 10, 60, 14], 1, font_px=12)]))
    gate = next(g for g in bound_gates(Policy(legibility={"min_font_px": 14})) if g(small).id == "l1.legible")
    assert not gate(small).passed and gate(small).evidence["issues"][0]["min_font_px"] == 14
    assert next(g for g in bound_gates(policy) if g(small).id == "l1.legible")(small).passed

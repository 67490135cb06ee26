"""`validate_brief`: the limits a brief (or a follow-up) is held to, with a reason a person can act on."""

from __future__ import annotations

import pytest

from tier2.errors import BadInput
from tier2.runs.request import validate_brief
from tier2.settings.loader import BriefLimits

LIMITS = BriefLimits(min_chars=8, max_chars=40)


def test_a_short_chinese_follow_up_is_a_brief_and_a_short_english_one_is_not() -> None:
    assert validate_brief("  给我五条命 ", LIMITS) == "给我五条命"  # 5 characters, each counts twice
    with pytest.raises(BadInput, match="too short"):
        validate_brief("faster", LIMITS)
    with pytest.raises(BadInput, match="too short"):
        validate_brief("三条命", LIMITS)  # 3 characters: still too short


@pytest.mark.parametrize(("brief", "why"), [(None, "must be a string"), ("   ", "empty"), ("x" * 41, "limit is 40"),
                                            ("a maze\x00game", "NUL")])
def test_bad_briefs_say_what_is_wrong(brief: object, why: str) -> None:
    with pytest.raises(BadInput, match=why):
        validate_brief(brief, LIMITS)

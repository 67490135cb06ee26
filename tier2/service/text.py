"""Text every request field must be: valid Unicode (no lone UTF-16 surrogate, which cannot be stored or encoded
as UTF-8), no NUL and no control character but ``\\n``, ``\\r`` and ``\\t`` (those only in multi-line fields).

`check_text` is the one helper; `Text`, `Line` and `Ident` are the pydantic field types built on it, used by the
request models and for headers and path parameters.
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, StringConstraints

from tier2.errors import BadInput
from tier2.store.run_store import ID_PATTERN

__all__ = ["check_text", "Text", "Line", "Ident", "IDENT_RE"]

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL_LINE = re.compile("[\x00-\x1f\x7f]")
_CONTROL_TEXT = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
#: ids tier2 hands out and accepts (run, thread, project ids; idempotency keys are wider, see `Line`): the
#: store's pattern, so a request field and a tenant-scoped read agree on what an id is
IDENT_RE = ID_PATTERN


def check_text(value: str, field: str = "value", *, multiline: bool = False) -> str:
    """``value`` unchanged, or `BadInput` naming ``field`` and what is wrong (never echoing the value)."""
    if _SURROGATE.search(value):
        raise BadInput(f"{field} is not valid UTF-8 text (it contains an unpaired surrogate)")
    bad = (_CONTROL_TEXT if multiline else _CONTROL_LINE).search(value)
    if bad:
        what = "a NUL character" if bad.group() == "\x00" else f"a control character (U+{ord(bad.group()):04X})"
        raise BadInput(f"{field} contains {what}")
    return value


def _text(value: str) -> str:
    try:
        return check_text(value, "text", multiline=True)
    except BadInput as exc:
        raise ValueError(str(exc).removeprefix("text ")) from None


def _line(value: str) -> str:
    try:
        return check_text(value, "text")
    except BadInput as exc:
        raise ValueError(str(exc).removeprefix("text ")) from None


#: multi-line text (a brief): \n \r \t allowed
Text = Annotated[str, AfterValidator(_text)]
#: one line (a model route, a path, a key)
Line = Annotated[str, StringConstraints(max_length=1000), AfterValidator(_line)]
#: an id: letters, digits and ``_ . : -``, at most 64 characters
Ident = Annotated[str, StringConstraints(pattern=IDENT_RE)]

"""A game's HTML page as the Studio's play route gives it to a viewer's browser (no network flags behind it).

`play_page` returns the page re-encoded as UTF-8 (how it is served: a UTF-16 byte-order mark would otherwise make
the browser read the page, and the script put in it, as UTF-16), with

* the no-network page script (`tier2.browser.network.no_network_script`, viewer flavour) as its very first script;
* every declarative shadow root refused: the ``shadowroot…`` attribute loses its name, so no closed shadow root
  can hide a nested frame from the page script;
* the CSP hash sources of its inline scripts (ours first): a policy that lists them runs those and no other inline
  code — no ``javascript:`` URL (a nested frame's own document, which no page script reaches), no event-handler
  attribute.
"""

from __future__ import annotations

import base64
import hashlib
import re
from dataclasses import dataclass
from typing import Final

from tier2.browser.network import no_network_script

__all__ = ["PlayPage", "play_page", "inject_first_script", "inline_script_hashes", "decode_page"]

#: an HTML ``<script ...>text</script`` (quoted attribute values may hold ``>``)
_SCRIPT = re.compile(r"""<script\b((?:[^>"']|"[^"]*"|'[^']*')*)>(.*?)</script""", re.I | re.S)
_SRC_ATTR = re.compile(r"""(?:^|[\s"'/])src\s*=""", re.I)
#: HTML lowercases attribute names in ASCII only: exactly the matches that can name the attribute
_DECLARATIVE = re.compile(r"shadowroot", re.I | re.A)
MAX_INLINE_SCRIPTS: Final = 64
_VIEWER_SCRIPT: Final = no_network_script(viewer=True)


@dataclass(frozen=True)
class PlayPage:
    body: bytes
    #: ``'sha256-...'`` sources of the page's inline scripts, the page script's first
    script_hashes: list[str]


def play_page(raw: bytes) -> PlayPage:
    html = _DECLARATIVE.sub("data-refused-shadowroot", decode_page(raw))
    html = inject_first_script(html, _VIEWER_SCRIPT)
    return PlayPage(html.encode(), inline_script_hashes(html))


def decode_page(raw: bytes) -> str:
    """The text a browser reads from ``raw`` served as ``text/html; charset=utf-8``: a byte-order mark wins over the
    header (UTF-8, UTF-16 LE/BE), else UTF-8 with replacement characters."""
    if raw.startswith(b"\xef\xbb\xbf"):
        return raw[3:].decode("utf-8", "replace")
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        return raw[2:].decode("utf-16-le" if raw[0] == 0xFF else "utf-16-be", "replace")
    return raw.decode("utf-8", "replace")


def inject_first_script(html: str, script: str) -> str:
    """``html`` with ``<script>script</script>`` before anything the document could run: after leading whitespace
    and a doctype (a script ahead of the doctype would put the page in quirks mode; the first ``>`` ends a doctype
    token), else at the very start — even before a comment (its end has more forms than worth parsing here)."""
    if "</script" in script.lower():
        raise ValueError("the script would end its own element")
    rest = html.lstrip(" \t\n\f\r")
    head = 0
    if rest[:9].lower() == "<!doctype" and (end := rest.find(">")) >= 0:
        head = len(html) - len(rest) + end + 1
    return f"{html[:head]}<script>{script}</script>{html[head:]}"


def inline_script_hashes(html: str) -> list[str]:
    """CSP sources of the inline scripts of ``html`` in order, at most `MAX_INLINE_SCRIPTS` (later ones will not
    run); newlines normalised as the HTML parser does."""
    out: list[str] = []
    for match in _SCRIPT.finditer(html):
        if _SRC_ATTR.search(match.group(1)):
            continue  # the text of a script with a src never runs
        text = match.group(2).replace("\r\n", "\n").replace("\r", "\n")
        digest = base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()
        source = f"'sha256-{digest}'"
        if source not in out:
            out.append(source)
        if len(out) >= MAX_INLINE_SCRIPTS:
            break
    return out

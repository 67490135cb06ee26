"""The game page the Studio's play route serves (`tier2.browser.play_page`): the page script first whatever the
page starts with, UTF-8 whatever its byte-order mark, no declarative shadow root, its inline scripts' hashes (the
browser-level behaviour: tests/e2e/test_play_no_network.py)."""

from __future__ import annotations

import base64
import hashlib

import pytest

from tier2.browser.play_page import inject_first_script, inline_script_hashes, play_page

TAG = "<script>S</script>"


def _sha(text: str) -> str:
    return "'sha256-%s'" % base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()  # noqa: UP031


@pytest.mark.parametrize(("html", "expected"), [
    ("<!doctype html><script>game()</script>", "<!doctype html>" + TAG + "<script>game()</script>"),
    ("<script>first()</script><!doctype html>", TAG + "<script>first()</script><!doctype html>"),
    (" \n<!DOCTYPE html \"a>b\">\n<html>", " \n<!DOCTYPE html \"a>" + TAG + "b\">\n<html>"),
    # a comment ends in more ways than "-->" (e.g. "--!>"): the script goes before it
    ("<!-- a --!><script>x()</script> --><!doctype html>", TAG + "<!-- a --!><script>x()</script> --><!doctype html>"),
    ("\u3000<!doctype html>", TAG + "\u3000<!doctype html>"),  # not HTML whitespace: text comes first
    ("", TAG),
])
def test_the_page_script_comes_before_anything_the_document_can_run(html: str, expected: str) -> None:
    assert inject_first_script(html, "S") == expected


def test_a_script_that_would_end_its_own_element_is_refused() -> None:
    with pytest.raises(ValueError):
        inject_first_script("<html>", "x = '</SCRIPT>'")


@pytest.mark.parametrize("raw", [
    "<!doctype html><p>é</p>".encode("utf-16-le"), "<!doctype html><p>é</p>".encode("utf-16-be"),
    "<!doctype html><p>é</p>".encode()])
def test_any_byte_order_mark_is_served_as_utf8_with_the_script_first(raw: bytes) -> None:
    bom = {b"<\x00": b"\xff\xfe", b"\x00<": b"\xfe\xff"}.get(raw[:2], b"\xef\xbb\xbf")
    body = play_page(bom + raw).body
    assert body.startswith(b"<!doctype html><script>") and body.endswith("<p>é</p>".encode())


def test_declared_shadow_roots_lose_their_attribute() -> None:
    body = play_page(b'<template ShadowRootMode="closed"><iframe></iframe></template>'
                     b'<template shadowroot=open></template>').body.decode()
    assert "shadowrootmode" not in body.lower().replace("data-refused-shadowroot", "")
    assert 'data-refused-shadowrootMode="closed"' in body
    assert "\u017fhadowroot" in play_page("\u017fhadowroot".encode()).body.decode()  # no ASCII match: no attribute


def test_inline_scripts_are_hashed_as_the_browser_reads_them() -> None:
    html = ('<script>a()</script><script src=x.js>never()</script><script type=module data-x=">">b()\r\n'
            '</SCRIPT ><script\tSRC="q"></script><script data-src="y">c()</script><script>a()</script>')
    assert inline_script_hashes(html) == [_sha("a()"), _sha("b()\n"), _sha("c()")]
    page = play_page(html.encode())
    assert page.script_hashes[0] == _sha(page.body.decode().split("<script>", 1)[1].split("</script>", 1)[0])
    assert page.script_hashes[1:] == [_sha("a()"), _sha("b()\n"), _sha("c()")]

"""Narrowing for redis-py replies.

Every client tier2 makes decodes replies (``decode_responses=True``, `tier2.store.run_store.resilient_client`), so
they are ``str``; redis-py types them ``bytes | str`` whatever the client's setting. These helpers narrow once, at
the store boundary (a ``bytes`` reply from a non-decoding client is decoded as UTF-8).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from redis.typing import StreamEntry, XReadResponse, ZSetRangeResponse

__all__ = ["members", "opt_text", "scored", "stream_entries", "text", "text_map", "texts", "xread_entries"]


def text(value: bytes | str) -> str:
    return value if isinstance(value, str) else value.decode()


def opt_text(value: bytes | str | None) -> str | None:
    return None if value is None else text(value)


def texts(values: Iterable[bytes | str]) -> list[str]:
    return [text(v) for v in values]


def text_map(values: Mapping[bytes | str, bytes | str]) -> dict[str, str]:
    return {text(k): text(v) for k, v in values.items()}


def stream_entries(entries: Iterable[StreamEntry] | None) -> list[tuple[str, dict[str, str]]]:
    """``(entry id, fields)`` of an XRANGE reply (an entry redis-py reports without id or fields is skipped)."""
    return [(text(eid), text_map(fields)) for eid, fields in entries or () if eid is not None and fields is not None]


def xread_entries(reply: XReadResponse) -> list[tuple[str, dict[str, str]]]:
    """The entries of the one stream an XREAD named (RESP2 reply: ``[[stream, entries]]``; [] when it timed out)."""
    if isinstance(reply, dict):
        raise TypeError("XREAD: a RESP3 map reply; tier2's clients speak RESP2")
    return stream_entries(reply[0][1]) if reply else []


def members(reply: ZSetRangeResponse) -> list[str]:
    """The members of a ZRANGE/ZREVRANGE reply asked without scores."""
    return [text(m) for m in reply if isinstance(m, bytes | str)]


def scored(reply: ZSetRangeResponse) -> list[tuple[str, float]]:
    """``(member, score)`` pairs of a ZRANGE/ZREVRANGE(BYSCORE) reply asked ``withscores``."""
    out: list[tuple[str, float]] = []
    for item in reply:
        if isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[0], bytes | str):
            out.append((text(item[0]), float(item[1])))
    return out

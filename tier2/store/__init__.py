"""Durable state in Redis: every key lives in `keys`; the embedded server lives in `embedded`."""

from tier2.store.keys import Keys

__all__ = ["Keys"]

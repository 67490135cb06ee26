"""Context budgets per agent: compression with a coverage boundary, pinned items, tool-output truncation.

See `tier2.context.middleware` (the layer), `tier2.context.summary` (the extractive summary and the pins),
`tier2.context.split` (where the conversation is cut) and `tier2.context.truncate` (long tool outputs).
"""

from tier2.context.middleware import ContextMiddleware, PinsProvider, context_record
from tier2.context.summary import Facts, Pins

__all__ = ["ContextMiddleware", "Facts", "Pins", "PinsProvider", "context_record"]

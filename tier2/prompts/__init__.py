"""Prompt and role texts live in this package as Markdown files; Python only names them."""

from __future__ import annotations

import functools
from importlib import resources

__all__ = ["load_prompt", "render_prompt"]


@functools.cache
def load_prompt(name: str) -> str:
    """The raw text of ``tier2/prompts/<name>.md``."""
    return resources.files(__name__).joinpath(f"{name}.md").read_text(encoding="utf-8")


def render_prompt(name: str, **values: object) -> str:
    """``load_prompt(name)`` with ``{placeholders}`` filled in (``str.format`` rules)."""
    return load_prompt(name).format(**values)

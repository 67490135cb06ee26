"""Tool outputs over a limit: cut to head + tail with a marker naming the file that holds the whole output.

The file goes under ``<project>/.tier2/artifacts/tool-output/`` (``.tier2`` is tier2's own directory: never
served, never part of the source snapshot, not writable by agents, readable with Read). Its name is the output's
hash — nothing a model sent ends up in the path — so a replayed tool call writes the same file again. Images:
no tier2 tool returns image blocks; a data block in an output is replaced by a note (a path travels, never
pixels), and screenshots stay files named in the text (RunGame reports them as paths).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from agentscope.message import TextBlock

from tier2.hostio import ProjectDir

__all__ = ["ARTIFACT_DIR", "FILE_CONTENT_TOOLS", "Truncated", "truncate_output", "truncate_read"]

#: tools whose output is a file's content: a model copies it into edits, so it is never cut in the middle and never
#: carries a marker inside the text (only after it); the file itself is the full artifact
FILE_CONTENT_TOOLS = frozenset({"Read"})

ARTIFACT_DIR = Path(".tier2") / "artifacts" / "tool-output"


class Truncated:
    """The outcome of `truncate_output`: the new content, and the artifact (None when nothing was cut)."""

    def __init__(self, content: list[Any], artifact: Path | None, chars: int, changed: bool = True) -> None:
        self.content, self.artifact, self.chars, self.changed = content, artifact, chars, changed


def _artifact(root: Path | None, text: str) -> Path | None:
    if root is None:
        return None
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    base = (root / ARTIFACT_DIR).resolve()
    if not base.is_relative_to(root.resolve()):  # a symlinked .tier2 pointing elsewhere: said so, not replaced
        raise ValueError(f"artifact directory {base} is outside the project {root}")
    pdir = ProjectDir(root)  # and the write itself never follows a link (tier2.hostio)
    rel = f"{ARTIFACT_DIR.as_posix()}/{digest}.txt"
    if not pdir.is_file(rel):
        pdir.write_text(rel, text)
    return pdir.path(rel)


def truncate_output(content: Any, limit: int, root: Path | None, tool: str) -> Truncated:
    """``content`` (a tool response's content: str or blocks) cut to ``limit`` characters of text."""
    blocks = [TextBlock(text=content)] if isinstance(content, str) else list(content or [])
    texts: list[str] = []
    images = 0
    for b in blocks:
        if getattr(b, "type", "") == "text":
            texts.append(b.text)
        elif getattr(b, "type", "") == "data":
            images += 1
    text = "\n".join(texts)
    if len(text) <= limit and not images:
        return Truncated(blocks, None, len(text), changed=False)
    kept: list[Any] = [b for b in blocks if getattr(b, "type", "") not in ("text", "data")]
    if len(text) <= limit:
        note = f"\n[{images} image/data block(s) of {tool} not sent to the model: screenshots travel as paths]"
        return Truncated([TextBlock(text=text + note), *kept], None, len(text))
    path = _artifact(root, text)
    where = (f"the full output ({len(text)} chars) is saved in {path} (Read it with offset/limit for a part)"
             if path is not None else f"the full output was {len(text)} chars")
    head_n = (limit * 2) // 3
    tail_n = max(0, limit - head_n)
    cut = len(text) - head_n - tail_n
    marker = f"\n[... {tool} output truncated: {cut} chars cut here; {where} ...]\n"
    body = text[:head_n] + marker + (text[-tail_n:] if tail_n else "")
    return Truncated([TextBlock(text=body), *kept], path, len(text))


def truncate_read(content: Any, limit: int) -> Truncated:
    """A Read's output cut to its first ``limit`` characters at a line boundary, with a note after the last line
    telling where to continue (nothing is inserted inside the file's text)."""
    blocks = [TextBlock(text=content)] if isinstance(content, str) else list(content or [])
    text = "\n".join(b.text for b in blocks if getattr(b, "type", "") == "text")
    if len(text) <= limit:
        return Truncated(blocks, None, len(text), changed=False)
    head = text[:limit]
    head = head[: head.rfind("\n") + 1] if "\n" in head else head
    shown = head.count("\n")
    last = _line_number(head)
    where = f"offset={last + 1}" if last is not None else f"an offset past the {shown} lines shown"
    note = (f"\n[Read output cut after {shown} lines ({len(text) - len(head)} more chars not shown): Read the same "
            f"file again with {where} for the rest]")
    kept = [b for b in blocks if getattr(b, "type", "") not in ("text", "data")]
    return Truncated([TextBlock(text=head), TextBlock(text=note), *kept], None, len(text))


def _line_number(head: str) -> int | None:
    """The file line number of the last line shown (Read numbers its lines: ``  12\tcode``)."""
    lines = head.rstrip("\n").rsplit("\n", 1)
    number = lines[-1].split("\t", 1)[0].strip()
    return int(number) if number.isdigit() else None

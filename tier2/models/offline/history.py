"""Read a conversation the way the offline policy needs it: brief, project dir, and tool calls with results."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from agentscope.message import HintBlock, Msg, TextBlock, ToolCallBlock, ToolResultBlock

__all__ = ["ToolStep", "Conversation", "read_conversation", "strip_line_numbers"]

_PROJECT_RE = re.compile(r"game project at (\S+?) \(the project directory\)")
_BRIEF_RE = re.compile(r"<brief>\s*(.*?)\s*</brief>", re.S)
_PACK_RE = re.compile(r"\bpack \(([A-Za-z0-9_.@-]+)\)")
_GENRE_RE = re.compile(r"^genre template: ([a-z][a-z0-9_]*)", re.M)
_NUMBERED = re.compile(r"^\s*\d+\t", re.M)
_SUMMARY_TOOLS = re.compile(r"<context-summary [^>]*>.*?^Tools run: (.*)$", re.S | re.M)
_TOOL_COUNT = re.compile(r"([A-Za-z]+)×(\d+)")


@dataclass
class ToolStep:
    call_id: str
    name: str
    args: dict[str, Any]
    result: str | None = None
    state: str | None = None

    @property
    def ok(self) -> bool:
        return self.state == "success"


@dataclass
class Conversation:
    system: str
    brief: str
    project: str | None
    steps: list[ToolStep]
    last_user: str
    chars: int
    #: the pack (``id@version``) and genre template the run request names (None: not named)
    pack: str | None = None
    genre: str | None = None
    #: every user text of the current request, in order (the run request, then fix rounds)
    user_texts: list[str] = field(default_factory=list)
    #: tool name -> calls made before the context was compressed (the summary's "Tools run:" line)
    earlier: dict[str, int] = field(default_factory=dict)

    def last(self, name: str) -> ToolStep | None:
        return next((s for s in reversed(self.steps) if s.name == name), None)

    def index_of_last(self, name: str) -> int:
        return max((i for i, s in enumerate(self.steps) if s.name == name), default=-1)

    def writes_of(self, path: str) -> int:
        return sum(1 for s in self.steps if s.name == "Write" and s.args.get("file_path") == path)

    def read_results(self) -> dict[str, str]:
        """file_path -> content (line numbers stripped) of the latest successful Read."""
        out: dict[str, str] = {}
        for s in self.steps:
            if s.name == "Read" and s.ok and s.result is not None:
                out[s.args.get("file_path", "")] = strip_line_numbers(s.result)
        return out


def strip_line_numbers(text: str) -> str:
    body = _NUMBERED.sub("", text)
    return body if body.endswith("\n") else body + "\n"


def _text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return "".join(b.text for b in output if isinstance(b, TextBlock))


def read_conversation(messages: list[Msg]) -> Conversation:
    system = messages[0].get_text_content() or "" if messages and messages[0].role == "system" else ""
    steps: dict[str, ToolStep] = {}
    order: list[str] = []
    user_texts: list[str] = []
    request_texts: list[str] = []
    chars = 0
    for msg in messages:
        for block in msg.get_content_blocks():
            if isinstance(block, TextBlock):
                chars += len(block.text)
                if msg.role == "user":
                    user_texts.append(block.text)
                    if _BRIEF_RE.search(block.text):  # a new request (a follow-up in a thread): a fresh plan
                        order.clear()
                        request_texts.clear()
                    request_texts.append(block.text)
            elif isinstance(block, HintBlock):
                chars += len(str(block.hint))
            elif isinstance(block, ToolCallBlock):
                try:
                    args = json.loads(block.input or "{}")
                except json.JSONDecodeError:
                    args = {}
                steps[block.id] = ToolStep(block.id, block.name, args if isinstance(args, dict) else {})
                order.append(block.id)
                chars += len(block.input or "")
            elif isinstance(block, ToolResultBlock):
                text = _text(block.output)
                chars += len(text)
                step = steps.get(block.id)
                if step is not None:
                    step.result, step.state = text, str(getattr(block.state, "value", block.state))
    briefs = [m for t in user_texts for m in _BRIEF_RE.finditer(t)]
    brief_match = briefs[-1] if briefs else None
    full_user = "\n".join(user_texts)
    project_match = _PROJECT_RE.search(system)
    # the latest request that names them (a follow-up's request names the genre the project holds now)
    pack_match = next((m for t in reversed(user_texts) if (m := _PACK_RE.search(t))), None)
    genre_match = next((m for t in reversed(user_texts) if (m := _GENRE_RE.search(t))), None)
    return Conversation(
        system=system,
        brief=(brief_match.group(1) if brief_match else full_user).strip(),
        project=project_match.group(1) if project_match else None,
        steps=[steps[i] for i in order],
        last_user=user_texts[-1] if user_texts else "",
        chars=chars + len(system),
        pack=pack_match.group(1) if pack_match else None,
        genre=genre_match.group(1) if genre_match else None,
        user_texts=list(request_texts),
        earlier=_earlier(user_texts),
    )


def _earlier(texts: list[str]) -> dict[str, int]:
    """The tool counts of the newest compression summary (what ran before the kept conversation)."""
    for text in reversed(texts):
        m = _SUMMARY_TOOLS.search(text)
        if m:
            return {name: int(n) for name, n in _TOOL_COUNT.findall(m.group(1))}
    return {}

"""`ContextMiddleware`: the agent's context budget, on AgentScope's own hooks (slot ``context``,
`tier2.middleware.order`).

* ``on_compress_context`` (before every reasoning step): when the prompt estimate (the model's ``count_tokens``:
  system prompt and tool schemas as measured at the last model call + summary + conversation) reaches the role's
  trigger, the older blocks are folded into an extractive summary headed by the pinned items and only the most
  recent blocks stay. It never calls ``next_handler``: AgentScope's own compression (a model call) never runs.
* ``on_acting``: a tool output over ``tool_output_chars`` is cut with a marker naming the artifact file holding all
  of it; Write/Edit targets are remembered (pinned "files written"), and so is the last failing check.
* ``on_model_call``: measures the prompt actually sent (fixed overhead for the estimate, the largest prompt so far).

Everything it keeps lives in ``AgentState.middle_context[CONTEXT_STATE_KEY]`` — the compression record included
(what it covers, the facts, the pins, a hash of the summary) — so the checkpoint layer's save right after the
compression carries it and a resumed agent holds the summary plus only the later messages. The record is folded
forward: a second compression adds the newly covered blocks to the previous facts; covered history is never read
again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from pathlib import Path
from typing import Any

from agentscope.message import Msg, UserMsg
from agentscope.middleware import MiddlewareBase
from agentscope.tool import ToolResponse

from tier2.context.split import Unit, choose_cut, flatten, rebuild
from tier2.context.summary import MAX_TASK_CHARS, Facts, Pins, fold, render
from tier2.context.truncate import FILE_CONTENT_TOOLS, truncate_output, truncate_read
from tier2.events import ContextCompressed, Tier2Event
from tier2.settings.context import CONTEXT_STATE_KEY, AgentContextPolicy
from tier2.store.checkpoints import block_ref

__all__ = ["ContextMiddleware", "PinsProvider", "context_record"]

log = logging.getLogger(__name__)

PinsProvider = Callable[[], Pins]
Emit = Callable[[Tier2Event], Awaitable[None]]
_WRITES = frozenset({"Write", "Edit", "MultiEdit"})
_CHECKS = frozenset({"Build", "RunGame"})
MAX_LOG = 64


def context_record(state: Any) -> dict[str, Any]:
    """The context layer's slot of an AgentState (or its JSON dict); empty when the layer never ran."""
    middle = state.get("middle_context", {}) if isinstance(state, dict) else state.middle_context
    slot = (middle or {}).get(CONTEXT_STATE_KEY)
    return slot if isinstance(slot, dict) else {}


class ContextMiddleware(MiddlewareBase):
    def __init__(self, policy: AgentContextPolicy, *, role: str, run_id: str = "", project_root: Path | None = None,
                 pins: PinsProvider | None = None, emit: Emit | None = None) -> None:
        self.policy, self.role, self.run_id, self.root = policy, role, run_id, project_root
        #: set by the run once it knows them (goal, requirements, last failing gate): `tier2.runs.loop.addons.pins`
        self.pins, self.emit = pins, emit

    # ------------------------------------------------------------------ state

    @staticmethod
    def _slot(agent: Any) -> dict[str, Any]:
        slot: dict[str, Any] = agent.state.middle_context.setdefault(CONTEXT_STATE_KEY, {})
        if not isinstance(slot, dict):
            slot = agent.state.middle_context[CONTEXT_STATE_KEY] = {}
        return slot

    def budget(self, agent: Any) -> int:
        """The role's budget, never more than the model's own window (``context_size``)."""
        size = getattr(agent.model, "context_size", None)
        if isinstance(size, int) and 0 < size < self.policy.budget_tokens:
            return size
        return self.policy.budget_tokens

    async def estimate(self, agent: Any) -> int:
        """The prompt's size in the model's own ``count_tokens``: measured overhead + summary + conversation."""
        st = self._slot(agent)
        msgs: list[Msg] = []
        if agent.state.summary:
            msgs.append(UserMsg(name="user", content=agent.state.summary))
        msgs.extend(agent.state.context)
        return int(st.get("overhead", 0)) + int(await agent.model.count_tokens(msgs, None))

    # ------------------------------------------------------------------ hooks

    async def on_model_call(self, agent: Any, input_kwargs: dict[str, Any],
                            next_handler: Callable[..., Awaitable[Any]]) -> Any:
        messages = input_kwargs.get("messages") or []
        tools = input_kwargs.get("tools")
        model = input_kwargs.get("current_model") or agent.model
        st = self._slot(agent)
        if messages and getattr(messages[0], "role", "") == "system":
            st["overhead"] = int(await model.count_tokens(messages[:1], tools))
        sent = int(await model.count_tokens(list(messages), tools))
        st["last_prompt_tokens"] = sent
        st["max_prompt_tokens"] = max(sent, int(st.get("max_prompt_tokens", 0)))
        st["calls"] = int(st.get("calls", 0)) + 1
        return await next_handler(**input_kwargs)

    async def on_compress_context(self, agent: Any, input_kwargs: dict[str, Any],
                                  next_handler: Callable[..., Awaitable[None]]) -> None:
        # next_handler is AgentScope's own compression (a model call on its own thresholds): never reached
        before = await self.estimate(agent)
        if before < int(self.policy.trigger_ratio * self.budget(agent)) or not agent.state.context:
            return
        await self.compress(agent, before)

    async def on_acting(self, agent: Any, input_kwargs: dict[str, Any],
                        next_handler: Callable[..., AsyncGenerator[Any, None]]) -> AsyncGenerator[Any, None]:
        call = input_kwargs["tool_call"]
        async for chunk in next_handler(**input_kwargs):
            if isinstance(chunk, ToolResponse):
                chunk = self._after_tool(agent, call, chunk)
            yield chunk

    # ------------------------------------------------------------------ work

    def _after_tool(self, agent: Any, call: Any, final: ToolResponse) -> ToolResponse:
        st = self._slot(agent)
        state = str(getattr(final.state, "value", final.state))
        if call.name in _WRITES and state == "success":
            path = _file_path(call.input)
            if path is not None:
                files = st.setdefault("files_written", [])
                shown = self._shown(path)
                if shown not in files:
                    files.append(shown)
        try:
            cut = truncate_read(final.content, self.policy.read_output_chars) if call.name in FILE_CONTENT_TOOLS \
                else truncate_output(final.content, self.policy.tool_output_chars, self.root, call.name)
        except (OSError, ValueError) as exc:  # the artifact could not be written: cut without a reference
            log.warning("context: artifact for %s not written: %s", call.name, exc)
            cut = truncate_output(final.content, self.policy.tool_output_chars, None, call.name)
        if call.name in _CHECKS:
            text = "\n".join(getattr(b, "text", "") for b in final.content if getattr(b, "type", "") == "text")
            st["last_failure"] = "" if state == "success" else " ".join(f"{call.name}: {text}".split())[:600]
        if not cut.changed:
            return final
        if cut.artifact is not None:
            st["artifacts"] = int(st.get("artifacts", 0)) + 1
        meta = {**(final.metadata or {}), "truncated_chars": cut.chars,
                **({"artifact": str(cut.artifact)} if cut.artifact is not None else {})}
        return final.model_copy(update={"content": cut.content, "metadata": meta})

    def _shown(self, path: str) -> str:
        if self.root is not None:
            try:
                return str(Path(path).resolve().relative_to(self.root.resolve()))
            except ValueError:
                pass
        return path

    def _pins(self, st: dict[str, Any], first_user: str) -> Pins:
        pins = Pins()
        if self.pins is not None:
            try:
                pins = self.pins()
            except Exception as exc:  # noqa: BLE001 - a provider bug must not stop the agent; pins fall back
                log.warning("context: pins provider failed: %s", exc)
        if not pins.goal:
            pins.goal = st.get("goal") or " ".join(first_user.split())[:1000]
        st["goal"] = pins.goal
        if not pins.task:  # the provider did not say: the first message this compression covers, kept whole
            pins.task = st.get("task") or first_user[:MAX_TASK_CHARS]
        st["task"] = pins.task
        if not pins.last_failure:
            pins.last_failure = st.get("last_failure", "")
        pins.files_written = list(dict.fromkeys([*pins.files_written, *st.get("files_written", [])]))
        return pins

    async def compress(self, agent: Any, before: int) -> bool:
        """Fold the older blocks into the summary; False when nothing could be covered."""
        st = self._slot(agent)
        context: list[Msg] = list(agent.state.context)
        units = flatten(context)

        async def tokens(u: Unit) -> int:
            return int(await agent.model.count_tokens([Msg(name="x", role="assistant", content=[u.value])], None))

        budget = self.budget(agent)
        cut = await choose_cut(units, int(self.policy.keep_recent_ratio * budget), tokens)
        if cut is None:
            return False
        covered = units[:cut.position]
        first_user = next((context[u.msg].get_text_content() or "" for u in covered if context[u.msg].role == "user"),
                          "")
        facts = fold(Facts.from_json(st.get("facts")), [(context[u.msg].role, u.value) for u in covered])
        pins = self._pins(st, first_user)
        last = covered[-1]
        last_msg = context[last.msg]
        through = f"{last_msg.id}#{last.block}"
        seq = int(st.get("seq", 0)) + 1
        summary = render(pins, facts, through, seq, max_chars=int(self.policy.summary_ratio * budget) * 4)
        agent.state.summary = summary
        agent.state.context = rebuild(context, units, cut.position)
        after = await self.estimate(agent)
        ref = block_ref(last.value.model_dump(mode="json") if hasattr(last.value, "model_dump") else last.value)
        covered_record = {"msg_id": last_msg.id, "block": last.block, "ref": ref, "index": facts.blocks - 1,
                          "first_kept": _first_kept(agent.state.context)}
        st.update(seq=seq, covered=covered_record, facts=facts.as_json(), pins=pins.as_json(),
                  summary_sha256=hashlib.sha256(summary.encode()).hexdigest(), tokens_before=before,
                  tokens_after=after)
        log_ = st.setdefault("log", [])
        log_.append({"seq": seq, "through": through, "index": facts.blocks - 1, "blocks": cut.position,
                     "before": before, "after": after})
        del log_[:-MAX_LOG]
        if self.emit is not None:
            await self.emit(ContextCompressed(
                run_id=self.run_id, agent=self.role, seq=seq, covered_through=through, covered_blocks=facts.blocks,
                tokens_before=before, tokens_after=after, budget_tokens=budget,
                pinned=pins.count()))
        return True


def _file_path(raw: str) -> str | None:
    try:
        args = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return None
    value = args.get("file_path") if isinstance(args, dict) else None
    return value if isinstance(value, str) and value else None


def _short_text(msg: Msg) -> str:
    text = msg.get_text_content() or ""
    return " ".join(text.split())[:1000]


def _first_kept(context: list[Msg]) -> str | None:
    if not context:
        return None
    first = context[0]
    blocks = first.get_content_blocks()
    return f"{first.id}:{block_ref(blocks[0].model_dump(mode='json'))}" if blocks else first.id

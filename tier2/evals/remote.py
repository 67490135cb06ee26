"""The remote backend: the same steps through a running service's REST API (`tier2.client.api.ServiceClient`, the
key from ``TIER2_API_KEY`` like ``tier2 submit``): ``POST /v1/runs`` with an ``Idempotency-Key`` per step, the run
polled until it ends, its delivery and events read back, the screenshot fetched as an artifact. Paths in the
service's answers are masked (relative to the project): ``project_dir`` stays None."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tier2.client.api import ServiceClient, ServiceError
from tier2.evals.rows import RunFacts
from tier2.evals.runner import Rejected

__all__ = ["RemoteBackend"]

_POLL_S = 2.0
_TERMINAL = ("delivered", "failed", "stopped")


class RemoteBackend:
    def __init__(self, api: ServiceClient, budget: dict[str, Any], pack: str | None = None) -> None:
        self.api, self.budget, self.where = api, budget, api.url
        self.pack = pack  # the suite's (None: the service's default)

    async def submit(self, text: str, model: str | None, key: str, thread_id: str | None) -> tuple[str, str]:
        body: dict[str, Any] = {"brief": text, **({"model": model} if model else {}),
                                **({"thread_id": thread_id} if thread_id else {}),
                                **({"budget": self.budget} if self.budget else {}),
                                **({"pack": self.pack} if self.pack else {})}
        while True:
            try:
                accepted = await asyncio.to_thread(self.api.submit, body, key)
                return str(accepted["run_id"]), str(accepted["thread_id"])
            except ServiceError as exc:
                busy = exc.status == 409 and "one writer per project" in exc.message
                about_brief = "brief" in exc.message.lower() or any("brief" in str(f.get("loc"))
                                                                    for f in exc.fields or [])
                if exc.status in (400, 413, 422) and about_brief:  # the brief refused: an honest refusal at the door
                    raise Rejected(str(exc)) from exc
                if exc.status != 429 and not busy:
                    raise
                await asyncio.sleep(min(float(exc.retry_after or 2), 30.0))

    async def wait(self, run_id: str) -> RunFacts:
        while True:
            run = await asyncio.to_thread(self.api.get_run, run_id)
            if run.get("status") in _TERMINAL:
                break
            await asyncio.sleep(_POLL_S)
        try:
            delivery = await asyncio.to_thread(self.api.delivery, run_id)
        except ServiceError:
            delivery = {}
        fixes = await asyncio.to_thread(self._fix_rounds, run_id)
        return RunFacts(run_id=run_id, status=str(run["status"]), stop_reason=str(run.get("stop_reason") or ""),
                        delivery=delivery, fix_rounds=fixes)

    def _fix_rounds(self, run_id: str) -> int:
        n = 0
        for _, frame in self.api.events(run_id):
            if frame.event != "phase_changed":
                continue
            try:
                data = json.loads(frame.data)
            except ValueError:
                continue
            if data.get("phase") == "implement" and str(data.get("detail", "")).startswith("fix round"):
                n += 1
        return n

    async def screenshot(self, facts: RunFacts) -> bytes | None:
        url = facts.delivery.get("screenshot_url")
        if not isinstance(url, str) or not url.startswith("/v1/"):
            return None
        try:
            return await asyncio.to_thread(self.api.artifact, url)
        except ServiceError:
            return None

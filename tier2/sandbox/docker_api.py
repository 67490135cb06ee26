"""The few Docker Engine API calls the worker-start sweep needs, over the daemon's unix socket: no process started
(the CLI is for everything else; a remote ``tcp://`` daemon is still reached through it).

`tier2.runs.process.handover.sweep_run_containers` lists this store's run containers and removes the orphans; a
socket that is absent or does not answer means "no daemon here": nothing to sweep.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from tier2.errors import SetupError
from tier2.sandbox.docker import ATTEMPT_LABEL, RUN_LABEL, STORE_LABEL, RunContainer

__all__ = ["DockerSocket"]


class DockerSocket:
    """The Docker Engine API at ``path`` (a unix socket)."""

    def __init__(self, path: Path, timeout_s: float = 10.0) -> None:
        self.path, self.timeout_s = path, timeout_s

    def _client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.HTTPTransport(uds=str(self.path)), base_url="http://docker",
                            timeout=self.timeout_s)

    def answers(self) -> bool:
        if not self.path.exists():
            return False
        try:
            with self._client() as c:
                return c.get("/_ping").status_code == 200
        except httpx.HTTPError:
            return False

    def run_containers(self, store: str | None = None) -> list[RunContainer]:
        """Every container (running or not) labelled with a run attempt — of ``store`` only, when given."""
        labels = [RUN_LABEL] + ([f"{STORE_LABEL}={store}"] if store is not None else [])
        try:
            with self._client() as c:
                reply = c.get("/containers/json", params={"all": "1", "filters": json.dumps({"label": labels})})
        except httpx.HTTPError as exc:
            raise SetupError(f"the docker daemon at {self.path} did not answer: {exc}") from exc
        if reply.status_code != 200:
            raise SetupError(f"docker container list failed ({reply.status_code}): {reply.text[-300:]}")
        out: list[RunContainer] = []
        for item in reply.json():
            found = item.get("Labels") or {}
            attempt = str(found.get(ATTEMPT_LABEL, ""))
            if isinstance(item.get("Id"), str) and found.get(RUN_LABEL) and attempt.isdigit():
                out.append(RunContainer(item["Id"], str(found[RUN_LABEL]), int(attempt)))
        return out

    def remove(self, ids: list[str]) -> None:
        """Kill and remove each container (``force``): everything in it stops, then it is gone."""
        if not ids:
            return
        try:
            with self._client() as c:
                for cid in ids:
                    reply = c.delete(f"/containers/{cid}", params={"force": "true"}, timeout=120)
                    if reply.status_code not in (204, 404):  # 404: gone already
                        raise SetupError(f"removing container {cid[:12]} failed ({reply.status_code}): "
                                         f"{reply.text[-300:]}")
        except httpx.HTTPError as exc:
            raise SetupError(f"the docker daemon at {self.path} did not answer: {exc}") from exc

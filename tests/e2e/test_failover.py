"""Accept = durable under failover, counted: ``tier2 serve`` on a Sentinel-managed primary with two replicas and
``[redis] min_replicas = 1``; the primary is SIGKILLed in the middle of a burst of submissions (each with its own
Idempotency-Key, retried on 503 or a dropped connection). Every run that got a 202 is in the store after the
failover (0 lost) and the store holds no run that no 202 named (0 duplicated)."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import httpx
import pytest

from tier2.settings.tenants import LOCAL_TENANT
from tier2.store.connect import connect_sync
from tier2.store.keys import Keys
from tier2.testing.cluster import LocalCluster, wait_until
from tier2.testing.redis_topology import SentinelSet

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.redis]

SUBMISSIONS = 24
BRIEF = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


def _submit(c: LocalCluster, key: str, out: dict[str, str], statuses: list[int]) -> None:
    """POST until a 202 (the same key every time: a retry is never a second run)."""
    for _ in range(200):
        try:
            r = httpx.post(f"{c.base}/v1/runs", json={"brief": BRIEF}, headers={"Idempotency-Key": key}, timeout=60)
        except httpx.HTTPError:
            statuses.append(0)
            continue
        statuses.append(r.status_code)
        if r.status_code == 202:
            out[key] = str(r.json()["run_id"])
            return
        assert r.status_code == 503, r.text
        threading.Event().wait(0.2)  # Retry-After (1 s) shortened: the drill wants submissions during the failover
    raise AssertionError(f"no 202 for {key}: {statuses[-5:]} {c.log('serve.log')[-1500:]}")


def test_a_primary_killed_during_a_burst_loses_no_accepted_run_and_duplicates_none(tmp_path: Path) -> None:
    with SentinelSet(tmp_path / "redis", replicas=2) as sentinels, \
            LocalCluster(tmp_path / "tier2", redis_url=sentinels.url) as c:
        (c.config / "security" / "zz-replicas.toml").write_text("[redis]\nmin_replicas = 1\nreplica_timeout_ms = 500\n")
        c.start_service(workers=0)  # acceptance only: nothing takes the runs
        accepted: dict[str, str] = {}
        statuses: list[int] = []
        keys = [uuid.uuid4().hex for _ in range(SUBMISSIONS)]
        before_kill = SUBMISSIONS // 3

        def burst() -> None:
            for key in keys:
                _submit(c, key, accepted, statuses)

        t = threading.Thread(target=burst)
        t.start()
        wait_until(lambda: len(accepted) >= before_kill or not t.is_alive(), 120, "the first submissions")
        old = sentinels.kill_primary()
        at_kill = len(accepted)
        sentinels.wait_failover(old)
        t.join(600)
        assert not t.is_alive()
        assert at_kill < SUBMISSIONS, "the primary died after the burst, not during it"
        assert len(accepted) == SUBMISSIONS and len(set(accepted.values())) == SUBMISSIONS

        def stored() -> set[str] | None:
            r = connect_sync(sentinels.url, socket_timeout=2)
            try:
                return set(r.zrange(Keys().tenant_runs(LOCAL_TENANT), 0, -1))
            except Exception:  # noqa: BLE001 - the Sentinels may still be settling: ask again
                return None
            finally:
                r.close()
        in_store = wait_until(stored, 60, "the promoted primary answering")
        lost = set(accepted.values()) - in_store
        duplicated = in_store - set(accepted.values())
        assert (len(lost), len(duplicated)) == (0, 0), (lost, duplicated, statuses)
        print(f"failover drill: {at_kill} accepted before the kill, answers {sorted(set(statuses))}, "
              f"{statuses.count(503)} x 503, {statuses.count(0)} dropped")
        for run_id in accepted.values():  # and each is whole: its record is served
            assert httpx.get(f"{c.base}/v1/runs/{run_id}", timeout=30).status_code == 200

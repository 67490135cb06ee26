"""The embedded store's take-over, measured: how long the clients of a workspaces root wait when the store's
owner process is killed, and that no acknowledged write is lost.

    .venv/bin/python bench/one_store.py [--rounds 10] [--json]

Each round: a real process owns the root's store (`tier2.store.embedded.EmbeddedRedis`), this process uses it and
writes one key after another through a retrying client; the owner is SIGKILLed; this process takes the store over
on the same port and password. Reported: the outage (the longest wait of one write across the kill) per round,
median and max, and the writes acknowledged vs. found afterwards (lost must be 0; exit 1 otherwise).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis  # noqa: E402
from redis.backoff import ExponentialBackoff  # noqa: E402
from redis.retry import Retry  # noqa: E402

from tier2.settings.loader import REPO_ROOT  # noqa: E402
from tier2.store.embedded import EmbeddedRedis  # noqa: E402

OWNER = """
import sys, time
from pathlib import Path
from tier2.store.embedded import EmbeddedRedis
EmbeddedRedis(Path(sys.argv[1])).start()
print("owner", flush=True)
time.sleep(3600)
"""


def _round(root: Path, n: int) -> tuple[float, int, int]:
    owner = subprocess.Popen([sys.executable, "-c", OWNER, str(root)], cwd=REPO_ROOT, stdout=subprocess.PIPE,
                             text=True, start_new_session=True)
    assert owner.stdout is not None
    assert owner.stdout.readline().strip() == "owner"
    with EmbeddedRedis(root) as user:
        assert user.role == "user"
        c = redis.Redis.from_url(user.url, socket_timeout=10, retry=Retry(ExponentialBackoff(cap=0.2, base=0.01), 200),
                                 retry_on_error=[redis.ConnectionError, redis.TimeoutError, OSError])
        acked, longest = 0, 0.0
        for i in range(400):
            if i == 200:
                os.kill(owner.pid, signal.SIGKILL)
                owner.wait()
            t = time.perf_counter()
            c.set(f"r{n}:{i}", "accepted")
            longest = max(longest, time.perf_counter() - t)
            acked += 1
        found = sum(1 for i in range(400) if c.get(f"r{n}:{i}") == b"accepted")
        c.close()
        assert user.role == "owner"
    owner.stdout.close()
    return longest, acked, found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tier2-one-store-") as tmp:
        rows = [_round(Path(tmp), n) for n in range(args.rounds)]
    outages = [r[0] for r in rows]
    out = {"rounds": args.rounds, "outage_s_median": round(statistics.median(outages), 3),
           "outage_s_max": round(max(outages), 3), "acked": sum(r[1] for r in rows),
           "found": sum(r[2] for r in rows)}
    out["lost"] = out["acked"] - out["found"]
    print(json.dumps(out) if args.json else "\n".join(f"{k}: {v}" for k, v in out.items()))
    return 0 if out["lost"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

"""Fuzz the HTTP API with schemathesis (a bigger budget than the test suite) and print the counts.

    .venv/bin/python bench/fuzz.py [--examples 200] [--no-negative]

Starts a private redis-server and the real service in-process with an API key and no workers (runs the fuzzer
creates stay queued), fuzzes every operation of /openapi.json and exits 1 if any request got a 5xx.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tier2.app import build_app  # noqa: E402
from tier2.settings.loader import Settings  # noqa: E402
from tier2.store.embedded import EmbeddedRedis  # noqa: E402
from tier2.testing.fuzz import fuzz, serve_in_thread  # noqa: E402

KEY = "bench-fuzz-key-0001"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=200, help="max examples per operation and generation mode")
    ap.add_argument("--no-negative", action="store_true", help="only schema-valid requests")
    args = ap.parse_args()
    os.environ["TIER2_API_KEYS"] = f"bench:{KEY}"
    with tempfile.TemporaryDirectory(prefix="tier2-fuzz-") as tmp:
        redis = EmbeddedRedis(Path(tmp) / "redis")
        redis.start()
        try:
            settings = Settings(workspaces=Path(tmp) / "ws", redis_url=redis.url, key_prefix="fuzz")
            with serve_in_thread(build_app(settings, redis.url, workers=0)) as base:
                report = fuzz(base, {"Authorization": f"Bearer {KEY}"}, max_examples=args.examples,
                              negative=not args.no_negative)
        finally:
            redis.stop()
    print(report.summary())
    for name, count in sorted(report.by_operation.items()):
        print(f"  {count:6d}  {name}")
    for failure in report.server_errors[:20]:
        print(json.dumps(failure, ensure_ascii=False))
    return 1 if report.server_errors else 0


if __name__ == "__main__":
    sys.exit(main())

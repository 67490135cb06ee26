"""Benchmark: engine-doc retrieval on API questions written from real Phaser engine errors.

Usage: .venv/bin/python bench/docs_retrieval.py [--questions tests/fixtures/docs_questions.json] [--top-k 3] [--json]

Builds the pack's docs index in a fresh cache directory (cold build time), loads it again from that cache (a new
index object from the JSON file), then asks every question and prints top-1 / top-k hits, the mean reciprocal rank
and every miss with what came back. Deterministic: the same files give the same figures; times are indicative.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tier2.packs import load_pack  # noqa: E402
from tier2.packs.retrieval import index as index_mod  # noqa: E402
from tier2.packs.retrieval.evaluate import evaluate  # noqa: E402
from tier2.settings.loader import Settings  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", default=str(ROOT / "tests/fixtures/docs_questions.json"))
    ap.add_argument("--top-k", type=int, default=3)
    ap.add_argument("--pack", default="phaser")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    settings = Settings()
    pack = load_pack(settings.packs_dir, args.pack, settings.skills_dir)
    questions = json.loads(Path(args.questions).read_text())["questions"]
    with tempfile.TemporaryDirectory(prefix="tier2-docs-bench-") as tmp:
        started = time.perf_counter()
        index = index_mod.load_docs_index(pack, Path(tmp))
        cold_s = time.perf_counter() - started
        index_mod._MEMO.clear()  # the next load reads the cache file, as a new process would
        started = time.perf_counter()
        index = index_mod.load_docs_index(pack, Path(tmp))
        warm_s = time.perf_counter() - started
        assert index.meta["cache"] == "hit"
    per_query = []
    for q in questions:
        started = time.perf_counter()
        index.search(q["question"], args.top_k)
        per_query.append((time.perf_counter() - started) * 1000)
    scores = evaluate(index, questions, args.top_k)
    result = {"pack": index.meta["pack"], "engine": f"{index.meta['engine']}@{index.meta['engine_version']}",
              "types_sha256": index.meta["types_sha256"], "sections": index.meta["sections"],
              "build_s": round(cold_s, 2), "cached_load_s": round(warm_s, 2),
              "query_ms_median": round(statistics.median(per_query), 1), **scores.to_json()}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{result['pack']} {result['engine']} (types sha256 {result['types_sha256'][:12]}): "
          f"{result['sections']} sections; build {result['build_s']} s, cached load {result['cached_load_s']} s, "
          f"query median {result['query_ms_median']} ms")
    print(f"{scores.total} questions: top-1 {scores.top1}/{scores.total}, top-{args.top_k} "
          f"{scores.topk}/{scores.total}, MRR {scores.mrr:.3f}")
    for g in scores.graded:
        mark = f"#{g.rank}" if g.rank else "MISS"
        print(f"  {mark:>4}  {g.id:<28} {g.question[:70]}")
        if g.rank is None:
            print(f"        expected one of {g.expected}\n        got {g.got}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

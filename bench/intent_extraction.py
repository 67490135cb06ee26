"""Benchmark: the offline brief reader (`tier2.design.reader`) on a labelled set of briefs — genre and content.

Usage: .venv/bin/python bench/intent_extraction.py [--briefs bench/intent/briefs.jsonl] [--slice all|dev|held_out]
       [--json] [--misses]

Each line of the set: ``{"id", "brief", "genre" (a pack genre id, or null: not buildable / not readable),
"requirements": [{"kind", "term"}], "held_out"}``. The held-out slice was written and labelled after the reader
was tuned on the rest, and is reported separately.

Definitions:

* **requirement match** — a predicted content item matches a label when their ``kind`` is equal and the label's
  term equals the item's term, or is one of the words of the item's name (English: compared as lemmas, so "bats"
  matches "bat"; Chinese: the term is a substring of the name). Each label and each item matches at most once
  (greedy, in brief order).
* **precision** — matched items / predicted items; **recall** — matched labels / labels; both summed over the
  readable briefs of the slice (micro average). A brief the reader cannot read (or whose genre is null) still
  counts its predicted items against precision.
* **genre accuracy** — briefs whose predicted genre (None included) equals the label.
* **default-genre deliveries** — briefs read as the pack's default genre that are labelled otherwise (null
  included): what the old fallback delivered. A brief the reader cannot place gets ``scope.buildable: false`` and
  no genre, so this must be 0.
* **baseline** — the same figures for what the offline leader did before the reader: the keyword classifier's
  genre, else the pack's default genre (a default-genre delivery: a keyword-free brief built as the default when
  it asked for something else).
* **keyword-free** — briefs in which the keyword classifier (`tier2.design.classify_brief`, the genres'
  ``brief_words``) finds no genre: the share of the set the reader must read from what the brief describes.

Targets (issue #23): precision and recall ≥ 0.85, genre ≥ 95 %, 0 default-genre deliveries. Deterministic: the same
files give the same figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tier2.design import classify_brief  # noqa: E402
from tier2.design.reader import ContentItem, read_brief  # noqa: E402
from tier2.lexis import en_tokens, lemma  # noqa: E402
from tier2.packs import Pack, load_pack  # noqa: E402
from tier2.settings.loader import Settings  # noqa: E402

DEFAULT_SET = ROOT / "bench" / "intent" / "briefs.jsonl"


def load_set(path: Path = DEFAULT_SET) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _matches(label: dict[str, str], item: ContentItem) -> bool:
    if label["kind"] != item.kind:
        return False
    term = label["term"]
    if term == item.term:
        return True
    if term.isascii():
        words = {lemma(t.text) for t in en_tokens(item.name)} | {t.text.lower() for t in en_tokens(item.name)}
        parts = [lemma(w) for w in term.split()]
        return all(p in words for p in parts) or term.lower() in item.name.lower()
    return term in item.name or term in item.term


def score_brief(case: dict[str, Any], pack: Pack) -> dict[str, Any]:
    reading = read_brief(case["brief"], pack.genre_cues(), pack.genres)
    labels = list(case["requirements"])
    free = list(range(len(labels)))
    matched_items = 0
    misses_pred = []
    for item in reading.items:
        hit = next((i for i in free if _matches(labels[i], item)), None)
        if hit is None:
            misses_pred.append(f"{item.kind}:{item.name}")
        else:
            free.remove(hit)
            matched_items += 1
    return {"id": case["id"], "genre_ok": reading.genre == case["genre"], "genre": reading.genre,
            "want_genre": case["genre"], "predicted": len(reading.items), "matched": matched_items,
            "labels": len(labels), "missed": [f"{labels[i]['kind']}:{labels[i]['term']}" for i in free],
            "extra": misses_pred, "language": reading.language, "reason": reading.reason,
            "keyword_free": (keyword := classify_brief(case["brief"], pack.genre_vocab()).genre) is None,
            # what the offline leader did before the reader: the keyword genre, else the pack's default genre
            "baseline_genre": (keyword if keyword in pack.genres else None) if keyword is not None
            else pack.manifest.default_genre,
            "default_delivery": reading.genre == pack.manifest.default_genre and case["genre"] != reading.genre}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    pred = sum(r["predicted"] for r in rows)
    matched = sum(r["matched"] for r in rows)
    labels = sum(r["labels"] for r in rows)
    return {"briefs": len(rows), "precision": round(matched / pred, 3) if pred else 1.0,
            "recall": round(matched / labels, 3) if labels else 1.0,
            "genre_accuracy": round(sum(r["genre_ok"] for r in rows) / len(rows), 3) if rows else 1.0,
            "default_genre_deliveries": sum(1 for r in rows if r["default_delivery"]),
            "keyword_free": sum(1 for r in rows if r["keyword_free"]),
            "chinese": sum(1 for r in rows if r["language"] == "zh"),
            "unreadable": sum(1 for r in rows if r["language"] == "unreadable"),
            "not_buildable": sum(1 for r in rows if r["want_genre"] is None),
            "baseline_genre_accuracy": round(sum(r["baseline_genre"] == r["want_genre"] for r in rows) / len(rows), 3)
            if rows else 1.0,
            "baseline_default_genre_deliveries": sum(1 for r in rows if r["baseline_genre"] != r["want_genre"]
                                                     and r["baseline_genre"] is not None
                                                     and r["keyword_free"])}


def run(path: Path, slice_: str, pack: Pack) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    cases = load_set(path)
    if slice_ == "dev":
        cases = [c for c in cases if not c.get("held_out")]
    elif slice_ == "held_out":
        cases = [c for c in cases if c.get("held_out")]
    rows = [score_brief(c, pack) for c in cases]
    return summarise(rows), rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--briefs", default=str(DEFAULT_SET))
    ap.add_argument("--slice", choices=["all", "dev", "held_out"], default="all")
    ap.add_argument("--pack", default="phaser")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--misses", action="store_true", help="list every brief with a wrong genre or a missed label")
    args = ap.parse_args()
    settings = Settings()
    pack = load_pack(settings.packs_dir, args.pack, settings.skills_dir)
    started = time.perf_counter()
    out = {}
    for name in (["dev", "held_out", "all"] if args.slice == "all" else [args.slice]):
        summary, rows = run(Path(args.briefs), name, pack)
        out[name] = summary
        if args.misses and name != "all":
            for r in rows:
                if not r["genre_ok"] or r["missed"] or r["extra"]:
                    print(f"{r['id']}: genre {r['genre']} (want {r['want_genre']}) missed {r['missed']} "
                          f"extra {r['extra']}")
    elapsed = time.perf_counter() - started
    if args.json:
        print(json.dumps({**out, "seconds": round(elapsed, 2)}, indent=2))
        return 0
    for name, s in out.items():
        print(f"{name:9s} {s['briefs']:3d} briefs: precision {s['precision']:.3f}, recall {s['recall']:.3f}, genre "
              f"{100 * s['genre_accuracy']:.1f}%, default-genre deliveries {s['default_genre_deliveries']} "
              f"(keyword-free {s['keyword_free']}, Chinese {s['chinese']}, unreadable {s['unreadable']}, "
              f"not buildable {s['not_buildable']}); before the reader (keywords, else the default genre): genre "
              f"{100 * s['baseline_genre_accuracy']:.1f}%, default-genre deliveries "
              f"{s['baseline_default_genre_deliveries']}")
    print(f"{elapsed:.2f} s (jieba's dictionary load included)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

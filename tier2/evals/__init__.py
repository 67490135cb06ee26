"""`tier2 eval`: suites of briefs as files (`suite`), run through the normal run path (`runner`: locally with an
embedded Redis and in-process workers, or through a running service), their per-run rows and per-model summaries
(`metrics`) in ``OUT/results.json`` (`results`). Only the CLI imports this package (docs/eval.md)."""

"""``tier2 eval compare A B``: what got better or worse between two evals of one suite, brief by brief, and
whether any of it is a regression beyond noise (rules: docs/eval.md "Comparing two evals").

A and B are ``results.json`` files (`tier2.evals.results`) or the eval out dirs holding them. Exit 0: no
regression; 1: a regression (a brief, a genre, the overall pass rate, the cost or the time per model); 2: bad
input (unreadable, not ``tier2.eval.results/1``, different suites, no model to pair).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path

from pydantic import ValidationError

from tier2.evals.results import RESULTS_SCHEMA, EvalResults, Percentiles, RunRow
from tier2.evals.stats import fisher_less, holm

__all__ = ["CompareError", "Rules", "BriefDelta", "GroupDelta", "MetricDelta", "PairComparison", "Comparison",
           "read_results", "compare", "render_text", "add_parser", "cmd_compare", "DETERMINISTIC_ROUTES"]

#: model routes whose outcome is a function of the brief, the code and the policy (no sampling): the offline policy
DETERMINISTIC_ROUTES = frozenset({"offline"})
#: results.json files larger than this are refused (an eval of thousands of runs stays far below)
MAX_RESULTS_BYTES = 64_000_000


class CompareError(Exception):
    """Bad input for a comparison (exit 2): the message says which file and why."""


@dataclass(frozen=True)
class Rules:
    alpha: float = 0.05
    #: B's cost per delivered game (p50) above A's by more than this ratio (and by ``min_cost_usd``) is a regression
    cost_ratio: float = 1.25
    min_cost_usd: float = 0.001
    #: B's time per run (p50) above A's by more than this ratio (and by ``min_time_s``) is a regression
    time_ratio: float = 1.5
    min_time_s: float = 5.0
    deterministic: frozenset[str] = DETERMINISTIC_ROUTES


@dataclass
class BriefDelta:
    brief: str
    genre: str
    a_passed: int
    a_n: int
    b_passed: int
    b_n: int
    a_status: str
    b_status: str
    #: one-sided Fisher p-value ("B passes less"), Holm-adjusted over the model's briefs; None: not tested
    p: float | None
    #: regressed | improved | worse | better | same | only_a | only_b  (worse/better: a change within noise)
    verdict: str
    a_cost: float
    b_cost: float
    a_wall_s: float
    b_wall_s: float
    b_signature: str | None = None


@dataclass
class GroupDelta:
    name: str
    a_passed: int
    a_n: int
    b_passed: int
    b_n: int
    p: float
    regressed: bool
    briefs: list[str] = field(default_factory=list)


@dataclass
class MetricDelta:
    name: str
    a: float | None
    b: float | None
    limit: float
    regressed: bool


@dataclass
class PairComparison:
    model_a: str
    model_b: str
    deterministic: bool
    briefs: list[BriefDelta]
    genres: list[GroupDelta]
    overall: GroupDelta
    metrics: list[MetricDelta]

    def _why(self, p: float) -> str:
        return f"p={p:.3g}" + (", deterministic route" if self.deterministic else "")

    @property
    def regressions(self) -> list[str]:
        label = self.model_b if self.model_a == self.model_b else f"{self.model_a} -> {self.model_b}"
        out = [f"{label}: brief {d.brief} ({d.genre}) regressed: {d.a_passed}/{d.a_n} -> {d.b_passed}/{d.b_n} passed"
               + (f", p={d.p:.3g}" if d.p is not None else " (deterministic route)")
               + (f"; now: {d.b_signature}" if d.b_signature else "")
               for d in self.briefs if d.verdict == "regressed"]
        out += [f"{label}: genre {g.name} regressed: {g.a_passed}/{g.a_n} -> {g.b_passed}/{g.b_n} passed"
                f" ({self._why(g.p)}); briefs: {', '.join(g.briefs)}" for g in self.genres if g.regressed]
        if self.overall.regressed:
            o = self.overall
            out.append(f"{label}: overall pass rate regressed: {o.a_passed}/{o.a_n} -> {o.b_passed}/{o.b_n}"
                       f" (p={o.p:.3g})")
        out += [f"{label}: {m.name} regressed: {m.a:.4g} -> {m.b:.4g} (limit {m.limit:g}x)" for m in self.metrics
                if m.regressed and m.a is not None and m.b is not None]
        return out


@dataclass
class Comparison:
    suite: str
    a: str
    b: str
    rules: Rules
    pairs: list[PairComparison]
    notes: list[str]

    @property
    def regressions(self) -> list[str]:
        return [r for p in self.pairs for r in p.regressions]

    def to_json(self) -> str:
        data = asdict(self)
        data["rules"]["deterministic"] = sorted(self.rules.deterministic)
        data["regressions"] = self.regressions
        return json.dumps(data, indent=2)


def read_results(arg: str | Path) -> EvalResults:
    """A ``results.json`` or an eval out dir holding one; `CompareError` with the reason otherwise."""
    path = Path(arg)
    file = path / "results.json" if path.is_dir() else path
    try:
        if file.stat().st_size > MAX_RESULTS_BYTES:
            raise CompareError(f"{file}: larger than {MAX_RESULTS_BYTES} bytes; not a results.json")
        data = json.loads(file.read_bytes())
    except OSError as exc:
        raise CompareError(f"{file}: cannot read ({exc.strerror or exc})") from exc
    except (ValueError, RecursionError) as exc:
        raise CompareError(f"{file}: not JSON ({exc})") from exc
    if not isinstance(data, dict) or data.get("schema") != RESULTS_SCHEMA:
        found = data.get("schema") if isinstance(data, dict) else type(data).__name__
        raise CompareError(f"{file}: schema {found!r}, expected {RESULTS_SCHEMA!r} (a tier2 eval results.json)")
    try:
        return EvalResults.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise CompareError(f"{file}: not a valid {RESULTS_SCHEMA}: {where}: {first['msg']} "
                           f"({exc.error_count()} error(s))") from exc


def _key(row: RunRow) -> str:
    return row.brief_id if row.follow_up == 0 else f"{row.brief_id}#{row.follow_up}"


def _genre(rows: list[RunRow]) -> str:
    for row in rows:
        if row.genre_expected or row.genre_built:
            return row.genre_expected or row.genre_built or ""
    return "(none)"


def _status(rows: list[RunRow]) -> str:
    counts: dict[str, int] = defaultdict(int)
    for row in rows:
        counts[row.status] += 1
    return ", ".join(s if n == 1 and len(rows) == 1 else f"{n}x {s}" for s, n in sorted(counts.items()))


def _pairs(a: EvalResults, b: EvalResults) -> list[tuple[str, str]]:
    common = [m for m in a.models if m in b.models]
    if common:
        return [(m, m) for m in common]
    if len(a.models) == 1 and len(b.models) == 1:
        return [(a.models[0], b.models[0])]
    raise CompareError(f"no model in common (A: {', '.join(a.models)}; B: {', '.join(b.models)}) and more than "
                       "one on a side: nothing to pair")


def _brief_verdict(ra: list[RunRow], rb: list[RunRow], deterministic: bool) -> tuple[str, float | None]:
    if not rb:
        return "only_a", None
    if not ra:
        return "only_b", None
    xa, na, xb, nb = sum(r.passed for r in ra), len(ra), sum(r.passed for r in rb), len(rb)
    worse, better = xb * na < xa * nb, xb * na > xa * nb
    if deterministic:
        return ("regressed" if worse else "improved" if better else "same"), None
    if min(na, nb) < 2:  # K=1 on a sampling route: one outcome is no evidence either way
        return ("worse" if worse else "better" if better else "same"), None
    return ("worse" if worse else "better" if better else "same"), fisher_less(xa, na, xb, nb)


def _group(name: str, ra: list[RunRow], rb: list[RunRow]) -> GroupDelta:
    xa, na, xb, nb = sum(r.passed for r in ra), len(ra), sum(r.passed for r in rb), len(rb)
    return GroupDelta(name, xa, na, xb, nb, fisher_less(xa, na, xb, nb), False)


def _ratio_metric(name: str, a: Percentiles, b: Percentiles, ratio: float, floor: float) -> MetricDelta:
    regressed = a.p50 is not None and b.p50 is not None and b.p50 > a.p50 * ratio and b.p50 - a.p50 > floor
    return MetricDelta(name, a.p50, b.p50, ratio, bool(regressed))


def _compare_pair(a: EvalResults, b: EvalResults, ma: str, mb: str, rules: Rules) -> PairComparison:
    by_a: dict[str, list[RunRow]] = defaultdict(list)
    by_b: dict[str, list[RunRow]] = defaultdict(list)
    for row in a.runs:
        if row.model == ma:
            by_a[_key(row)].append(row)
    for row in b.runs:
        if row.model == mb:
            by_b[_key(row)].append(row)
    deterministic = ma in rules.deterministic and mb in rules.deterministic
    briefs: list[BriefDelta] = []
    for key in sorted(set(by_a) | set(by_b)):
        ra, rb = by_a.get(key, []), by_b.get(key, [])
        verdict, p = _brief_verdict(ra, rb, deterministic)
        failed = [r.signature for r in rb if not r.passed and r.signature]
        briefs.append(BriefDelta(key, _genre(ra + rb), sum(r.passed for r in ra), len(ra),
                                 sum(r.passed for r in rb), len(rb), _status(ra), _status(rb), p, verdict,
                                 round(sum(r.cost_usd for r in ra), 6), round(sum(r.cost_usd for r in rb), 6),
                                 round(sum(r.wall_s for r in ra), 3), round(sum(r.wall_s for r in rb), 3),
                                 failed[0] if failed else None))
    tested = [d for d in briefs if d.p is not None]
    for d, adjusted in zip(tested, holm([d.p for d in tested if d.p is not None]), strict=True):
        d.p = adjusted
        if d.verdict == "worse" and adjusted <= rules.alpha:
            d.verdict = "regressed"
    both = [d.brief for d in briefs if d.a_n and d.b_n]  # the groups compare the briefs both evals ran
    genres: list[GroupDelta] = []
    for genre in sorted({d.genre for d in briefs}):
        keys = [d.brief for d in briefs if d.genre == genre and d.brief in both]
        group = _group(genre, [r for k in keys for r in by_a[k]], [r for k in keys for r in by_b[k]])
        group.briefs = [d.brief for d in briefs if d.genre == genre and d.verdict in ("regressed", "worse")]
        genres.append(group)
    for group, adjusted in zip(genres, holm([g.p for g in genres]), strict=True):
        group.p = adjusted
        lost = [d for d in briefs if d.genre == group.name and d.verdict == "regressed"]
        group.regressed = adjusted <= rules.alpha or (deterministic and bool(lost))
    overall = _group("overall", [r for k in both for r in by_a[k]], [r for k in both for r in by_b[k]])
    overall.regressed = overall.p <= rules.alpha
    sa, sb = a.summary.get(ma), b.summary.get(mb)
    metrics = [] if sa is None or sb is None else [
        _ratio_metric("cost per delivered game p50 (USD)", sa.cost_per_delivered, sb.cost_per_delivered,
                      rules.cost_ratio, rules.min_cost_usd),
        _ratio_metric("time per run p50 (s)", sa.time, sb.time, rules.time_ratio, rules.min_time_s)]
    return PairComparison(ma, mb, deterministic, briefs, genres, overall, metrics)


def compare(a: EvalResults, b: EvalResults, rules: Rules | None = None, names: tuple[str, str] = ("A", "B"),
            ) -> Comparison:
    rules = rules or Rules()
    if a.suite.id != b.suite.id:
        raise CompareError(f"different suites: A ran {a.suite.id!r}, B ran {b.suite.id!r}")
    if a.suite.hash != b.suite.hash:
        raise CompareError(f"suite {a.suite.id!r} changed between the evals (A: version {a.suite.version} "
                           f"hash {a.suite.hash[:12]}, B: version {b.suite.version} hash {b.suite.hash[:12]}): "
                           "compare runs of the same suite content")
    notes = []
    if a.policy_hash != b.policy_hash:
        notes.append(f"policy differs: A {a.policy_hash or '?'}, B {b.policy_hash or '?'}")
    if a.tier2_commit != b.tier2_commit:
        notes.append(f"tier2 commit differs: A {a.tier2_commit or '?'}, B {b.tier2_commit or '?'}")
    shared = {r.run_id for r in a.runs if r.run_id} & {r.run_id for r in b.runs if r.run_id}
    if shared:
        notes.append(f"{len(shared)} of B's runs are A's own (same run ids): those briefs were not run again — B "
                     "resumed or copied A's OUT; run B with another --out for a fresh eval")
    pairs = [_compare_pair(a, b, ma, mb, rules) for ma, mb in _pairs(a, b)]
    for pair in pairs:
        flips = [d.brief for d in pair.briefs if d.verdict == "worse" and d.p is None]
        if flips:
            shown = ", ".join(flips[:5]) + (", ..." if len(flips) > 5 else "")
            notes.append(f"{pair.model_b}: {len(flips)} brief(s) went worse with one run per side ({shown}): on a "
                         "sampling route one outcome is no evidence; run with --repeat 3 or more, or pass "
                         "--deterministic ROUTE if its outcomes do not vary")
    return Comparison(f"{a.suite.id} v{a.suite.version}", names[0], names[1], rules, pairs, notes)


def _rate(x: int, n: int) -> str:
    return f"{x}/{n}" if n else "-"


def _num(v: float | None) -> str:
    return "-" if v is None else f"{v:.4g}"


def render_text(c: Comparison) -> str:
    lines = [f"compare {c.suite}: A = {c.a}, B = {c.b} (alpha {c.rules.alpha:g}, cost x{c.rules.cost_ratio:g}, "
             f"time x{c.rules.time_ratio:g})"]
    lines += [f"note: {n}" for n in c.notes]
    for pair in c.pairs:
        head = pair.model_a if pair.model_a == pair.model_b else f"{pair.model_a} -> {pair.model_b}"
        lines.append(f"\nmodel {head}" + (" (deterministic route: any change is real)" if pair.deterministic
                                          else ""))
        lines.append(f"  {'brief':<28} {'genre':<11} {'A':>5} {'B':>5} {'p':>6}  verdict")
        for d in pair.briefs:
            lines.append(f"  {d.brief[:28]:<28} {d.genre[:11]:<11} {_rate(d.a_passed, d.a_n):>5} "
                         f"{_rate(d.b_passed, d.b_n):>5} {_num(d.p):>6}  {d.verdict}"
                         + (f"  [{d.b_signature}]" if d.verdict in ("regressed", "worse") and d.b_signature else ""))
        lines.append(f"  {'genre':<28} {'':<11} {'A':>5} {'B':>5} {'p':>6}")
        for g in [*pair.genres, pair.overall]:
            lines.append(f"  {g.name[:28]:<28} {'':<11} {_rate(g.a_passed, g.a_n):>5} {_rate(g.b_passed, g.b_n):>5} "
                         f"{_num(g.p):>6}  {'REGRESSED' if g.regressed else ''}")
        for m in pair.metrics:
            lines.append(f"  {m.name}: {_num(m.a)} -> {_num(m.b)}{'  REGRESSED' if m.regressed else ''}")
    found = c.regressions
    lines.append("")
    lines += [f"REGRESSION {r}" for r in found] or ["no regression beyond noise"]
    return "\n".join(lines)


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``compare`` on the ``tier2 eval`` sub-parser (`tier2.evals`' CLI)."""
    p = sub.add_parser("compare", help="what got better or worse between two evals of one suite "
                                       "(exit 1 on a regression beyond noise, 2 on bad input)")
    p.add_argument("a", metavar="A", help="the baseline: results.json or an eval out dir")
    p.add_argument("b", metavar="B", help="the candidate: results.json or an eval out dir")
    p.add_argument("--alpha", type=float, default=Rules.alpha, help="significance level of every test family")
    p.add_argument("--cost-ratio", type=float, default=Rules.cost_ratio,
                   help="B/A cost per delivered game (p50) above this is a regression")
    p.add_argument("--time-ratio", type=float, default=Rules.time_ratio,
                   help="B/A time per run (p50) above this is a regression")
    p.add_argument("--deterministic", action="append", default=[], metavar="ROUTE",
                   help="a model route whose outcome does not vary between runs (offline always is); repeatable")
    p.add_argument("--json", action="store_true", help="the comparison as JSON on stdout")
    p.set_defaults(fn=cmd_compare)


def cmd_compare(args: argparse.Namespace) -> int:
    import sys

    if not 0 < args.alpha < 1 or args.cost_ratio < 1 or args.time_ratio < 1:
        print("tier2 eval compare: --alpha must be in (0, 1), --cost-ratio and --time-ratio at least 1",
              file=sys.stderr)
        return 2
    rules = Rules(alpha=args.alpha, cost_ratio=args.cost_ratio, time_ratio=args.time_ratio,
                  deterministic=DETERMINISTIC_ROUTES | set(args.deterministic))
    try:
        result = compare(read_results(args.a), read_results(args.b), rules, (str(args.a), str(args.b)))
    except CompareError as exc:
        print(f"tier2 eval compare: {exc}", file=sys.stderr)
        return 2
    print(result.to_json() if args.json else render_text(result))
    return 1 if result.regressions else 0

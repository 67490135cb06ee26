"""``OUT/report.html``: an eval's results (`tier2.evals.results`) as one self-contained page people read.

Tables per model, per genre, per brief and of failure signatures; a chart of pass rate against cost per model
(`tier2.evals.chart`); a grid with every game's screenshot. Self-contained: inline CSS and SVG, screenshots
scaled down and embedded as data URIs, no script and no URL of any kind (a CSP meta tag forbids loading anything
but ``data:`` images). Briefs, ids, reasons and signatures are hostile input: every text is HTML-escaped, and a
screenshot path is only read when it resolves inside OUT. ``tier2 eval report OUT`` writes it again from
``OUT/results.json``.
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import sys
from html import escape
from importlib import resources
from pathlib import Path
from string import Template

from tier2.evals.chart import Point, scatter_svg
from tier2.evals.compare import CompareError, read_results
from tier2.evals.results import EvalResults, GenreRow, ModelSummary, RunRow

__all__ = ["render_report", "write_report", "thumbnail", "add_parser", "cmd_report", "REPORT_NAME"]

REPORT_NAME = "report.html"
THUMB_PX = (320, 240)
MAX_SHOT_BYTES = 20_000_000
MAX_SHOT_PIXELS = 16_000_000


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _rate(v: float | None) -> str:
    return "-" if v is None else f"{v * 100:.1f} %"


def _usd(v: float | None) -> str:
    return "-" if v is None else f"${v:.4f}"


def _secs(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f} s"


def _td(text: str, raw: float | int | str | None = None, cls: str = "") -> str:
    attrs = f' class="{cls}"' if cls else ""
    if raw is not None:
        attrs += f' data-v="{_e(raw)}"'
    return f"<td{attrs}>{_e(text)}</td>"


def _long(text: str, keep: int = 240) -> str:
    """A long text (a stop reason holds the failing gates' whole report): its start shown, all of it on hover."""
    shown = text if len(text) <= keep else text[:keep].rstrip() + " …"
    return f'<td class="long" title="{_e(text)}">{_e(shown)}</td>'


def _num(text: str, raw: float | int | None, cls: str = "n") -> str:
    return _td(text, "" if raw is None else raw, cls)


def _table(head: list[str], rows: list[str], cls: str) -> str:
    ths = "".join(f"<th>{_e(h)}</th>" for h in head)
    body = "".join(rows) or f'<tr><td colspan="{len(head)}" class="dim">none</td></tr>'
    return f'<table class="{cls}"><thead><tr>{ths}</tr></thead><tbody>{body}</tbody></table>'


def _model_rows(results: EvalResults) -> str:
    rows = []
    for model in results.models:
        s = results.summary.get(model, ModelSummary())
        pr = s.pass_rate
        rows.append(f'<tr data-model="{_e(model)}">' + "".join([
            _td(model), _num(str(s.runs), s.runs), _num(str(s.delivered), s.delivered),
            _num(_rate(s.build_health), s.build_health),
            _num(f"{_rate(s.intent)} ({s.intent_verified}/{s.intent_expected})", s.intent),
            _num(_rate(s.honest_rate), s.honest_rate),
            _num(f"{_rate(pr.rate)} [{_rate(pr.lo)}, {_rate(pr.hi)}] K={pr.k}", pr.rate),
            _num(_usd(s.cost_per_delivered.p50), s.cost_per_delivered.p50),
            _num(_usd(s.cost_per_delivered.p95), s.cost_per_delivered.p95),
            _num(_secs(s.time.p50), s.time.p50), _num(_secs(s.time.p95), s.time.p95),
            _num(_usd(s.cost_usd), s.cost_usd)]) + "</tr>")
    return _table(["model", "runs", "delivered", "build health", "intent", "honest", "pass rate [95 % CI]",
                   "cost/delivered p50", "p95", "time p50", "p95", "total cost"], rows, "models")


def _genre_table(model: str, genres: dict[str, GenreRow]) -> str:
    rows = [f'<tr data-genre="{_e(name)}">' + "".join([
        _td(name), _num(str(g.runs), g.runs), _num(str(g.delivered), g.delivered),
        _num(_rate(g.build_health), g.build_health), _num(_rate(g.intent), g.intent),
        _num(_rate(g.pass_rate), g.pass_rate),
        _num(_usd(g.cost_per_delivered.p50), g.cost_per_delivered.p50),
        _num(_usd(g.cost_per_delivered.p95), g.cost_per_delivered.p95),
        _num(_secs(g.time.p50), g.time.p50), _num(_secs(g.time.p95), g.time.p95)]) + "</tr>"
        for name, g in sorted(genres.items())]
    return f"<h3>{_e(model)}</h3>" + _table(["genre", "runs", "delivered", "build health", "intent", "pass rate",
                                              "cost/delivered p50", "p95", "time p50", "p95"], rows, "genres")


def _signature_table(model: str, s: ModelSummary) -> str:
    rows = [f"<tr>{_td(sig.signature)}{_num(str(sig.count), sig.count)}{_td(', '.join(sig.briefs))}</tr>"
            for sig in s.failure_signatures]
    return f"<h3>{_e(model)}</h3>" + _table(["signature", "runs", "briefs"], rows, "signatures")


def _label(row: RunRow) -> str:
    return row.brief_id if row.follow_up == 0 else f"{row.brief_id}#{row.follow_up}"


def _yes(flag: bool | None) -> tuple[str, str]:
    return ("-", "dim") if flag is None else ("yes", "ok") if flag else ("no", "bad")


def _brief_rows(results: EvalResults) -> str:
    rows = []
    for i, r in enumerate(results.runs):
        l1, l1c = _yes(r.l1_passed)
        honest, hc = _yes(r.honest)
        passed, pc = _yes(r.passed)
        missing = f" missing: {', '.join(r.content.missing)}" if r.content.missing else ""
        rows.append(f'<tr data-run="{i}">' + "".join([
            _td(_label(r)), _num(str(r.repeat), r.repeat), _td(r.model), _td(r.status, r.status),
            _td(f"{r.outcome or '-'} (expected {r.outcome_expected})"),
            _td(f"{r.genre_built or '-'} (expected {r.genre_expected or '-'}, {r.genre_verdict})"),
            _td(l1, int(r.l1_passed), l1c),
            _num(f"{r.structural.verified}/{r.structural.total}", r.structural.verified),
            _num(f"{r.content.verified}/{r.content.expected}", r.content.verified) + _td(missing.strip(), None, "long"),
            _num("-" if r.l3_score is None else f"{r.l3_score:.2f}", r.l3_score),
            _num(str(r.model_calls), r.model_calls), _num(f"{r.tokens.in_}/{r.tokens.out}", r.tokens.in_),
            _num(_usd(r.cost_usd), r.cost_usd), _num(_secs(r.wall_s), r.wall_s),
            _num(str(r.fix_rounds), r.fix_rounds), _num(str(r.breaker_trips), r.breaker_trips),
            _td(honest, "" if r.honest is None else int(r.honest), hc), _td(passed, int(r.passed), pc),
            _td(r.signature or "", None, "long"), _long(r.stop_reason)]) + "</tr>")
    return _table(["brief", "rep", "model", "status", "outcome", "genre built", "L1", "structural", "content",
                   "missing", "L3", "calls", "tokens in/out", "cost", "wall", "fix rounds", "breakers", "honest",
                   "passed", "signature", "stop reason"], rows, "briefs")


def thumbnail(out_dir: Path, rel: str | None) -> str | None:
    """A ``data:`` URI of the screenshot at ``rel`` (relative to OUT), scaled to fit `THUMB_PX`; None when there is
    none, it lies outside OUT (absolute, ``..``, a link out), is too large or is no image."""
    if not rel:
        return None
    from PIL import Image, UnidentifiedImageError

    root = out_dir.resolve()
    try:
        path = (root / rel).resolve()
        if not path.is_relative_to(root) or not path.is_file() or path.stat().st_size > MAX_SHOT_BYTES:
            return None
        with Image.open(path) as img:
            if img.width * img.height > MAX_SHOT_PIXELS:
                return None
            img.thumbnail(THUMB_PX)
            buf = io.BytesIO()
            img.convert("RGB").save(buf, format="JPEG", quality=72)
    except (OSError, ValueError, UnidentifiedImageError, Image.DecompressionBombError):
        return None
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _shots(results: EvalResults, out_dir: Path) -> str:
    cards = []
    for i, r in enumerate(results.runs):
        uri = thumbnail(out_dir, r.screenshot)
        alt = _e(f"{_label(r)} ({r.model}, repeat {r.repeat})")
        img = f'<img src="{uri}" alt="{alt}">' if uri else '<div class="noshot">no screenshot</div>'
        genre = r.genre_built or "-"
        cls = "ok" if r.passed else "bad"
        cards.append(f'<figure data-run="{i}">{img}<figcaption><b>{_e(_label(r))}</b> · '
                     f'<span class="{cls}">{_e(r.status)}</span> · {_e(genre)}'
                     f'<br><span class="dim">{_e(r.model)}, repeat {r.repeat}</span></figcaption></figure>')
    return "".join(cards)


def render_report(results: EvalResults, out_dir: Path) -> str:
    """The page (a str); screenshots are read from ``out_dir`` (where results.json's relative paths point)."""
    s = results.suite
    meta = (f"suite <b>{_e(s.id)}</b> v{_e(s.version)} <code>{_e(s.hash[:16])}</code> · models "
            f"{_e(', '.join(results.models))} · {len(results.runs)} run(s), K={results.repeat} · where "
            f"{_e(results.where)} · policy <code>{_e(results.policy_hash or '?')}</code> · tier2 "
            f"<code>{_e(results.tier2_commit or '?')}</code> · started {_e(_when(results.started_at))}, finished "
            f"{_e(_when(results.finished_at))}")
    points = [Point(m, sm.pass_rate.rate, sm.pass_rate.lo, sm.pass_rate.hi, sm.cost_per_delivered.p50)
              for m in results.models if (sm := results.summary.get(m)) is not None]
    page = Template(resources.files("tier2.evals").joinpath("report_template.html").read_text(encoding="utf-8"))
    return page.substitute(
        title=_e(f"{s.id} v{s.version}"), meta=meta, models=_model_rows(results), chart=scatter_svg(points),
        genres="".join(_genre_table(m, results.summary[m].per_genre) for m in results.models
                       if m in results.summary),
        signatures="".join(_signature_table(m, results.summary[m]) for m in results.models
                           if m in results.summary),
        briefs=_brief_rows(results), shots=_shots(results, out_dir))


def _when(ts: float | None) -> str:
    if ts is None:
        return "-"
    import datetime as dt

    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def write_report(out_dir: Path, results: EvalResults | None = None) -> Path:
    """Write ``OUT/report.html`` (from ``results``, or ``OUT/results.json``) through a temp file and a rename."""
    results = results if results is not None else read_results(out_dir)
    target = out_dir / REPORT_NAME
    page = render_report(results, out_dir)
    tmp = target.with_name(f".{REPORT_NAME}.{os.getpid()}.tmp")
    tmp.unlink(missing_ok=True)  # a file or link left there is never written through
    with open(tmp, "x", encoding="utf-8") as f:
        f.write(page)
    tmp.replace(target)
    return target


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``report`` on the ``tier2 eval`` sub-parser."""
    p = sub.add_parser("report", help="write OUT/report.html again from OUT/results.json")
    p.add_argument("out", metavar="OUT", help="an eval out dir (holding results.json)")
    p.set_defaults(fn=cmd_report)


def cmd_report(args: argparse.Namespace) -> int:
    out = Path(args.out)
    if not out.is_dir():
        print(f"tier2 eval report: {out} is not a directory (an eval out dir holding results.json)",
              file=sys.stderr)
        return 2
    try:
        path = write_report(out)
    except CompareError as exc:
        print(f"tier2 eval report: {exc}", file=sys.stderr)
        return 2
    print(path)
    return 0

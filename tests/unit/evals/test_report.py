"""``report.html``: self-contained (no URL of any kind), hostile text escaped, every run in the screenshot grid, and
the numbers in its tables equal to results.json's."""

from __future__ import annotations

import base64
import io
import re
from html import escape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from PIL import Image

from tests.fixtures.eval_results import results, row, suite_rows
from tier2.evals.report import THUMB_PX, render_report, write_report
from tier2.evals.results import EvalResults

HOSTILE = '<script>alert(1)</script><img src="https://evil.example/x.png" onerror="x()">'


class _Page(HTMLParser):
    """Every element with its attributes, the text of each table cell, and where text sits."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.cells: dict[str, list[tuple[str | None, str]]] = {}  # table class -> (data-v, text) per cell
        self._table: list[str] = []
        self._cell: list[str] | None = None
        self._raw: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        self.elements.append((tag, a))
        if tag == "table":
            self._table.append(a.get("class") or "")
        elif tag == "td" and self._table:
            self._cell, self._raw = [], a.get("data-v")

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._table.pop()
        elif tag == "td" and self._cell is not None:
            self.cells.setdefault(self._table[-1], []).append((self._raw, "".join(self._cell)))
            self._cell = None

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)


def _parse(page: str) -> _Page:
    p = _Page()
    p.feed(page)
    p.close()
    return p


def _png(path: Path, size: tuple[int, int], colour: tuple[int, int, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)


def _hostile_results(out: Path) -> EvalResults:
    rows = suite_rows(model="offline")
    for i, r in enumerate(rows):
        _png(out / "shots" / f"{i}.png", (960, 640), (40 * (i % 6), 90, 160))
        rows[i] = r.model_copy(update={"screenshot": f"shots/{i}.png"})
    rows.append(row(HOSTILE, "shop", False, stop_reason=HOSTILE, signature=HOSTILE,
                    content={"verified": 0, "expected": 1, "missing": [HOSTILE]}, screenshot="../outside.png"))
    rows.append(row("gpt-shop", "shop", True, model='gpt"><b>x</b>', cost=0.0123, wall=42.5,
                    screenshot="shots/link.png"))
    return results(rows)


@pytest.fixture
def page(tmp_path: Path) -> tuple[str, EvalResults, Path]:
    out = tmp_path / "out"
    _png(tmp_path / "outside.png", (64, 64), (255, 0, 0))        # outside OUT: never read
    (out / "shots").mkdir(parents=True)
    (out / "shots" / "link.png").symlink_to(tmp_path / "outside.png")  # a link out of OUT: never followed
    res = _hostile_results(out)
    (out / "results.json").write_text(res.dump_json(), encoding="utf-8")
    return write_report(out).read_text(encoding="utf-8"), res, out


def test_hostile_text_is_escaped_everywhere(page: tuple[str, EvalResults, Path]) -> None:
    html, _, _ = page
    assert "<script" not in html.lower()
    p = _parse(html)
    tags = {t for t, _ in p.elements}
    assert "script" not in tags and "b" in tags  # the page's own <b>; the model name's <b> stayed text
    assert not any("onerror" in a for _, a in p.elements)
    assert sum(HOSTILE in t for t in p.text) >= 4  # brief id, stop reason, signature, missing: shown as text
    assert any('gpt"><b>x</b>' in t for t in p.text)


def test_no_external_url_of_any_kind(page: tuple[str, EvalResults, Path]) -> None:
    html, _, _ = page
    p = _parse(html)
    for tag, attrs in p.elements:
        for name, value in attrs.items():
            if name in ("src", "href", "xlink:href", "action", "srcset", "poster", "data"):
                assert value is not None and value.startswith("data:"), (tag, name, value)
    # what is shown may mention a URL (the hostile brief does, escaped); the page itself names none
    assert escape(HOSTILE) in html
    markup = re.sub(r'"data:[^"]*"', '""', html.replace(escape(HOSTILE), ""))
    assert not re.search(r"https?:|ftp:|//[a-z0-9]|url\(|@import|<base|refresh", markup, re.I)
    assert not {t for t, _ in p.elements} & {"script", "iframe", "object", "embed", "base", "form", "use"}
    assert "Content-Security-Policy" in html and "default-src 'none'" in html


def test_every_run_is_in_the_grid_with_id_status_and_genre(page: tuple[str, EvalResults, Path]) -> None:
    html, res, _ = page
    p = _parse(html)
    figures = [a for t, a in p.elements if t == "figure"]
    assert [a["data-run"] for a in figures] == [str(i) for i in range(len(res.runs))]
    captions = re.findall(r"<figcaption>(.*?)</figcaption>", html, re.S)
    for r, cap in zip(res.runs, captions, strict=True):
        text = re.sub(r"<[^>]+>", "", cap)
        assert r.status in text and (r.genre_built or "-") in text
    images = [a["src"] for t, a in p.elements if t == "img"]
    assert len(images) == len(res.runs) - 2  # the one outside OUT and the link out have none
    red = []
    for uri in images:
        assert uri is not None and uri.startswith("data:image/jpeg;base64,")
        with Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))) as img:
            assert img.width <= THUMB_PX[0] and img.height <= THUMB_PX[1]  # scaled down from 960x640
            red.append(img.convert("RGB").getpixel((2, 2))[0] > 200 and img.getpixel((2, 2))[1] < 50)
    assert not any(red)  # the red picture outside OUT was never embedded
    assert html.count("no screenshot") == 2


def test_numbers_equal_results_json(page: tuple[str, EvalResults, Path]) -> None:
    html, res, _ = page
    p = _parse(html)
    models = p.cells["models"]
    per_model = len(models) // len(res.models)
    for i, m in enumerate(res.models):
        cells = models[i * per_model:(i + 1) * per_model]
        s = res.summary[m]
        assert cells[0][1] == m
        assert [float(v) for v, _ in cells[1:3]] == [s.runs, s.delivered]
        assert float(cells[3][0] or "nan") == pytest.approx(s.build_health)
        assert float(cells[6][0] or "nan") == pytest.approx(s.pass_rate.rate)
        assert f"{s.pass_rate.rate * 100:.1f} %" in cells[6][1] and f"K={s.pass_rate.k}" in cells[6][1]
        assert cells[11][1] == f"${s.cost_usd:.4f}"
    briefs = p.cells["briefs"]
    per_run = len(briefs) // len(res.runs)
    for i, r in enumerate(res.runs):
        cells = briefs[i * per_run:(i + 1) * per_run]
        assert cells[0][1] == r.brief_id and cells[3][1] == r.status
        assert cells[13][1] == f"${r.cost_usd:.4f}" and float(cells[13][0] or "nan") == r.cost_usd
        assert cells[14][1] == f"{r.wall_s:.1f} s" and float(cells[14][0] or "nan") == r.wall_s
        assert cells[12][1] == f"{r.tokens.in_}/{r.tokens.out}" and float(cells[11][0] or "nan") == r.model_calls
        assert cells[8][1] == f"{r.content.verified}/{r.content.expected}"
    genre_rows = p.cells["genres"]
    offline = res.summary["offline"].per_genre
    assert res.models[0] == "offline"  # its table comes first
    shown = {genre_rows[i][1]: genre_rows[i:i + 10] for i in range(0, 10 * len(offline), 10)}
    assert set(shown) == set(offline)
    for name, g in offline.items():
        assert float(shown[name][1][0] or "nan") == g.runs and float(shown[name][2][0] or "nan") == g.delivered
    sigs = p.cells["signatures"]
    top = res.summary["offline"].failure_signatures
    assert top and sigs[0][1] == top[0].signature and float(sigs[1][0] or "nan") == top[0].count


def test_chart_has_one_point_per_model_with_whiskers(page: tuple[str, EvalResults, Path]) -> None:
    html, res, _ = page
    svg = html[html.index("<svg"):html.index("</svg>")]
    assert svg.count('class="point"') == len(res.models)
    assert svg.count("<line") >= 3 * len(res.models)
    assert "<script" not in svg and "http" not in svg.replace(HOSTILE, "")


def test_report_without_runs_or_summary_renders(tmp_path: Path) -> None:
    empty = EvalResults(suite=results([]).suite, models=["offline"], started_at=0.0)
    page = render_report(empty, tmp_path)
    assert "none" in page and "<svg" in page


def test_write_report_never_writes_through_a_planted_link(tmp_path: Path) -> None:
    out = tmp_path / "out"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("keep", encoding="utf-8")
    (out / "report.html").symlink_to(victim)
    res = results(suite_rows())
    (out / "results.json").write_text(res.dump_json(), encoding="utf-8")
    path = write_report(out)
    assert victim.read_text(encoding="utf-8") == "keep"
    assert not path.is_symlink() and path.read_text(encoding="utf-8").startswith("<!doctype html>")
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []

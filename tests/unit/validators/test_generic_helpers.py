"""Pure parts of generic-mode validation: built-vs-source detection, control planning, adjacency, budgets, and
how blocked outside requests are judged."""

from __future__ import annotations

import asyncio
import functools
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tests.fixtures.fixture_games import GAMES
from tier2.packs import load_pack
from tier2.settings.loader import REPO_ROOT, Policy
from tier2.validators.controls import Controls, adjacent_pair, motion_axis, parse_controls, plan_actions
from tier2.validators.l1.runtime_gates import no_errors
from tier2.validators.probing import MAX_BUDGET_FACTOR, budget_limit, run_bounded
from tier2.validators.runner import apply_verdicts, needs_webgl
from tier2.validators.site import classify_site, engine_evidence, url_evidence
from tier2.validators.trace import InputProbe, PlayTrace

PACK = load_pack(REPO_ROOT / "capability_packs", "phaser")


def _site(tmp_path: Path, html: str, files: dict[str, str]) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "index.html").write_text(html)
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def test_vite_dist_is_a_built_site() -> None:
    folder = GAMES / "vite-dist"
    kind = classify_site(folder, (folder / "index.html").read_text())
    assert kind.kind == "built"
    assert kind.entries == ["/assets/index-C4tLq9Zx.js"]
    assert any("hashed" in e for e in kind.evidence) and any("package.json" in e for e in kind.evidence)


def test_bundle_that_contains_phaser_is_reported(tmp_path: Path) -> None:
    site = _site(tmp_path, '<script type="module" src="./assets/app.js"></script>',
                 {"assets/app.js": 'var C={VERSION:"3.80.1"};console.log("Phaser v"+C.VERSION);'})
    kind = classify_site(site, (site / "index.html").read_text(), [PACK.adapter])
    assert kind.kind == "built" and any("already contains Phaser" in e for e in kind.evidence)
    assert classify_site(site, (site / "index.html").read_text()).evidence == ["every module runs unbundled",
                                                                               "no package.json beside index.html"]


def test_the_engine_is_chosen_by_the_scripts_the_page_loads(tmp_path: Path) -> None:
    site = _site(tmp_path / "a", '<script src="lib/engine.min.js?v=2"></script><script src="https://x/y.js"></script>',
                 {"lib/engine.min.js": 'window.Phaser={VERSION:"3.55.2"};', "other.js": "Phaser v3.1.0"})
    texts = engine_evidence([site])
    assert texts == ['window.Phaser={VERSION:"3.55.2"};'] and PACK.adapter.detects(texts[0])
    plain = _site(tmp_path / "b", '<script src="game.js"></script>', {"game.js": "const ctx = c.getContext('2d');"})
    assert not any(PACK.adapter.detects(t) for t in engine_evidence([plain]))


def test_a_loopback_url_shows_its_engine_by_the_scripts_its_page_loads(tmp_path: Path) -> None:
    site = _site(tmp_path, '<script src="/lib/engine.js"></script><script src="http://elsewhere.test/x.js"></script>'
                           '<script type="module" src="./assets/index-Ab12Cd34.js"></script>',
                 {"lib/engine.js": 'window.Phaser={VERSION:"3.55.2"};', "assets/index-Ab12Cd34.js": "run();"})

    class Quiet(SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/index.html"
        texts = url_evidence(url)
        missing = url_evidence(url.replace("index.html", "nothing.html"))
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
    assert texts == ['window.Phaser={VERSION:"3.55.2"};', "run();"]  # its own origin only, in page order
    assert PACK.adapter.detects(texts[0]) and missing == []


def test_bare_import_deep_in_the_graph_makes_a_source_project(tmp_path: Path) -> None:
    site = _site(tmp_path, '<body><script type="module" src="/src/main.js"></script></body>', {
        "src/main.js": "import { Play } from './scenes/Play.js';\nnew Play();\n",
        "src/scenes/Play.js": "import Phaser from 'phaser';\nexport class Play extends Phaser.Scene {}\n",
        "package.json": "{}"})
    kind = classify_site(site, (site / "index.html").read_text(), [PACK.adapter])
    assert kind.kind == "source"
    assert "bare module 'phaser'" in kind.evidence[0] and "src/scenes/Play.js" in kind.evidence[0]


def test_extensionless_import_and_typescript_are_source(tmp_path: Path) -> None:
    a = _site(tmp_path / "a", '<script type="module" src="src/main.js"></script>',
              {"src/main.js": "import './boot';", "src/boot.js": ""})
    b = _site(tmp_path / "b", '<script type="module" src="/src/main.ts"></script>', {"src/main.ts": ""})
    assert classify_site(a, (a / "index.html").read_text()).kind == "source"
    assert classify_site(b, (b / "index.html").read_text()).kind == "source"


def test_an_import_inside_a_bundles_message_text_is_not_an_import(tmp_path: Path) -> None:
    # a built engine chunk that tells the reader what to import (a warning's template literal): still a built site
    warning = "if(!y[r]){L(`Unable to assign BlendMode: '${r}'. You may want to include: import 'eng/blend-modes'`);}"
    site = _site(tmp_path / "a", '<script type="module" src="./assets/index-D1z7YMBV.js"></script>',
                 {"assets/index-D1z7YMBV.js": 'import"./chunk-B783zOdI.js";export{a as b};',
                  "assets/chunk-B783zOdI.js": warning + "\nconsole.log(1);"})
    assert classify_site(site, (site / "index.html").read_text()).kind == "built"
    # real statements still count, minified or not, with a comment or an import attribute after them
    for stmt in ('import{a as b}from"eng";b();', "import 'eng' // the engine\n", "import x from 'eng'\n",
                 'import cfg from "eng" with {type: "json"};'):
        src = _site(tmp_path / str(abs(hash(stmt))), '<script type="module" src="main.js"></script>', {"main.js": stmt})
        assert classify_site(src, (src / "index.html").read_text()).kind == "source", stmt


def test_a_game_refused_webgl_that_never_booted_is_replayed_on_the_default_renderer() -> None:
    smoke = PlayTrace(mode="generic", default_renderer={"booted": True, "renderer": "webgl"})
    # an engine with no Canvas renderer: its boot error names neither WebGL nor a shader
    canvas = PlayTrace(mode="generic", errors=["console.error: Error: Unable to auto-detect a suitable renderer."],
                       webgl_refused=True)
    assert needs_webgl(canvas, smoke)
    assert not needs_webgl(PlayTrace(mode="generic", webgl_refused=True), PlayTrace(default_renderer={"booted": False}))
    assert not needs_webgl(PlayTrace(mode="generic"), smoke)  # never asked for WebGL: a fault of its own


def test_plain_script_tag_game_is_built(tmp_path: Path) -> None:
    site = _site(tmp_path, '<script src="lib/phaser.min.js"></script><script src="game.js"></script>', {})
    assert classify_site(site, (site / "index.html").read_text(), [PACK.adapter]).kind == "built"


def test_registered_keys_are_named_for_the_browser() -> None:
    controls = parse_controls({"codes": [16, 32, 37, 38, 39, 40, 87], "names": ["Enter", "KeyA", "#13"],
                               "pointer": False, "interactive": [], "objects": []})
    assert controls.keys == ["Enter", "KeyA", "Shift", "Space", "ArrowLeft", "ArrowUp", "ArrowRight", "ArrowDown",
                             "KeyW"]


def test_a_game_moving_sideways_gets_the_perpendicular_keys_first() -> None:
    cursors = Controls(keys=["Shift", "Space", "ArrowLeft", "ArrowUp", "ArrowRight", "ArrowDown"])
    assert plan_actions(cursors, "x")[:3] == ["ArrowUp", "ArrowDown", "Space"]
    assert plan_actions(cursors, "y")[:2] == ["ArrowLeft", "ArrowRight"]
    assert plan_actions(cursors, None)[0] == "Space"  # a still screen: start keys first
    assert plan_actions(cursors, None)[-1] == "Shift"  # modifiers last
    # started again after the game ended: what was not tried yet comes first
    assert plan_actions(cursors, "x", tried=("ArrowUp", "ArrowDown"))[:1] == ["Space"]


def test_pointer_games_get_clicks_pairs_and_drags() -> None:
    board = Controls(interactive=[(100.0 + 60 * c, 100.0 + 60 * r, 56.0, 56.0) for r in range(3) for c in range(3)],
                     pointer=True)
    order = plan_actions(board, None)
    assert order[0] == "click-interactive" and {"click-pair", "drag-pair", "click-grid"} <= set(order)


def test_adjacent_pair_is_two_neighbouring_tiles_avoiding_the_selected_one() -> None:
    tiles = [(100.0 + 60 * c, 100.0 + 60 * r, 56.0, 56.0) for r in range(3) for c in range(3)]
    (ax, ay), (bx, by) = adjacent_pair(tiles, avoid=(100.0, 100.0))
    assert abs(ax - bx) + abs(ay - by) == 60  # neighbours, not two tiles apart
    assert (100.0, 100.0) not in {(ax, ay), (bx, by)}
    assert adjacent_pair([(10.0, 10.0, 5.0, 5.0), (400.0, 300.0, 5.0, 5.0)]) is None


def test_motion_axis_from_two_snapshots() -> None:
    before = {"objects": {"a": {"x": 10, "y": 50}, "b": {"x": 0, "y": 0}}}
    assert motion_axis(before, {"objects": {"a": {"x": 30, "y": 50}, "b": {"x": 0, "y": 0}}}) == "x"
    assert motion_axis(before, {"objects": {"a": {"x": 10, "y": 90}, "b": {"x": 0, "y": 0}}}) == "y"
    assert motion_axis(before, before) is None


def test_budget_scales_with_frame_cost_and_is_bounded() -> None:
    assert budget_limit(45, None) == 45 and budget_limit(45, 2.0) == 45
    assert budget_limit(45, 12.0) == 90
    assert budget_limit(45, 10_000.0) == 45 * MAX_BUDGET_FACTOR


def _played(mode: str, reacts: bool) -> PlayTrace:
    probe = InputProbe(label="Space", key="Space", before={"a": 1}, idle_after={"a": 1},
                       after={"a": 2 if reacts else 1}, frames_to_react=1 if reacts else None)
    return PlayTrace(mode=mode, booted=True, loaded=True, inputs=[probe],
                     blocked=["https://fonts.googleapis.com/css2?family=X [stylesheet]"])


def test_blocked_requests_are_warnings_for_a_generic_game_that_plays() -> None:
    result = apply_verdicts(no_errors(_played("generic", reacts=True)), "generic", Policy())
    assert result.passed and result.findings[0].severity == "warning"
    assert result.findings[0].rule == "l1.no_errors.blocked_request"
    assert result.evidence["blocked_requests"]


def test_blocked_requests_fail_a_tier2_game_or_a_game_that_does_not_play() -> None:
    assert not apply_verdicts(no_errors(_played("contract", reacts=True)), "contract", Policy()).passed
    assert not apply_verdicts(no_errors(_played("generic", reacts=False)), "generic", Policy()).passed


class _Page:
    """Just enough of a `GameSession` for `run_bounded`: frame counters that advance (or not) with each look."""

    def __init__(self, progressing: bool) -> None:
        from tier2.browser.session import PageLog
        self.progressing, self.frames, self.frame_ms, self.step_timeout_s = progressing, 0, 5.0, 1.0
        self.log = PageLog()

    async def frame_cost(self, timeout_s: float | None = None, second_look: bool = True) -> tuple[int, float]:
        self.frames += 60 if self.progressing else 0
        return self.frames, self.frames * 5.0

    async def latched_errors(self) -> list[str]:
        return []

    async def dialogs(self) -> list[str]:
        return []


async def test_a_page_still_progressing_at_the_limit_gets_another_period_whatever_its_frame_cost() -> None:
    # 5 ms frames earn no raise by cost; the play takes 1.6 periods of wall time (a loaded machine's round trips)
    page, trace = _Page(progressing=True), PlayTrace(mode="generic")
    timed_out, errors, _ = await run_bounded(page, asyncio.sleep(1.6), 1.0, trace=trace)  # type: ignore[arg-type]
    assert timed_out is None and errors == []
    assert trace.budget is not None and trace.budget["raised"] and trace.budget["limit_s"] == 2.0
    assert any("slow, not hung" in n for n in trace.notes)


class _LatePage(_Page):
    """Answers without new frames at the first look (a loaded machine starved it), progresses at the second."""

    def __init__(self) -> None:
        super().__init__(progressing=True)
        self.looks = 0

    async def frame_cost(self, timeout_s: float | None = None, second_look: bool = True) -> tuple[int, float]:
        self.looks += 1
        if self.looks == 1:
            return self.frames, self.frames * 5.0
        return await super().frame_cost(timeout_s, second_look)


async def test_a_page_starved_at_one_look_is_not_hung_when_a_second_look_sees_it_progress() -> None:
    page, trace = _LatePage(), PlayTrace(mode="generic")
    timed_out, _, _ = await run_bounded(page, asyncio.sleep(1.5), 1.0, trace=trace)  # type: ignore[arg-type]
    assert timed_out is None and page.looks >= 2
    assert trace.budget is not None and trace.budget["machine_load"] >= 1.0


def test_the_budget_cap_scales_with_the_machine_load() -> None:
    assert budget_limit(45, 10_000.0, load=3.0) == 45 * MAX_BUDGET_FACTOR * 3
    assert budget_limit(45, 12.0, load=3.0) == 90  # the frame cost, not the load, sets the limit below the cap


class _SlowAnswer:
    """A Playwright page whose evaluate answers after ``delay_s`` (None: never)."""

    def __init__(self, delay_s: float | None) -> None:
        self.delay_s = delay_s

    async def evaluate(self, expression: str, arg: object = None) -> int:  # Playwright's Page.evaluate
        await asyncio.sleep(self.delay_s if self.delay_s is not None else 3600)
        return 7


def _session(page: _SlowAnswer):
    from tier2.browser.session import GameSession
    s = GameSession.__new__(GameSession)
    s.page, s.step_timeout_s, s.second_looks = page, 0.3, 0  # type: ignore[assignment]
    return s


async def test_a_late_answer_gets_a_second_look_and_no_answer_is_a_timeout(monkeypatch) -> None:
    import tier2.browser.session as session
    monkeypatch.setattr(session, "machine_load_factor", lambda: 2.0)
    late = _session(_SlowAnswer(0.45))  # later than the bound, within the second look (0.3 s x load 2)
    assert await late.evaluate("() => 7") == 7 and late.second_looks == 1
    never = _session(_SlowAnswer(None))
    started = asyncio.get_running_loop().time()
    try:
        await never.evaluate("() => 7")
        raise AssertionError("no answer must time out")
    except TimeoutError:
        pass
    assert never.second_looks == 1 and asyncio.get_running_loop().time() - started < 5
    looked = _session(_SlowAnswer(0.45))  # a caller that is a look itself: no second one
    try:
        await looked.evaluate("() => 7", second_look=False)
        raise AssertionError("a look without a second one must time out at its bound")
    except TimeoutError:
        assert looked.second_looks == 0


async def test_a_page_that_stops_producing_frames_is_hung_after_a_second_look() -> None:
    page = _Page(progressing=False)  # it answers, but its frame counter never moves
    timed_out, _, _ = await run_bounded(page, asyncio.sleep(30), 0.5)  # type: ignore[arg-type]
    assert timed_out is not None and "stopped answering or producing frames" in timed_out

"""The writer's EngineDocs tool (hostile arguments, bounded answers) and the docs-hint layer's note for a failing
result, on the real pack index."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from agentscope.message import TextBlock, ToolResultState
from agentscope.tool import ToolResponse

from tier2.events import DocsHint
from tier2.learning.docs_hints import EngineDocsMiddleware, docs_hint
from tier2.packs import Pack
from tier2.packs.retrieval import DocsSource, load_docs_index
from tier2.settings.policy import EngineDocsPolicy
from tier2.tools.docs import MAX_QUERY_CHARS, EngineDocsTool, make_docs_tools


def _text(chunk: Any) -> str:
    return "\n".join(b.text for b in chunk.content if isinstance(b, TextBlock))


@pytest.fixture
def tool(pack: Pack, tmp_path: Path) -> EngineDocsTool:
    [t] = make_docs_tools(pack, tmp_path)
    assert isinstance(t, EngineDocsTool) and t.name == "EngineDocs" and t.is_read_only
    return t


@pytest.mark.parametrize("args, why", [
    ({}, "`query` must be a non-empty string"),
    ({"query": ""}, "`query` must be a non-empty string"),
    ({"query": ["this.add"]}, "`query` must be a non-empty string"),
    ({"query": "x" * (MAX_QUERY_CHARS + 1)}, f"at most {MAX_QUERY_CHARS}"),
    ({"query": "sprite", "top_k": 0}, "`top_k` must be an integer from 1 to 8"),
    ({"query": "sprite", "top_k": 9}, "`top_k` must be an integer from 1 to 8"),
    ({"query": "sprite", "top_k": "3"}, "`top_k` must be an integer"),
    ({"query": "sprite", "top_k": True}, "`top_k` must be an integer"),
    ({"query": "sprite", "top_k": 2.5}, "`top_k` must be an integer"),
    ({"query": "sprite", "path": "/etc/passwd"}, "unknown argument(s) path"),
])
async def test_hostile_arguments_are_refused_with_a_reason(tool: EngineDocsTool, args: dict, why: str) -> None:
    chunk = await tool.call(**args)
    assert chunk.state == ToolResultState.ERROR and why in _text(chunk)


async def test_answers_are_ranked_and_bounded(tool: EngineDocsTool) -> None:
    chunk = await tool.call(query="this.physics.add.sprit is not a function", top_k=3)
    text = _text(chunk)
    assert chunk.state == ToolResultState.SUCCESS
    assert chunk.metadata["sections"][0] == "Phaser.Physics.Arcade.Factory#sprite"
    assert text.startswith("Engine docs (phaser 3.90.0), top 3:")
    assert "sprite(x: number, y: number, key: string" in text and "phaser.d.ts:" in text
    big = await tool.call(query="sprite texture frame animation", top_k=8)
    assert len(_text(big)) <= 6500 and len(big.metadata["sections"]) == 8
    none = await tool.call(query="zzqxv wvvkq")
    assert none.state == ToolResultState.SUCCESS and "No section" in _text(none)


async def test_a_pack_without_a_docs_facet_gives_no_tool(pack: Pack, tmp_path: Path) -> None:
    bare = dataclasses.replace(pack, root=tmp_path)
    assert make_docs_tools(bare, tmp_path) == []
    chunk = await EngineDocsTool(DocsSource(bare, tmp_path)).call(query="sprite")
    assert chunk.state == ToolResultState.ERROR and "not available" in _text(chunk)


def test_the_hint_for_a_failing_result(pack: Pack, tmp_path: Path) -> None:
    index = load_docs_index(pack, tmp_path)
    failing = ("GAME FAILED the L1 gates (120 ms).\n- FAIL l1.no_errors: 1 error(s) during play\n"
               "    pageerror: Cannot read properties of undefined (reading 'setVelocityX')\n"
               "- FAIL l1.boots: game did not reach its first scene")
    note, mentions, ids = docs_hint(index, failing, sections=2, limit=2500)
    assert mentions == ["setVelocityX"] and ids == ["Phaser.Physics.Arcade.Sprite#setVelocityX",
                                                    "Phaser.Physics.Arcade.Body#setVelocityX"]
    assert "setVelocityX(x: number): this" in note and len(note) <= 2500
    assert docs_hint(index, "- FAIL l1.economy: no profitable strategy; see dist/bundle.js", 2, 2500)[0] == ""
    short, _, few = docs_hint(index, failing, sections=2, limit=400)
    assert len(short) <= 400 and len(few) == 1


class _Call:
    def __init__(self, name: str) -> None:
        self.name = name


async def _through(layer: EngineDocsMiddleware, name: str, response: ToolResponse) -> ToolResponse:
    async def tool(**_: Any):
        yield response

    out = [c async for c in layer.on_acting(None, {"tool_call": _Call(name)}, tool)]
    assert len(out) == 1
    return out[0]


async def test_the_layer_appends_to_failing_checks_only_and_records_it(pack: Pack, tmp_path: Path) -> None:
    events: list[DocsHint] = []

    async def emit(event: Any) -> None:
        events.append(event)

    layer = EngineDocsMiddleware(DocsSource(pack, tmp_path), EngineDocsPolicy(), "r-1", emit)
    error = "BUILD OK\n- FAIL l1.no_errors:\n    pageerror: this.input.keyboard.createCursorKey is not a function"
    failed = ToolResponse(id="c1", content=[TextBlock(text=error)], state=ToolResultState.ERROR, metadata={"ok": False})
    out = await _through(layer, "RunGame", failed)
    assert out.state == ToolResultState.ERROR and out.metadata["ok"] is False
    assert out.metadata["engine_docs"]["sections"][0] == "Phaser.Input.Keyboard.KeyboardPlugin#createCursorKeys"
    assert out.content[0].text.startswith(error) and "createCursorKeys(): Phaser.Types.Input" in out.content[0].text
    assert [(e.tool, e.sections[0]) for e in events] == [
        ("RunGame", "Phaser.Input.Keyboard.KeyboardPlugin#createCursorKeys")]
    # a passing check, another tool, a replayed result, hints off: untouched
    passed = failed.model_copy(update={"state": ToolResultState.SUCCESS})
    assert await _through(layer, "RunGame", passed) is passed
    assert await _through(layer, "Read", failed) is failed
    replayed = failed.model_copy(update={"metadata": {"replayed": True}})
    assert await _through(layer, "Build", replayed) is replayed
    off = EngineDocsMiddleware(DocsSource(pack, tmp_path), EngineDocsPolicy(hints=False), "r-1", emit)
    assert await _through(off, "RunGame", failed) is failed
    assert len(events) == 1


def test_the_run_puts_the_hint_layer_outside_the_case_library(pack: Pack, tmp_path: Path) -> None:
    from types import SimpleNamespace

    from agentscope.middleware import MiddlewareBase

    from tier2.middleware import RunLayers
    from tier2.runs.loop.addons.docs_hints import docs_hints
    from tier2.runs.loop.layers import Additions, add_layers
    from tier2.runs.loop.setup import writer_additions
    from tier2.settings.loader import Settings

    async def emit(event: Any) -> None: ...

    library = MiddlewareBase()
    ctx: Any = SimpleNamespace(rt=SimpleNamespace(pack=pack, settings=Settings(workspaces=tmp_path)), pack=pack,
                               policy=SimpleNamespace(engine_docs=EngineDocsPolicy()), run_id="r-1", emit=emit)
    docs = docs_hints(ctx)
    [layer] = docs.learning
    layers = add_layers(RunLayers(), writer_additions(docs=docs, library=Additions(learning=(library,))))
    assert layer is not None and list(layers.learning) == [layer, library]  # outer: it reads the library's result
    ctx.policy = SimpleNamespace(engine_docs=EngineDocsPolicy(hints=False))
    assert docs_hints(ctx) == Additions()


def test_the_progress_display_shows_a_hint() -> None:
    import io

    from tier2.client.display import ProgressDisplay

    out = io.StringIO()
    with ProgressDisplay(out) as display:
        display.feed(1, DocsHint(run_id="r-1", tool="RunGame", mentions=["t.add.text(...).setOrign"],
                                 sections=["Phaser.GameObjects.Text#setOrigin"], at=1_700_000_000.0))
    assert "docs · RunGame result + Phaser.GameObjects.Text#setOrigin" in out.getvalue()

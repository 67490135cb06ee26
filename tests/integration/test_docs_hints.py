"""Engine-doc hints in a whole run on real parts (Redis, esbuild, Chromium); only the model is scripted.

A writer puts a real engine error in the game (a typo'd method on a Text object) and runs it: the failing RunGame
result it reads next ends with the docs of the API the error names (the pack's index, generated from the installed
engine's type declarations), the run records a `docs_hint` event, and the writer's EngineDocs tool answers too.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tier2.events import DocsHint
from tier2.runs import RunRequest, execute_run
from tier2.testing import FakeOpenAIServer, Reply

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
GOOD = "    this.started = false;\n"
BAD = GOOD + "    this.add.text(0, 0, 'v').setOrign(0.5);\n"


def _config_route(config_dir: Path, name: str, base_url: str) -> None:
    (config_dir / "policy" / "zz-test.yaml").write_text(
        f"models:\n  {name}:\n    kind: openai\n    model: fake-model\n    base_url: {base_url}\n"
        f"    api_key_env: TIER2_TEST_FAKE_KEY\n    max_retries: 0\n"
        "budget: {usd: null}\n")


def _tool_texts(body: dict) -> list[str]:
    out = []
    for m in body["messages"]:
        if m["role"] == "tool":
            content = m["content"]
            out.append(content if isinstance(content, str) else " ".join(p.get("text", "") for p in content))
    return out


async def test_a_failing_run_game_names_an_api_and_gets_its_docs(runtime, config_dir, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("TIER2_TEST_FAKE_KEY", "sk-test")

    def writer(body: dict) -> Reply:
        system = body["messages"][0]["content"]
        system = system if isinstance(system, str) else " ".join(p.get("text", "") for p in system)
        project = re.search(r"game project at (\S+?) \(the project directory\)", system).group(1)
        menu = f"{project}/src/scenes/Menu.js"
        steps = [
            Reply(tool_calls=[("Read", {"file_path": menu})]),
            Reply(tool_calls=[("Edit", {"file_path": menu, "old_string": GOOD, "new_string": BAD})]),
            Reply(tool_calls=[("Build", {})]),
            Reply(tool_calls=[("RunGame", {})]),
            Reply(tool_calls=[("EngineDocs", {"query": "Text setOrigin", "top_k": 2})]),
            Reply(tool_calls=[("Read", {"file_path": menu})]),
            Reply(tool_calls=[("Edit", {"file_path": menu, "old_string": BAD, "new_string": GOOD})]),
            Reply(tool_calls=[("Build", {})]),
            Reply(tool_calls=[("RunGame", {})]),
        ]
        done = len(_tool_texts(body))
        return steps[done] if done < len(steps) else Reply(text="The game is done.")

    with FakeOpenAIServer(writer) as srv:
        _config_route(config_dir, "docs-writer", srv.base_url)
        out = await execute_run(runtime, RunRequest(brief=POTION, out_dir=tmp_path / "g", model="docs-writer"))
        writer_requests = [b for b in srv.requests if "EngineDocs" in json.dumps(b.get("tools", []))]
    assert out.status == "delivered", out.stop_reason
    assert writer_requests, "the writer was not given the EngineDocs tool"
    # what the writer read after the failing RunGame: the failure, then the docs of the API it names
    texts = _tool_texts(writer_requests[4])
    run_game = texts[3]
    assert "GAME FAILED" in run_game and "setOrign" in run_game
    assert "Engine docs for the API this failure names" in run_game
    docs_part = run_game.split("Engine docs for the API this failure names", 1)[1]
    assert "Phaser.GameObjects.Text#setOrigin" in docs_part and "setOrigin(x?: number, y?: number): this" in docs_part
    # the writer's own lookup
    assert "Phaser.GameObjects.Text#setOrigin" in _tool_texts(writer_requests[5])[4]
    # the passing re-check gets no hint; the run records the one it gave
    last = _tool_texts(writer_requests[-1])
    assert "GAME PASSED" in last[-1] and "Engine docs for the API" not in last[-1]
    events = [e for _, e in await runtime.store.read_events(out.run_id, after=0, count=10_000)]
    hints = [e for e in events if isinstance(e, DocsHint)]
    assert len(hints) == 1 and hints[0].tool == "RunGame"
    assert hints[0].sections[0] == "Phaser.GameObjects.Text#setOrigin"
    assert any("setOrign" in m for m in hints[0].mentions)

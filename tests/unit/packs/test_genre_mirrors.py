"""The genre mirrors the builders play their tables on (`tier2.validators.builder_gates`) are the games' rules:
the shop's, the clicker's and the platformer's ``sim.Play`` give the very snapshots the real
``template/src/state.js`` gives (run in node by each genre's ``tests/drive.mjs`` / ``tests/harness.mjs``), action
by action, on generated briefs' tables, through the genre probe's win and lose plays and a seeded random play.
(The puzzle's mirror wraps ``rules.Game``, compared with node in test_genre_puzzle_port.py.)"""

from __future__ import annotations

import importlib
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tier2.packs import load_pack
from tier2.testing.briefs import generated_briefs
from tier2.validators.latch import decide

pytestmark = pytest.mark.slow  # node processes, one per genre, driven action by action

ROOT = Path(__file__).resolve().parents[3]
PACK = load_pack(ROOT / "capability_packs", "phaser")
BRIEFS = 12
VILLAGERS = "a potion shop tycoon where I brew potions from herbs and sell them to villagers"


class Node:
    """One node process running the genre's drive.mjs (many table sets, one process)."""

    def __init__(self, genre: str) -> None:
        node = shutil.which("node")
        assert node is not None, "node is not on PATH"
        drive = PACK.genres[genre].root / "tests" / "drive.mjs"
        self.proc = subprocess.Popen([node, "--no-warnings", str(drive)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def ask(self, msg: dict[str, Any]) -> Any:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, self.proc.stderr.read() if self.proc.stderr else "drive.mjs ended"
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None and self.proc.stderr is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=30)
        self.proc.stdout.close()
        self.proc.stderr.close()


def _tables(genre: str, brief: str) -> dict[str, Any]:
    g = PACK.genres[genre]
    builder: Any = g.module("builder")
    # the shop's derived tables too: those the builder rejects must be judged on the same rules
    return builder.derive_game(brief) if genre == "shop" else g.build_tables(brief)


def _lockstep(genre: str, node: Node, tables: dict[str, Any], choose: Any, limit: int) -> int:
    mirror = importlib.import_module(f"{PACK.genres[genre].package}.sim").Play(tables)
    first = node.ask({"tables": tables})
    assert mirror.actions() == first["actions"]
    snap = mirror.start()
    assert snap == first["state"]
    frames = PACK.genres[genre].spec.probe.action_frames
    n = 0
    while snap["outcome"] == "running" and n < limit:
        step = choose(snap, mirror.actions(), tables, frames)
        if isinstance(step, str):
            break
        n += 1
        snap = mirror.act(*step)
        assert snap == node.ask({"action": step[0], "frames": step[1]}), (n, step)
    return n


@pytest.mark.parametrize("genre", ["shop", "clicker"])
def test_the_mirror_plays_as_the_real_rules(genre: str) -> None:
    g = PACK.genres[genre]
    win, lose = g.probe_fns()
    node = Node(genre)
    played = 0
    try:
        for i, brief in enumerate([VILLAGERS, *generated_briefs(g, BRIEFS, seed=5)]):
            tables = _tables(genre, brief)
            for policy in (win, lose):
                played += _lockstep(genre, node, tables,
                                    lambda s, a, t, f, p=policy: decide(p, s, a, t, f), 400)
            rng = random.Random(i)

            def wander(s: dict[str, Any], a: dict[str, Any], t: dict[str, Any], f: int,
                       rng: random.Random = rng) -> tuple[str, int]:
                return rng.choice([n for n in sorted(a) if n not in ("start", "abandon")] + ["wait"]), \
                    rng.choice((1, 3, 12, 60))

            played += _lockstep(genre, node, tables, wander, 150)
    finally:
        node.close()
    assert played > BRIEFS * 50


def test_the_platformer_mirror_plays_as_the_real_rules(tmp_path: Path) -> None:
    """``sim.Play`` against ``tests/harness.mjs`` (one node process per table set; its snapshots carry no scene)."""
    g = PACK.genres["platformer"]
    win, lose = g.probe_fns()  # imports the genre's package
    play_cls = importlib.import_module(f"{g.package}.sim").Play
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    frames, played = g.spec.probe.action_frames, 0
    for i, brief in enumerate(generated_briefs(g, 6, seed=5)):
        tables = g.build_tables(brief)
        data = tmp_path / f"{i}.json"
        data.write_text(json.dumps(tables))
        rng = random.Random(i)
        plays: list[Any] = [
            lambda s, a, t, f: decide(win, s, a, t, f), lambda s, a, t, f: decide(lose, s, a, t, f),
            lambda s, a, t, f, rng=rng: (rng.choice(["left", "right", "jump", "wait"]), rng.choice((1, 4, 12, 30)))]
        for choose in plays:
            mirror = play_cls(tables)
            with subprocess.Popen([node, str(g.root / "tests" / "harness.mjs"), str(data)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True) as proc:
                assert proc.stdin is not None and proc.stdout is not None
                snap = mirror.start()
                assert {k: v for k, v in snap.items() if k != "scene"} == json.loads(proc.stdout.readline())
                n = 0
                while snap["outcome"] == "running" and n < 300:
                    step = choose(snap, mirror.actions(), tables, frames)
                    if isinstance(step, str):
                        break
                    n += 1
                    snap = mirror.act(*step)
                    proc.stdin.write(json.dumps({"action": step[0], "frames": step[1],
                                                 "gap": 0 if step[0] == "wait" else 1}) + "\n")
                    proc.stdin.flush()
                    real = json.loads(proc.stdout.readline())
                    assert {k: v for k, v in snap.items() if k != "scene"} == real, (brief, n, step)
                proc.stdin.close()
            played += n
    assert played > 6 * 50

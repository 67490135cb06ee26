"""`tier2 generate` through the real CLI: embedded Redis, esbuild, Chromium; the game is then played again
independently in Chromium. Failure paths give clear errors and non-zero exits."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.e2e.helpers import play_in_chromium, project_tables, run_cli

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.browser, pytest.mark.redis]

POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"
BAKERY = "a cozy bakery tycoon: bake bread and cakes, fill customer orders, don't go broke"


@pytest.fixture(scope="module")
def potion(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict, str]:
    """The README's main job with the embedded defaults (its own redis-server child, offline model)."""
    root = tmp_path_factory.mktemp("cli")
    proc = run_cli("generate", POTION, "--out", str(root / "potion"), "--json",
                   env={"TIER2_WORKSPACES": str(root / "ws")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    return root / "potion", json.loads(proc.stdout), proc.stderr


def test_generate_delivers_a_verified_game(potion) -> None:
    project, delivery, progress = potion
    assert delivery["status"] == "delivered"
    for key in ("run_id", "project_id", "stop_reason", "source", "build", "preview", "verification", "screenshot"):
        assert key in delivery
    assert json.loads((project / "delivery.json").read_text()) == delivery
    assert delivery["source"]["sha256"] and all(f["sha256"] for f in delivery["source"]["files"])
    assert Path(delivery["build"]["bundle_path"]).exists() and delivery["build"]["bundle_sha256"]
    assert Path(delivery["screenshot"]).stat().st_size > 1000
    gates = {g["id"]: g for g in delivery["verification"]["gates"]}
    assert all(g["passed"] for g in gates.values() if g["layer"] == "L1" and g["mode"] == "enforce")
    assert {"l1.builds", "l1.boots", "l1.no_errors", "l1.frames_advance", "l1.canvas_not_blank",
            "l1.input_changes_state", "l1.latch_split", "l1.legible", "l1.data_linkage", "l1.economy",
            "l1.engine_calls", "l3.visual_score"} <= set(gates)
    assert delivery["usage"]["estimated"] and delivery["usage"]["output_tokens"] > 0
    assert delivery["usage"]["cost_usd"] > 0 and delivery["usage"]["cost_by_agent"]["writer"] > 0
    final = json.loads(Path(delivery["verification"]["report"]).read_text())
    assert any("verification reused" in n for n in final["notes"])  # RunGame checked these exact sources
    # progress was visible while it ran: phases, steps and tools
    assert "phase implement" in progress and "Build → success" in progress and "RunGame → success" in progress
    # the embedded redis child kept its data under the workspaces root and is gone
    assert (project.parent / "ws" / ".redis" / "default" / "appendonlydir").exists() or \
        any((project.parent / "ws" / ".redis" / "default").glob("appendonly*"))


async def test_the_game_plays_in_chromium(potion, pool) -> None:
    project, delivery, _ = potion
    seen = await play_in_chromium(pool, delivery["preview"]["url"])
    assert seen["errors"] == []
    assert seen["after"]["money"] < seen["before"]["money"]
    assert "potion" in json.dumps(project_tables(project)).lower()


def test_two_briefs_give_two_different_games(potion, tmp_path: Path) -> None:
    project, _, _ = potion
    proc = run_cli("generate", BAKERY, "--out", str(tmp_path / "bakery"), "--quiet",
                   env={"TIER2_WORKSPACES": str(tmp_path / "ws")})
    assert proc.returncode == 0, proc.stderr[-3000:]
    a, b = project_tables(project), project_tables(tmp_path / "bakery")
    assert a["theme.json"]["title"] != b["theme.json"]["title"]
    assert a["theme.json"]["palette"] != b["theme.json"]["palette"]
    assert {i["id"] for i in a["items.json"]["items"]} != {i["id"] for i in b["items.json"]["items"]}
    assert a["economy.json"] != b["economy.json"]


def _fails(proc, needle: str, code: int = 2) -> None:
    assert proc.returncode == code, (proc.returncode, proc.stderr)
    assert needle in proc.stderr, proc.stderr


def test_empty_brief_is_rejected(tmp_path: Path) -> None:
    _fails(run_cli("generate", "   ", env={"TIER2_WORKSPACES": str(tmp_path)}), "brief is empty")


def test_ten_megabyte_brief_is_rejected(tmp_path: Path) -> None:
    big = tmp_path / "brief.txt"
    big.write_bytes(b"potion shop " * 900_000)
    _fails(run_cli("generate", "--brief-file", str(big), env={"TIER2_WORKSPACES": str(tmp_path)}), "brief is over")
    _fails(run_cli("generate", "-", env={"TIER2_WORKSPACES": str(tmp_path)}, stdin=big.read_text()), "brief is over")


def test_unknown_model_route_is_rejected(tmp_path: Path, redis_url: str) -> None:
    proc = run_cli("generate", POTION, "--model", "nope", env={"TIER2_WORKSPACES": str(tmp_path),
                                                               "REDIS_URL": redis_url})
    _fails(proc, "unknown model route 'nope'")


def test_a_pack_not_allowed_is_rejected_before_anything_runs(tmp_path: Path, redis_url: str) -> None:
    proc = run_cli("generate", POTION, "--pack", "nope", env={"TIER2_WORKSPACES": str(tmp_path),
                                                              "REDIS_URL": redis_url})
    _fails(proc, "pack 'nope' is not in allowed_packs")
    assert not (tmp_path / "projects").exists() or not any((tmp_path / "projects").iterdir())


def test_missing_esbuild_is_a_setup_error(tmp_path: Path, redis_url: str) -> None:
    packs = tmp_path / "packs"
    shutil.copytree(Path("capability_packs"), packs, ignore=shutil.ignore_patterns("node_modules"))
    proc = run_cli("generate", POTION, env={"TIER2_WORKSPACES": str(tmp_path), "REDIS_URL": redis_url,
                                            "TIER2_PACKS_DIR": str(packs)})
    _fails(proc, "esbuild not found")


def test_missing_chromium_is_a_setup_error(tmp_path: Path, redis_url: str) -> None:
    proc = run_cli("generate", POTION, env={"TIER2_WORKSPACES": str(tmp_path), "REDIS_URL": redis_url,
                                            "TIER2_CHROMIUM": str(tmp_path / "no-chromium")})
    _fails(proc, "Chromium not found")


def test_unreachable_redis_is_a_setup_error(tmp_path: Path) -> None:
    proc = run_cli("generate", POTION, env={"TIER2_WORKSPACES": str(tmp_path), "REDIS_URL": "redis://127.0.0.1:1/0"})
    _fails(proc, "unreachable")


def test_existing_output_directory_is_not_overwritten(tmp_path: Path, redis_url: str) -> None:
    out = tmp_path / "taken"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    proc = run_cli("generate", POTION, "--out", str(out), env={"TIER2_WORKSPACES": str(tmp_path),
                                                               "REDIS_URL": redis_url})
    _fails(proc, "exists and is not empty")
    assert (out / "keep.txt").read_text() == "mine"

"""Markers cannot drift (tests/markers.py): a test that uses the Redis or Chromium fixtures, or starts redis-server,
Chromium, bubblewrap/docker or a tier2 process, without the marker that says so fails; so does a Redis test left
under tests/unit/ or an e2e test without `e2e`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.markers import fixture_problems, folder_problems, process_needs
from tier2.settings.loader import REPO_ROOT

TESTS = REPO_ROOT / "tests"


def test_what_each_started_process_asks_of_the_markers() -> None:
    py = sys.executable
    assert process_needs("/usr/bin/redis-server", ["/usr/bin/redis-server", "--port", "0"]) == (
        "redis-server", ("redis",))
    driver = "/x/site-packages/playwright/driver/node"
    assert process_needs(driver, [driver, "/x/site-packages/playwright/driver/package/cli.js", "run-driver"])[1] == (
        "browser",)
    assert process_needs("/usr/lib/chromium/chromium", ["chromium", "--headless"])[1] == ("browser",)
    for argv in (["bwrap", "--cap-drop", "ALL"], ["/usr/bin/dockerd", "--bridge=none"], [py, "-m", "tier2", "serve"],
                 [py, "-m", "pytest", "-q"], [py, "-u", "/repo/tests/integration/store/hammer.py"]):
        assert process_needs(argv[0], argv) is not None and process_needs(argv[0], argv)[1] == ("slow", "e2e"), argv
    for argv in (["/usr/bin/node", "--input-type=module", "-e", "1"], [py, "-c", "print(1)"],
                 [py, "/repo/ci/check_imports.py", "/tmp/t"], [py, "-I", str(REPO_ROOT / "tier2/tools/grep_helper.py")],
                 ["npm", "pack"], ["uname", "-p"]):
        assert process_needs(argv[0], argv) is None, argv


def test_the_fixtures_and_the_folder_decide_the_markers() -> None:
    assert fixture_problems(["tmp_path", "redis_url", "redis_server"], set()) == [
        "uses the `redis_server` fixture but has no `redis` marker"]
    assert fixture_problems(["redis_server", "pool"], {"redis", "browser"}) == []
    assert fixture_problems(["pool"], {"slow"}) == ["uses the `pool` fixture but has no `browser` marker"]
    assert folder_problems(TESTS / "unit" / "store" / "test_x.py", {"redis"})
    assert folder_problems(TESTS / "unit" / "store" / "test_x.py", {"slow"}) == []
    assert folder_problems(TESTS / "integration" / "store" / "test_x.py", {"redis"}) == []
    assert folder_problems(TESTS / "e2e" / "test_x.py", {"slow"}) == ["is under tests/e2e/ but has no `e2e` marker"]


SUITE = '''
import subprocess, sys
import pytest

def test_uses_redis_unmarked(redis_url):
    raise AssertionError("never runs: the redis-server is not started for an unmarked test")

def test_starts_a_nested_pytest_unmarked():
    subprocess.run([sys.executable, "-m", "pytest", "--version"], capture_output=True, check=True)

@pytest.mark.slow
def test_starts_a_nested_pytest_marked():
    subprocess.run([sys.executable, "-m", "pytest", "--version"], capture_output=True, check=True)
'''


@pytest.mark.slow   # a nested pytest session
def test_an_unmarked_test_fails_and_a_marked_one_passes(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "conftest.py").write_text(
        "from tests.conftest import (_markers_are_honest, pytest_runtest_setup, pytest_runtest_teardown,  # noqa\n"
        "                            redis_server, redis_url)  # noqa\n")
    (suite / "test_planted.py").write_text(SUITE)
    (suite / "pytest.ini").write_text("[pytest]\nmarkers =\n    redis: r\n    slow: s\n"
                                      "asyncio_default_fixture_loop_scope = function\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("PYTEST_XDIST_WORKER", None)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          "-p", "no:randomly", "-rA", "--basetemp", str(tmp_path / "base"), str(suite)],
                         cwd=suite, env=env, capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "ERROR at setup of test_uses_redis_unmarked" in text and "has no `redis` marker" in text, text
    assert not list((tmp_path / "base").glob("redis*")), "a redis-server was set up for an unmarked test"
    assert "ERROR at teardown of test_starts_a_nested_pytest_unmarked" in text, text
    assert "starts python -m pytest but has no `slow` or `e2e` marker" in text, text
    assert "PASSED test_planted.py::test_starts_a_nested_pytest_marked" in text, text
    assert "2 passed, 2 errors" in text, text  # the unmarked nested pytest passes its call, fails its teardown

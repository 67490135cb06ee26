"""A leak fails the test that made it (issue #29): the suite's teardown fixture collects garbage, so an unclosed file
left in a reference cycle is reported in its own test, never in the next one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tier2.settings.loader import REPO_ROOT

pytestmark = pytest.mark.slow  # a nested pytest process

SUITE = '''
import io, os

def test_leaks_a_file(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("x")
    holder = {"f": open(path, "rb")}   # never closed, and kept alive by a cycle until the GC runs
    holder["self"] = holder

def test_innocent_next(tmp_path):
    assert not list(tmp_path.iterdir())   # a fresh directory: nothing of the leaky test reaches it
'''


def test_a_leak_fails_its_own_test_not_the_next(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text("from tests.conftest import _leaks_fail_their_own_test  # noqa: F401\n")
    (tmp_path / "test_leaky.py").write_text(SUITE)
    (tmp_path / "pytest.ini").write_text("[pytest]\nasyncio_default_fixture_loop_scope = function\n"
                                         "filterwarnings =\n    error\n    ignore::DeprecationWarning\n")
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("PYTEST_XDIST_WORKER", None)
    out = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                          "-p", "no:randomly", "-rA", str(tmp_path)], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    text = out.stdout + out.stderr
    assert out.returncode == 1, text
    assert "ERROR at teardown of test_leaks_a_file" in text, text
    assert "PASSED test_leaky.py::test_innocent_next" in text, text
    assert "ResourceWarning" in text and "f.txt" in text, text

from __future__ import annotations

import os
from pathlib import Path

from tier2.middleware.cancel import CancelMiddleware
from tier2.middleware.order import build_middlewares
from tier2.middleware.path_guard import PathGuardMiddleware, inside


def test_inside_accepts_project_paths(tmp_path: Path) -> None:
    assert inside(str(tmp_path), str(tmp_path / "src" / "main.js"))
    assert inside(str(tmp_path), "data/items.json")
    assert inside(str(tmp_path), str(tmp_path))


def test_inside_rejects_traversal_and_symlink_escapes(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    assert not inside(str(project), str(project / ".." / "other.txt"))
    assert not inside(str(project), "/etc/passwd")
    assert not inside(str(project), str(tmp_path / "p-sibling" / "x"))
    os.symlink("/etc", project / "link")
    assert not inside(str(project), str(project / "link" / "passwd"))


def test_onion_order_is_declared_once() -> None:
    assert [type(m) for m in build_middlewares("/tmp/x")] == [CancelMiddleware, PathGuardMiddleware]

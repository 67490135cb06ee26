from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tier2.middleware.cancel import CancelMiddleware
from tier2.middleware.order import build_middlewares
from tier2.middleware.path_guard import PathGuardMiddleware, check_call, inside
from tier2.workspace.paths import PathRefused


def test_inside_accepts_absolute_project_paths(tmp_path: Path) -> None:
    assert inside(str(tmp_path), str(tmp_path / "src" / "main.js"))
    assert inside(str(tmp_path), str(tmp_path))


def test_inside_rejects_relative_traversal_and_symlink_escapes(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    assert not inside(str(project), "data/items.json")  # relative: the tool would resolve it elsewhere
    assert not inside(str(project), str(project / ".." / "other.txt"))
    assert not inside(str(project), "/etc/passwd")
    assert not inside(str(project), str(tmp_path / "p-sibling" / "x"))
    os.symlink("/etc", project / "link")
    assert not inside(str(project), str(project / "link" / "passwd"))


@pytest.mark.parametrize("raw", [
    '{"file_path": "/etc/passwd"',                     # no closing brace: AgentScope would repair it
    '["/etc/passwd"]', '"x"', "not json", "", "{" * 5000,
])
def test_arguments_that_do_not_parse_strictly_are_refused(tmp_path: Path, raw: str) -> None:
    with pytest.raises(PathRefused, match="valid JSON object"):
        check_call(str(tmp_path), "Read", raw if raw else "null")


def test_duplicate_keys_are_checked_as_the_tool_will_see_them(tmp_path: Path) -> None:
    raw = f'{{"file_path": "{tmp_path}/ok.txt", "file_path": "/etc/passwd"}}'
    with pytest.raises(PathRefused, match="outside"):
        check_call(str(tmp_path), "Read", raw)


@pytest.mark.parametrize(("name", "args", "why"), [
    ("Read", {}, "required"),
    ("Read", {"file_path": "src/main.js"}, "relative"),
    ("Write", {"file_path": "/tmp/x", "content": ""}, "outside"),
    ("Write", {"file_path": "{root}/.mcp", "content": "[]"}, "reserved"),
    ("Write", {"file_path": "{root}/dist/bundle.js", "content": ""}, "reserved"),
    ("Edit", {"file_path": "{root}/.tier2/r.json", "old_string": "a", "new_string": "b"}, "reserved"),
    ("Write", {"file_path": "{root}/src/a.js", "content": "x" * 101}, "limit"),
    ("Glob", {"pattern": "*.js"}, "required"),
    ("Glob", {"pattern": "/etc/*", "path": "{root}"}, "relative to path"),
    ("Glob", {"pattern": "../*", "path": "{root}"}, "relative to path"),
    ("Grep", {"pattern": "x", "path": "--pre=/bin/sh"}, "relative"),
    ("Grep", {"pattern": "x", "path": "{root}\u0000/x"}, "control"),
])
def test_each_path_argument_is_checked(tmp_path: Path, name: str, args: dict, why: str) -> None:
    filled = {k: v.replace("{root}", str(tmp_path)) if isinstance(v, str) else v for k, v in args.items()}
    with pytest.raises(PathRefused, match=why):
        check_call(str(tmp_path), name, json.dumps(filled), write_limit=100)


def test_allowed_calls_pass_and_tools_without_paths_only_need_valid_json(tmp_path: Path) -> None:
    assert check_call(str(tmp_path), "Write", json.dumps({"file_path": f"{tmp_path}/src/a.js", "content": "x"}))
    assert check_call(str(tmp_path), "Glob", json.dumps({"pattern": "src/**/*.js", "path": str(tmp_path)}))
    assert check_call(str(tmp_path), "Build", "{}") == {}
    with pytest.raises(PathRefused):
        check_call(str(tmp_path), "Build", "{")


def test_onion_order_is_declared_once() -> None:
    assert [type(m) for m in build_middlewares("/tmp/x")] == [CancelMiddleware, PathGuardMiddleware]

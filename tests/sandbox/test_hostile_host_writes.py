"""Issue #21 C1, end to end: in an ``isolated`` workspace the writer builds and plays its game, then its sandboxed
Bash replaces the names tier2 later writes from the host (``delivery.json``, ``screenshot.png``, ``.tier2`` and what
is under it, ``docs/design``, ``design``) with symlinks to a directory and a file outside the project, dangling
symlinks and FIFOs; the run then writes its final report and delivers. Nothing outside the project is written or
created, no host read blocks, and the run ends delivered. Real run session, real bubblewrap, real build and
Chromium; only the model is scripted."""

from __future__ import annotations

import json
import os
import shlex
import stat
from pathlib import Path
from typing import Any

import pytest
from agentscope.message import Msg, TextBlock, ToolCallBlock

from tests.hostile_fs import Outside, bounded
from tests.sandbox.conftest import skip_unless_kind
from tier2.runs import execute_run
from tier2.runs.request import RunRequest, new_run_id
from tier2.testing import ScriptedChatModel, tool_results

pytestmark = [pytest.mark.redis, pytest.mark.browser, pytest.mark.slow]
BRIEF = "a potion shop tycoon where I brew potions from herbs"


def _plants(variant: str, out: Outside) -> str:
    d, f = shlex.quote(str(out.dir)), shlex.quote(str(out.file))
    if variant == "links":  # symlinks to a file and to a directory outside the project
        return (f"ln -sfn {f} delivery.json && ln -sfn {f} screenshot.png && rm -rf .tier2 && ln -s {d} .tier2 && "
                f"mkdir -p docs && ln -sfn {d} docs/design && ln -sfn {d} design")
    if variant == "fifos":  # FIFOs and dangling symlinks
        return ("mkfifo delivery.json screenshot.png && rm -rf .tier2 && mkfifo .tier2 && mkdir -p docs && "
                f"mkfifo docs/design && ln -s {d}/nowhere/x design")
    # under a real .tier2: the report files, the screenshots' directory, tier2's records
    return ("mkdir -p .tier2/reports/final && "
            f"ln -sfn {f} .tier2/reports/final/report.json && ln -sfn {f} .tier2/reports/final/report.html && "
            f"mkfifo .tier2/reports/final/01-menu.png && ln -sfn {d} .tier2/design && ln -sfn {d} .tier2/artifacts && "
            f"ln -sfn {f} .tier2/project.json && ln -sfn {d}/nowhere delivery.json")


def _kind(path: Path) -> str:
    mode = os.lstat(path).st_mode
    return "link" if stat.S_ISLNK(mode) else "fifo" if stat.S_ISFIFO(mode) else \
        "dir" if stat.S_ISDIR(mode) else "file"


@pytest.mark.parametrize("variant", ["links", "fifos", "deep"])
async def test_names_the_sandbox_replaced_never_take_a_host_write_outside(
        variant: str, runtime, tmp_path: Path, docker_host: str | None, monkeypatch: pytest.MonkeyPatch) -> None:
    skip_unless_kind("isolated", docker_host)
    outside = Outside(tmp_path / "elsewhere")
    project = (tmp_path / "ws" / "projects" / "p-planted").resolve()
    calls: list[tuple[str, dict[str, Any]]] = [
        ("Build", {}), ("RunGame", {}),  # a passing check first: the run's final report reuses it, then delivers
        ("Bash", {"command": _plants(variant, outside)}),
        ("Bash", {"command": "for n in delivery.json screenshot.png .tier2 docs/design design "
                             ".tier2/reports/final/report.json; do [ -L $n ] && echo link $n; "
                             "[ -p $n ] && echo fifo $n; done; true"}),
    ]
    seen: list[str] = []

    def script(messages: list[Msg]) -> list[TextBlock | ToolCallBlock]:
        done = tool_results(messages)
        if done < len(calls):
            name, args = calls[done]
            return [ToolCallBlock(id=f"h{done}", name=name, input=json.dumps(args))]
        seen.append(messages[-1].get_text_content() or "" if messages else "")
        return [TextBlock(text="done")]

    model = ScriptedChatModel(script, model="tier2-offline-policy-v1")
    run_id = new_run_id()
    await runtime.store.accept_run(run_id, {"status": "queued", "brief": BRIEF, "project_id": "p-planted",
                                            "project_dir": str(project), "options": {"workspace": "isolated"}},
                                   project_id="p-planted", dispatch=False)
    outcome = await execute_run(runtime, RunRequest(
        brief=BRIEF, scripted_models={"writer": model}, run_id=run_id, project_id="p-planted",
        out_dir=project, options={"workspace": "isolated"}))
    assert outside.unchanged(), outside.fingerprint()  # nothing outside written, created or replaced
    gates = outcome.delivery.get("verification", {}).get("gates")
    builds = [g for g in gates or [] if g.get("id") == "l1.builds"]
    assert outcome.status == "delivered", (outcome.stop_reason, json.dumps(builds)[:3000])
    for name in ("delivery.json", ".tier2/reports/final/report.json", ".tier2/reports/final/report.html"):
        assert _kind(project / name) == "file" and os.stat(project / name).st_nlink == 1, name
    assert _kind(project / ".tier2") == "dir" and _kind(project / ".tier2/reports/final") == "dir"
    delivery = json.loads((project / "delivery.json").read_text())
    assert delivery["run_id"] == run_id and delivery["verification"]["passed"] is True
    assert outcome.delivery["run_id"] == run_id
    if (project / "screenshot.png").exists() or (project / "screenshot.png").is_symlink():
        assert _kind(project / "screenshot.png") == "file"  # the run's own, or none at all
    # the planted directories tier2 never needed here are left as the sandbox made them, and never followed
    report = bounded(lambda: json.loads((project / ".tier2/reports/final/report.json").read_text()))
    assert report["passed"] is True and all(Path(s).is_relative_to(project) for s in report["screenshots"])

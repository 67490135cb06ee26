"""OpenTelemetry: `tier2 generate` exports its spans over OTLP/HTTP to a real receiver in another process
(tier2.testing.otlp_receiver), only when the standard OTEL_* variables name it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.helpers import run_cli
from tier2.settings.loader import REPO_ROOT

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.browser, pytest.mark.redis]
POTION = "a potion shop tycoon where I brew potions from herbs and sell them to adventurers"


class Receiver:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.proc = subprocess.Popen([sys.executable, "-m", "tier2.testing.otlp_receiver", "--out", str(out)],
                                     cwd=REPO_ROOT, stdout=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        assert line.startswith("READY "), line
        self.endpoint = f"http://127.0.0.1:{int(line.split()[1])}"

    def spans(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.out.read_text().splitlines() if line.strip()]

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=10)
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    r = Receiver(tmp_path / "spans.jsonl")
    yield r
    r.stop()


def _ancestry(span: dict[str, Any], by_id: dict[str, dict[str, Any]]) -> list[str]:
    names = []
    while span is not None:
        names.append(span["name"])
        span = by_id.get(span["parent_span_id"])  # type: ignore[assignment]
    return names


def test_generate_exports_run_phase_model_tool_and_validator_spans(receiver: Receiver, tmp_path: Path) -> None:
    proc = run_cli("generate", POTION, "--out", str(tmp_path / "game"), "--json", "--quiet",
                   env={"TIER2_WORKSPACES": str(tmp_path / "ws"), "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
                        "OTEL_SERVICE_NAME": "tier2-under-test"})
    assert proc.returncode == 0, proc.stderr[-3000:]
    delivery = json.loads(proc.stdout)
    spans = receiver.spans()  # the CLI flushed before it exited
    by_id = {s["span_id"]: s for s in spans}
    names = [s["name"] for s in spans]
    assert {s["service"] for s in spans} == {"tier2-under-test"}
    assert len({s["trace_id"] for s in spans}) == 1  # one trace per run

    run = next(s for s in spans if s["name"] == "run")
    assert run["parent_span_id"] == ""
    assert run["attributes"]["tier2.run.id"] == delivery["run_id"]
    assert run["attributes"]["tier2.run.status"] == "delivered"
    assert run["attributes"]["tier2.model.route"] == "offline"
    assert run["attributes"]["tier2.cost_usd"] == pytest.approx(delivery["usage"]["cost_usd"], abs=1e-6)
    assert {"phase implement", "phase validate", "phase deliver"} <= set(names)

    chats = [s for s in spans if s["name"].startswith("chat ")]
    assert len(chats) == delivery["usage"]["model_calls"]
    for chat in chats:
        a = chat["attributes"]
        assert a["gen_ai.request.model"] == a["gen_ai.response.model"] == "tier2-offline-policy-v1"
        assert a["gen_ai.usage.input_tokens"] > 0 and a["gen_ai.usage.output_tokens"] > 0
        assert a["tier2.cost_usd"] > 0
        assert a["tier2.agent"] in ("writer", "leader") or a["tier2.agent"].startswith("designer.")
    assert sum(c["attributes"]["tier2.cost_usd"] for c in chats) == pytest.approx(delivery["usage"]["cost_usd"],
                                                                                  abs=1e-6)  # rounded there
    writer = [c for c in chats if c["attributes"]["tier2.agent"] == "writer"]
    assert writer and _ancestry(writer[0], by_id) == [writer[0]["name"], "invoke_agent writer", "phase implement",
                                                      "run"]
    design = [c for c in chats if c["attributes"]["tier2.agent"] != "writer"]
    assert design and all(_ancestry(c, by_id)[-1] == "run" for c in design)  # the design team: one trace too

    tools = {s["name"] for s in spans if s["name"].startswith("execute_tool ")}
    assert {"execute_tool Write", "execute_tool Build", "execute_tool RunGame"} <= tools

    validations = [s for s in spans if s["name"] == "validate"]
    assert validations and all(v["attributes"]["tier2.validation.passed"] for v in validations)
    final = validations[-1]
    assert _ancestry(final, by_id)[1:] == ["phase validate", "run"]
    assert {"l1.builds", "l1.boots", "l3.visual_score"} <= set(final["attributes"]["tier2.gate.ids"])
    assert final["attributes"]["tier2.gate.failed"] == []
    assert {e["attributes"]["tier2.gate.id"] for e in final["events"] if e["name"] == "gate"} >= {"l1.builds"}
    in_tool = [v for v in validations if _ancestry(v, by_id)[1] == "execute_tool RunGame"]
    assert in_tool  # the writer's own RunGame check is traced inside its tool span


_ONE_SPAN = ("from tier2.telemetry import setup_tracing, shutdown_tracing, span\n"
             "on = setup_tracing()\n"
             "with span('probe', marker=1):\n    pass\n"
             "shutdown_tracing()\n"
             "print('on' if on else 'off')\n")


def _probe(env: dict[str, str]) -> str:
    proc = subprocess.run([sys.executable, "-c", _ONE_SPAN], cwd=REPO_ROOT, env=env, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_nothing_is_exported_unless_configured(receiver: Receiver) -> None:
    import os

    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    assert _probe(base) == "off"                                               # no endpoint: no provider
    assert _probe({**base, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint, "OTEL_SDK_DISABLED": "true"}) == "off"
    assert receiver.spans() == []  # the probe exited: whatever it exported is on disk (written before the answer)
    assert _probe({**base, "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint}) == "on"   # the control: it arrives
    assert [s["name"] for s in receiver.spans()] == ["probe"]

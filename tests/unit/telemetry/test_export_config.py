"""Tracing is configured by the standard OTEL_* variables only, and is off without an OTLP endpoint."""

from __future__ import annotations

import pytest

from tier2.errors import SetupError
from tier2.telemetry import RunTrace, export_config, span, tracing_enabled

ENDPOINT = "http://127.0.0.1:4318"


def test_off_without_an_endpoint() -> None:
    assert export_config({}) is None
    assert export_config({"OTEL_SERVICE_NAME": "x", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}) is None


def test_the_generic_or_the_traces_endpoint_turns_it_on_with_defaults() -> None:
    cfg = export_config({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT})
    assert cfg is not None and (cfg.protocol, cfg.service_name, cfg.endpoint) == ("http/protobuf", "tier2", ENDPOINT)
    cfg = export_config({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": ENDPOINT + "/v1/traces",
                         "OTEL_EXPORTER_OTLP_ENDPOINT": "http://other:4318", "OTEL_SERVICE_NAME": "games",
                         "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"})
    assert cfg is not None and (cfg.endpoint, cfg.protocol, cfg.service_name) == (
        ENDPOINT + "/v1/traces", "grpc", "games")  # the traces-specific variables win


@pytest.mark.parametrize("env", [{"OTEL_SDK_DISABLED": "true"}, {"OTEL_SDK_DISABLED": "TRUE"},
                                 {"OTEL_TRACES_EXPORTER": "none"}, {"OTEL_TRACES_EXPORTER": "console"}])
def test_disabled_sdk_or_another_exporter_keeps_it_off(env: dict[str, str]) -> None:
    assert export_config({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, **env}) is None


def test_an_unsupported_protocol_is_a_setup_error() -> None:
    with pytest.raises(SetupError, match="http/json"):
        export_config({"OTEL_EXPORTER_OTLP_ENDPOINT": ENDPOINT, "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"})


def test_span_helpers_are_no_ops_without_a_provider() -> None:
    assert not tracing_enabled()  # nothing in the test process installs an SDK provider
    trace = RunTrace("r-1", agent="writer")
    trace.phase("implement")
    trace.finish("delivered", "ok")
    assert trace.run_span is None and trace.phase_span is None
    with span("validate", target="x") as s:
        assert s is None

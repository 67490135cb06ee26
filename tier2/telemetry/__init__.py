"""OpenTelemetry tracing for tier2 runs (off unless the standard ``OTEL_EXPORTER_OTLP_*`` variables are set)."""

from tier2.telemetry.setup import ExportConfig, export_config, setup_tracing, shutdown_tracing
from tier2.telemetry.spans import (
    ANSWERED_BY,
    CALL_COST,
    DROPPED_PARAMS,
    FALLBACK_INDEX,
    USAGE_ESTIMATED,
    A,
    RunTrace,
    annotate_validation,
    recording_span,
    span,
    traced,
    tracer,
    tracing_enabled,
)

__all__ = ["A", "ANSWERED_BY", "CALL_COST", "DROPPED_PARAMS", "FALLBACK_INDEX", "USAGE_ESTIMATED",
           "ExportConfig", "RunTrace", "annotate_validation", "export_config",
           "recording_span", "setup_tracing", "shutdown_tracing", "span", "traced", "tracer", "tracing_enabled"]

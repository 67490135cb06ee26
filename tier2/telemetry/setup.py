"""Install OpenTelemetry tracing only when a collector is named by the standard ``OTEL_*`` variables.

Off by default: without ``OTEL_EXPORTER_OTLP_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` no SDK provider
is installed, so every span helper here and AgentScope's `TracingMiddleware` stay no-ops (no spans, no exporter
thread). The exporter itself reads the remaining standard variables (headers, timeout, compression, certificates);
``OTEL_SDK_DISABLED=true`` and ``OTEL_TRACES_EXPORTER=none`` turn everything off even with an endpoint set.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from tier2.errors import SetupError

__all__ = ["ExportConfig", "export_config", "setup_tracing", "shutdown_tracing"]

log = logging.getLogger(__name__)
OtlpProtocol = Literal["http/protobuf", "grpc"]
PROTOCOLS: tuple[OtlpProtocol, ...] = ("http/protobuf", "grpc")
DEFAULT_SERVICE = "tier2"
_provider: Any = None  # the SDK TracerProvider this process installed (at most one: OTel's global is set once)
_shut_down = False


@dataclass(frozen=True)
class ExportConfig:
    protocol: OtlpProtocol
    endpoint: str
    service_name: str


def export_config(env: Mapping[str, str]) -> ExportConfig | None:
    """What the environment asks for; None = tracing off. An unsupported protocol is a `SetupError`."""
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    exporters = {e.strip().lower() for e in env.get("OTEL_TRACES_EXPORTER", "otlp").split(",") if e.strip()}
    if "otlp" not in exporters:
        return None
    endpoint = (env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT") or "").strip()
    if not endpoint:
        return None
    protocol = (env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL")
                or "http/protobuf").strip().lower()
    chosen = next((p for p in PROTOCOLS if p == protocol), None)
    if chosen is None:
        raise SetupError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r} is not supported; "
                         f"use one of {', '.join(PROTOCOLS)}")
    service = (env.get("OTEL_SERVICE_NAME") or "").strip() or DEFAULT_SERVICE
    return ExportConfig(protocol=chosen, endpoint=endpoint, service_name=service)


def setup_tracing() -> bool:
    """Install the SDK provider with a batching OTLP exporter when configured; True when tracing is on."""
    global _provider
    if _provider is not None:
        return True
    cfg = export_config(os.environ)
    if cfg is None:
        return False
    from opentelemetry import trace
    from opentelemetry.sdk.resources import SERVICE_NAME, SERVICE_VERSION, Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    from tier2 import __version__

    if cfg.protocol == "grpc":
        from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

        exporter: Any = GrpcExporter()
    else:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter as HttpExporter

        exporter = HttpExporter()  # appends /v1/traces to OTEL_EXPORTER_OTLP_ENDPOINT, as the spec says
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: cfg.service_name,
                                                        SERVICE_VERSION: __version__}))
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    _provider = provider
    log.info("tracing: OTLP %s to %s as service %r", cfg.protocol, cfg.endpoint, cfg.service_name)
    return True


def shutdown_tracing(timeout_ms: int = 10_000) -> None:
    """Flush pending spans and stop the exporter (CLI exit, service shutdown); a no-op when tracing is off."""
    global _shut_down
    if _provider is None or _shut_down:
        return
    _shut_down = True
    try:
        _provider.force_flush(timeout_ms)
    finally:
        _provider.shutdown()

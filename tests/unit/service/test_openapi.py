"""``/openapi.json`` is what game-cloud codes against: every ``/v1`` operation documents its success body (a real
schema, not ``{}``) and its error statuses as the one `ErrorBody`; response models are closed allow-lists."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from tier2.app import build_app
from tier2.service import schemas, schemas_browse, schemas_plans
from tier2.settings.loader import Settings

ERROR_REF = "#/components/schemas/ErrorBody"


@pytest.fixture(scope="module")
def spec(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    settings = Settings(workspaces=tmp_path_factory.mktemp("openapi"))
    return build_app(settings, "redis://127.0.0.1:1/0", workers=0).openapi()  # no lifespan: nothing connects


def _operations(spec: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, op) for path, ops in spec["paths"].items() if path.startswith("/v1/")
            for method, op in ops.items()]


def _resolve(spec: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    return spec["components"]["schemas"][ref.rsplit("/", 1)[1]] if ref else schema


def test_every_v1_operation_documents_a_success_schema(spec: dict[str, Any]) -> None:
    ops = _operations(spec)
    assert len(ops) == 19, [f"{m} {p}" for m, p, _ in ops]
    for method, path, op in ops:
        ok = {status: r for status, r in op["responses"].items() if status.startswith("2")}
        assert len(ok) == 1, (method, path, list(op["responses"]))
        (status, response), = ok.items()
        content = response.get("content") or {}
        assert content, (method, path, status)
        for media, body in content.items():
            schema = body.get("schema") or {}
            assert schema and _resolve(spec, schema), (method, path, media)
            if media == "application/json":
                resolved = _resolve(spec, schema)
                assert resolved.get("properties"), (method, path, resolved)


def test_every_v1_error_status_is_the_error_body(spec: dict[str, Any]) -> None:
    for method, path, op in _operations(spec):
        errors = {s: r for s, r in op["responses"].items() if s[0] in "45"}
        assert {"401", "404" if "{" in path else "401", "500"} <= set(errors), (method, path, list(errors))
        for status, response in errors.items():
            if path == "/v1/health" and status == "503":
                continue  # the health report itself, with what is missing
            assert response["content"]["application/json"]["schema"] == {"$ref": ERROR_REF}, (method, path, status)
    assert "HTTPValidationError" not in spec["components"]["schemas"]  # FastAPI's default 422 is not ours
    error = spec["components"]["schemas"]["ErrorBody"]
    assert set(error["required"]) == {"error", "detail"}


def test_media_types_of_the_stream_and_the_artifacts(spec: dict[str, Any]) -> None:
    events = spec["paths"]["/v1/runs/{run_id}/events"]["get"]["responses"]["200"]["content"]
    assert list(events) == ["text/event-stream"]
    artifacts = spec["paths"]["/v1/runs/{run_id}/artifacts/{name}"]["get"]["responses"]["200"]["content"]
    assert {"text/html", "text/javascript", "image/png", "application/json"} <= set(artifacts)
    upload = spec["paths"]["/v1/projects"]["post"]["requestBody"]["content"]
    assert {"application/zip", "application/x-tar", "application/gzip", "application/json"} <= set(upload)
    retry = spec["paths"]["/v1/runs"]["post"]["responses"]["429"]["headers"]
    assert "Retry-After" in retry
    play = spec["paths"]["/v1/runs/{run_id}/play/{token}/{name}"]["get"]["responses"]["200"]["content"]
    assert "text/html" in play


def _response_models() -> list[type[BaseModel]]:
    requests = {schemas.RunCreate, schemas.ProjectImport}
    return [m for module in (schemas, schemas_browse, schemas_plans) for m in vars(module).values()
            if isinstance(m, type) and issubclass(m, BaseModel) and m.__module__ == module.__name__
            and m not in requests and not m.__name__.startswith("_")]


@pytest.mark.parametrize("model", _response_models(), ids=lambda m: m.__name__)
def test_response_models_are_closed(model: type[BaseModel]) -> None:
    assert model.model_config.get("extra") == "forbid"
    assert model.model_json_schema().get("additionalProperties") is False

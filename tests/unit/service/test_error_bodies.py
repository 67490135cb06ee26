"""The one error format (`tier2.service.errors`): every body an `ErrorBody`, tier2's error classes mapped by type,
and no exception text, server path or pid in what a client reads."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI

from tier2.errors import BadInput, Conflict, Forbidden, NotFound, RedisUnavailable
from tier2.runs.tenancy import RouteNotAllowed, TenantLimitExceeded
from tier2.service.errors import install_error_handlers
from tier2.service.schemas import ErrorBody

CASES: list[tuple[Exception, int, str]] = [
    (BadInput("brief is empty"), 422, "invalid_request"),
    (NotFound("unknown run"), 404, "not_found"),
    (Conflict("run r-1 already ended: delivered"), 409, "conflict"),
    (Forbidden("no"), 403, "forbidden"),
    (RouteNotAllowed("model route 'openai' is not allowed"), 403, "forbidden"),
    (TenantLimitExceeded("too many", retry_after=15), 429, "rate_limited"),
    (TenantLimitExceeded("one upload over the day", status=413), 413, "payload_too_large"),
    (RedisUnavailable("cannot write run record: Error 111 connecting to /srv/redis/sock"), 503, "service_unavailable"),
    (RuntimeError("boom at /srv/tier2/secret/file.py pid 4242"), 500, "internal_error"),
    (BadInput("cannot read /srv/tier2/workspaces/import/x/y (pid 4242)"), 422, "invalid_request"),
]


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = FastAPI()
    install_error_handlers(app)

    @app.get("/raise/{n}")
    async def fail(n: int) -> None:
        raise CASES[n][0]

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app, raise_app_exceptions=False),
                                 base_url="http://test") as c:
        yield c


@pytest.mark.parametrize("n", range(len(CASES)))
async def test_errors_map_by_type_to_the_one_body(client: httpx.AsyncClient, n: int) -> None:
    _, status, code = CASES[n]
    r = await client.get(f"/raise/{n}")
    assert r.status_code == status, r.text
    body = ErrorBody.model_validate(r.json())
    assert body.error.code == code and body.detail == body.error.message
    assert "/srv/" not in r.text and "4242" not in r.text and "RuntimeError" not in r.text and "111" not in r.text
    if status == 429:
        assert r.headers["Retry-After"] == "15"


async def test_a_validation_error_lists_fields_not_values(client: httpx.AsyncClient) -> None:
    r = await client.get("/raise/not-a-number-SECRET")
    body = ErrorBody.model_validate(r.json())
    assert r.status_code == 422 and body.error.fields and body.error.fields[0].loc == "path.n"
    assert "SECRET" not in r.text

"""The ``images`` model route: an OpenAI-compatible images API (``POST {base_url}/images/generations``,
``response_format: b64_json``) that may replace the offline asset generator for the ``assets`` role.

Never required: the RequestAsset tool falls back to the procedural generator (and says so) when the route fails,
times out, or answers anything but one PNG within the asset size limit.
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass

import httpx

from tier2.errors import ModelRouteError
from tier2.settings.loader import ModelRoute, Policy

__all__ = ["ImageRoute", "ImageRouteError", "image_route", "generate_image"]

DEFAULT_SIZE = "256x256"
_PNG = b"\x89PNG\r\n\x1a\n"


class ImageRouteError(RuntimeError):
    """The images route gave no usable image (the message says why; the caller falls back)."""


@dataclass(frozen=True)
class ImageRoute:
    name: str
    model: str
    base_url: str
    api_key: str
    size: str = DEFAULT_SIZE
    timeout_s: float = 60.0


def image_route(policy: Policy) -> ImageRoute | None:
    """The route configured for the ``assets`` role when it is of kind ``images`` (``agents: {assets: NAME}``);
    None: the offline generator. `ModelRouteError` when its API key variable is named but unset."""
    name = policy.agents.get("assets")
    if not name:
        return None
    route: ModelRoute = policy.models[name]
    if route.kind != "images":
        return None
    key = os.environ.get(route.api_key_env, "") if route.api_key_env else ""
    if route.api_key_env and not key:
        raise ModelRouteError(f"images route {name!r} needs the API key in ${route.api_key_env}")
    base = (route.base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
    size = str(route.parameters.get("size", DEFAULT_SIZE))
    return ImageRoute(name, route.model, base, key or "not-needed", size, policy.timeouts.model_call_s)


async def generate_image(route: ImageRoute, prompt: str, max_bytes: int) -> bytes:
    """One PNG for ``prompt`` from the route; `ImageRouteError` for any answer that is not one."""
    body = {"model": route.model, "prompt": prompt[:1000], "n": 1, "size": route.size, "response_format": "b64_json"}
    try:
        async with httpx.AsyncClient(timeout=route.timeout_s, follow_redirects=False, trust_env=False) as client:
            resp = await client.post(f"{route.base_url}/images/generations", json=body,
                                     headers={"Authorization": f"Bearer {route.api_key}"})
    except httpx.HTTPError as exc:
        raise ImageRouteError(f"images route {route.name!r}: {type(exc).__name__}: {str(exc)[:200]}") from exc
    if resp.status_code != 200:
        raise ImageRouteError(f"images route {route.name!r} answered HTTP {resp.status_code}")
    if len(resp.content) > 4 * max_bytes:
        raise ImageRouteError(f"images route {route.name!r}: the answer is over {4 * max_bytes} bytes")
    try:
        data = resp.json()["data"][0]["b64_json"]
        png = base64.b64decode(data, validate=True)
    except (ValueError, KeyError, IndexError, TypeError, binascii.Error) as exc:
        raise ImageRouteError(f"images route {route.name!r}: no b64_json image in the answer ({exc})") from exc
    if not png.startswith(_PNG):
        raise ImageRouteError(f"images route {route.name!r}: the image is not a PNG")
    if len(png) > max_bytes:
        raise ImageRouteError(f"images route {route.name!r}: the image is {len(png)} bytes, over {max_bytes}")
    return png

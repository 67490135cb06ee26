"""`forbid_real_providers`: while active, building a model or an HTTP client for a real provider raises.

A test may only talk to an in-process model (`ScriptedChatModel`, the offline policy) or to a server on the
loopback interface (`FakeOpenAIServer`). Checked where every model is built (``ChatModelBase.__init__``: its
credential's ``base_url``, or a tier2 credential without one) and where every OpenAI/Anthropic SDK client is built
(the SDK's resolved ``base_url``, so a missing URL — the vendor's default endpoint — is refused as well).
"""

from __future__ import annotations

import contextlib
import functools
import importlib
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

__all__ = ["RealProviderRefused", "forbid_real_providers", "is_loopback_url"]

LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1"}
# SDK base classes whose __init__ receives the resolved base_url (keyword-only)
_SDK_CLIENTS = (("openai._base_client", "BaseClient"), ("anthropic._base_client", "BaseClient"))


class RealProviderRefused(RuntimeError):
    """A test tried to build a model or client that would reach a real provider."""


def is_loopback_url(url: object) -> bool:
    if url is None:
        return False
    host = urlsplit(str(url)).hostname
    return host in LOOPBACK_HOSTS


def _refuse(what: str, url: object) -> None:
    raise RealProviderRefused(f"tests must not reach a real model provider: {what} with base_url {url!r} "
                              f"(not on 127.0.0.1; use tier2.testing.FakeOpenAIServer or ScriptedChatModel)")


def _guard_model_init(orig: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(orig)
    def init(self: Any, credential: Any, *args: Any, **kwargs: Any) -> None:
        in_process = type(credential).__module__.startswith("tier2.") and not hasattr(credential, "base_url")
        if not in_process and not is_loopback_url(getattr(credential, "base_url", None)):
            _refuse(f"{type(self).__name__} ({type(credential).__name__})", getattr(credential, "base_url", None))
        orig(self, credential, *args, **kwargs)

    return init


def _guard_client_init(orig: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(orig)
    def init(self: Any, *args: Any, **kwargs: Any) -> None:
        if not is_loopback_url(kwargs.get("base_url")):
            _refuse(type(self).__name__, kwargs.get("base_url"))
        orig(self, *args, **kwargs)

    return init


@contextlib.contextmanager
def forbid_real_providers() -> Iterator[None]:
    from agentscope.model import ChatModelBase

    patched: list[tuple[type, Callable[..., None]]] = [(ChatModelBase, ChatModelBase.__init__)]
    for module, name in _SDK_CLIENTS:
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError):  # that SDK is not installed: nothing to guard
            continue
        patched.append((cls, cls.__init__))
    ChatModelBase.__init__ = _guard_model_init(ChatModelBase.__init__)  # type: ignore[method-assign]
    for cls, orig in patched[1:]:
        cls.__init__ = _guard_client_init(orig)  # type: ignore[misc]
    try:
        yield
    finally:
        for cls, orig in patched:
            cls.__init__ = orig  # type: ignore[misc]

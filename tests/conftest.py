"""Shared fixtures: real redis-server child, real Chromium pool, real pack toolchain — per test session."""

from __future__ import annotations

import gc
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tier2.browser import BrowserPool, find_chromium
from tier2.packs import Pack, load_pack
from tier2.runs import Runtime, open_runtime
from tier2.settings.loader import REPO_ROOT, Settings, load_security
from tier2.store.embedded import EmbeddedRedis
from tier2.store.keys import Keys
from tier2.testing.guards import forbid_real_providers
from tier2.testing.scripted import strict_scripts

REPO = REPO_ROOT


#: the pytest-xdist worker running this session ("gw0", "gw1"...), "main" without xdist
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")


@pytest.fixture(scope="session", autouse=True)
def _worker_isolation(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Parallel workers never share state: each has its own redis-server child (`redis_server`), its own temporary
    tree (pytest gives each worker its own base temp), and, for anything that falls back on the environment, its
    own Redis key prefix and workspaces root."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIER2_KEY_PREFIX", f"tier2-{WORKER}")
        mp.setenv("TIER2_WORKSPACES", str(tmp_path_factory.mktemp("default-workspaces")))
        yield


@pytest.fixture(scope="session", autouse=True)
def _no_real_providers() -> Iterator[None]:
    """Building a model or an OpenAI/Anthropic client whose base_url is not on 127.0.0.1 raises, in every test."""
    with forbid_real_providers():
        yield


@pytest.fixture(autouse=True)
def _leaks_fail_their_own_test() -> Iterator[None]:
    """Collect garbage at each test's teardown: an object the test leaked (a file a cancelled tool opened, an
    unclosed socket) is finalised now, and its ``ResourceWarning`` — an error under this suite's filterwarnings —
    fails this test's teardown instead of whichever test the GC happened to run in later (issue #29). Run with
    ``PYTHONTRACEMALLOC=10`` to see where the leaked object was allocated. Survivors are frozen (`gc.freeze`) after
    each collection, so the next one scans only what the next test made: a full collection of this suite's heap
    (the engine-docs index, the Phaser API tables) took ~0.2 s a test, frozen it takes ~2 ms."""
    yield
    gc.collect()
    gc.freeze()  # what survived is not scanned again: the next test's collection looks only at its own objects


@pytest.fixture(autouse=True)
def _strict_scripted_models() -> Iterator[None]:
    """Every `ScriptedChatModel` a test makes must use its whole script and never be called past its end."""
    with strict_scripts() as made:
        yield
    problems = [p for model in made for p in model.problems()]
    if problems:
        pytest.fail("scripted model misuse:\n" + "\n".join(problems), pytrace=False)


@pytest.fixture(autouse=True)
def _no_real_model_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests never reach a real model provider: drop provider keys from the environment."""
    for key in list(os.environ):
        if key.endswith("_API_KEY") and not key.startswith("TIER2_TEST"):
            monkeypatch.delenv(key, raising=False)


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EmbeddedRedis]:
    server = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def redis_url(redis_server: EmbeddedRedis) -> str:
    return redis_server.url


@pytest.fixture(scope="session")
def workspaces(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("workspaces")


@pytest.fixture(scope="session")
def settings(workspaces: Path, redis_url: str) -> Settings:
    return Settings(workspaces=workspaces, redis_url=redis_url)


@pytest.fixture(scope="session")
def pack() -> Pack:
    p = load_pack(REPO / "capability_packs", "phaser")
    p.check_toolchain()
    return p


@pytest.fixture(scope="session")
async def pool() -> AsyncIterator[BrowserPool]:
    security = load_security(REPO / "config")
    async with BrowserPool(find_chromium(None, security.browser.executables)) as p:
        yield p


@pytest.fixture(scope="session")
async def viewer_pool() -> AsyncIterator[BrowserPool]:
    """A person's browser for tier2's own pages on loopback (the Studio, the API): it has a network, which the
    games' `pool` has not (`tier2.browser.network`)."""
    security = load_security(REPO / "config")
    async with BrowserPool(find_chromium(None, security.browser.executables), viewer=True) as p:
        yield p


@pytest.fixture
def template_copy(tmp_path: Path, pack: Pack) -> Path:
    """A fresh copy of the pack's template project."""
    dest = tmp_path / "game"
    shutil.copytree(pack.template_dir, dest)
    return dest


@pytest.fixture
def config_dir(tmp_path: Path) -> Path:
    """A private copy of config/ that a test may extend (a model route, the [sandbox] section, ...)."""
    dest = tmp_path / "config"
    shutil.copytree(REPO_ROOT / "config", dest)
    return dest


@pytest.fixture
async def runtime(tmp_path: Path, redis_url: str, config_dir: Path) -> AsyncIterator[Runtime]:
    """The process runtime (config, pack, browser pool, store) on the session's redis-server, keys of its own."""
    settings = Settings(workspaces=tmp_path / "ws", redis_url=redis_url, config_dir=config_dir)
    async with open_runtime(settings, redis_url, Keys(prefix=f"test-{tmp_path.name}")) as rt:
        yield rt

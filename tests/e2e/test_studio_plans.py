"""The Studio's plan versions in real Chromium against the real service (uvicorn, Redis; no worker: a follow-up run,
its thread's goal/plan versions and its events are written to the store as the run loop writes them): the goal
versions list, the selected version's diff and node table, the writer's tasks live from `writer_tasks` events,
`goal_versioned` in the event log, another version on click."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from playwright.async_api import Page

from tests.e2e.helpers import serve_in_process
from tests.fixtures.plan_records import plan_record
from tier2.browser import BrowserPool
from tier2.events import GoalVersioned, PhaseChanged, WriterTask, WriterTasks
from tier2.settings.loader import REPO_ROOT, Settings
from tier2.store.finish import RunEnd, finish_run
from tier2.store.keys import Keys
from tier2.store.plans import PlanVersions
from tier2.store.run_store import RunStore

pytestmark = [pytest.mark.e2e, pytest.mark.redis, pytest.mark.browser]
KEY = "studio-plans-key-of-tenant-a"


@dataclass
class Studio:
    base: str
    store: RunStore


@pytest.fixture(scope="module")
async def studio(tmp_path_factory: pytest.TempPathFactory, redis_url: str) -> AsyncIterator[Studio]:
    root = tmp_path_factory.mktemp("studio-plans")
    shutil.copytree(REPO_ROOT / "config", root / "config")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TIER2_API_KEYS", f"tenant-a:{KEY}")
        settings = Settings(workspaces=root / "ws", redis_url=redis_url, config_dir=root / "config",
                            key_prefix=f"splans-{uuid.uuid4().hex[:8]}")
        store = RunStore.from_url(redis_url, Keys(prefix=settings.key_prefix))
        try:
            async with serve_in_process(settings, redis_url, workers=0) as api:
                yield Studio(str(api.base_url).rstrip("/"), store)
        finally:
            await store.close()


@pytest.fixture
async def page(viewer_pool: BrowserPool) -> AsyncIterator[Page]:
    context = await viewer_pool.new_context(viewport={"width": 1280, "height": 900})
    errors: list[str] = []
    try:
        p = await context.new_page()
        p.on("pageerror", lambda e: errors.append(str(e)))
        yield p
    finally:
        await context.close()
    assert errors == [], errors


async def _follow_up(store: RunStore) -> tuple[str, str, str]:
    """A thread whose first run delivered goal v1 and whose follow-up run (running) is planning goal v2."""
    tag = uuid.uuid4().hex[:8]
    thread, project, first, second = f"t-{tag}", f"game-{tag}", f"r-{tag}-1", f"r-{tag}-2"
    fields = {"tenant": "tenant-a", "project_id": project, "project_dir": ""}
    for run_id, status, brief in ((first, "delivered", "a cozy bakery"), (second, "running", "same game, snowy")):
        got = await store.accept_run(run_id, {"status": status, "project_id": project, "tenant": "tenant-a",
                                              "thread_id": thread, "brief": brief, "phase": "design"},
                                     project_id=project, dispatch=False, tenant="tenant-a", thread=(thread, fields))
        assert got.outcome == "created"
    plans = PlanVersions(store.r, store.keys)
    await plans.append(project, plan_record(1, 1, run_id=first, project_id=project), None)
    await plans.append(project, plan_record(2, 1, run_id=second, project_id=project, end=None), None)
    return thread, project, second


async def test_the_run_page_shows_goal_versions_diffs_and_the_writers_tasks(studio: Studio, page: Page) -> None:
    thread, project, run_id = await _follow_up(studio.store)
    await page.goto(f"{studio.base}/studio/")
    await page.fill("#api-key", KEY)
    await page.click("#sign-in button")
    await page.wait_for_selector("#runs")
    await page.goto(f"{studio.base}/studio/#/runs/{run_id}")
    # the versions list, this run's version selected, its diff and node table
    await page.wait_for_selector("#goal-versions li[data-version='2'].on")
    items = await page.eval_on_selector_all("#goal-versions li", "ls => ls.map(l => l.textContent)")
    assert items == ["v1 · user · a cozy bakery where I bake bread and sell it to villagers · delivered",
                     "v2 · user · same game, snowy theme · running"]
    assert "goal v2 (user): same game, snowy theme" in await page.text_content("#plan-goal")
    changed = await page.text_content("#plan-diff li[data-change=changed][data-req=R3]")
    assert "customers wait 20 s" in changed and "(was: customers wait 10 s; changed: predicate, text)" in changed
    assert await page.locator("#plan-diff li[data-change=added][data-req=R12]").count() == 1
    assert await page.locator("#plan-diff li[data-change=removed][data-req=R2]").count() == 1
    assert "goal v2: theme → snow" in await page.text_content("#plan-invalidated li[data-node='design.assets']")
    hows = await page.eval_on_selector_all("#plan-node-table tbody tr",
                                           "rs => rs.map(r => [r.dataset.node, r.dataset.status, r.dataset.how])")
    assert ["design.economy", "verified", "reused"] in hows and ["req.R1", "verified", "reused"] in hows
    assert ["design.assets", "running", "re-run"] in hows and ["req.R3", "pending", "re-run"] in hows
    assert ["design.brief", "verified", ""] in hows
    assert "local_replan_ratio: 0.6" in await page.text_content("#plan-metrics")
    assert "has not ended" in await page.text_content("#plan-end")
    assert "no task list yet" in await page.text_content("#writer-tasks")

    # live: the run's goal_versioned and writer_tasks events
    diff = plan_record(2, 1)["diff"]
    await studio.store.append_event(GoalVersioned(run_id=run_id, goal_version=2, author="user",
                                                  text="same game, snowy theme", diff=diff))
    await studio.store.append_event(PhaseChanged(run_id=run_id, phase="implement", detail="writer"))
    tasks = [WriterTask(id="1", subject="snow sprites and palette", status="in_progress",
                        nodes=["design.assets", "req.R12"]),
             WriterTask(id="2", subject="patient customers", status="pending", nodes=["req.R3"])]
    await studio.store.append_event(WriterTasks(run_id=run_id, tasks=tasks))
    await page.wait_for_selector("#writer-tasks li[data-task='1'][data-status=in_progress]")
    assert "design.assets, req.R12" in await page.text_content("#writer-tasks li[data-task='1']")
    row = await page.text_content("#events-body tr[data-type=goal_versioned]")
    assert "goal v2 (user): same game, snowy theme · requirements +1 ~1 -1 · 2 invalidated · 2 reused" in row
    await studio.store.append_event(WriterTasks(run_id=run_id, tasks=[t.model_copy(update={"status": "completed"})
                                                                     for t in tasks]))
    await page.wait_for_selector("#writer-tasks-count:has-text('2 of 2 tasks done')")
    assert "writer tasks: 2/2 done" in await page.text_content("#events-body tr[data-type=writer_tasks]:last-child")

    # the version's final plan lands, the run ends: the page reads the version again
    await PlanVersions(studio.store.r, studio.store.keys).append(
        project, plan_record(2, 2, run_id=run_id, project_id=project), None)
    await finish_run(studio.store, run_id, RunEnd(status="delivered", stop_reason="every requirement verified"))
    await page.wait_for_selector("#stream-state[data-state=ended]")
    await page.wait_for_selector("#plan-end[data-kind=delivered]")
    assert "plan version 2" in await page.text_content("#plan-goal")
    await page.wait_for_selector("#goal-versions li[data-version='2'][data-end=delivered]")

    # another version on click
    await page.click("#goal-versions li[data-version='1'] button")
    await page.wait_for_selector("#plan-versions[data-selected='1']")
    assert "goal v1 (user)" in await page.text_content("#plan-goal")
    assert await page.locator("#plan-diff li[data-change=added]").count() == 3
    assert await page.locator("#goal-versions li.on").get_attribute("data-version") == "1"

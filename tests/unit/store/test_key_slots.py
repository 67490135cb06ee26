"""Every key carries a hash tag, and the keys of one family (a run, a tenant, a thread, a project, the dispatcher,
the globals) hash to one Redis Cluster slot (`redis.crc.key_slot`): what a script of that family touches."""

from __future__ import annotations

import inspect

from redis.crc import key_slot

from tier2.store.keys import Keys
from tier2.store.team import AgentKeys

K = Keys(prefix="p")


def _slots(names: list[str]) -> set[int]:
    return {key_slot(n.encode()) for n in names}


def _calls(prefix: str, *args: str) -> list[str]:
    """Every key method whose name starts with ``prefix`` and takes ``len(args)`` arguments, called with them."""
    out = []
    for name, fn in inspect.getmembers(Keys, inspect.isfunction):
        params = list(inspect.signature(fn).parameters)[1:]
        skip = name.startswith(("legacy_", "template", "run_retained"))
        if name.startswith(prefix) and len(params) == len(args) and not skip:
            out.append(getattr(K, name)(*args))
    return out


def test_every_key_has_a_hash_tag_but_the_legacy_snapshot_names() -> None:
    for name, fn in inspect.getmembers(Keys, inspect.isfunction):
        if name.startswith("_") or name in {"template", "run_retained"}:
            continue
        args = ["x"] * (len(inspect.signature(fn).parameters) - 1)
        key = getattr(K, name)(*args)
        tagged = "{" in key and "}" in key.split("{", 1)[1]
        assert tagged != name.startswith("legacy_"), (name, key)


def test_a_runs_keys_share_its_slot() -> None:
    run_keys = [*_calls("run_", "R"), *K.run_retained("R"), K.run("R"), K.run_team("R", "leader", "inbox"),
                K.run_team("R", "leader", "closed"), K.run_agent_checkpoints("R", "a"), K.run_agent_latest("R", "a")]
    agent = AgentKeys(prefix="p", agent="designer")
    run_keys += [agent.run_checkpoints("R"), agent.run_latest("R"), agent.run_blocks("R"), agent.run_fence("R")]
    assert len(run_keys) > 25 and _slots(run_keys) == {key_slot(b"R")}
    assert key_slot(K.run("R2").encode()) != key_slot(K.run("R").encode())  # runs spread over slots


def test_tenant_thread_project_and_global_families_each_share_one_slot() -> None:
    tenant = [K.tenant_active("T"), K.tenant_submissions("T"), K.tenant_runs("T"), K.tenant_disk("T"),
              K.tenant_uploads("T", "20260101"), K.idempotency("T", "key:{x}"), K.snap_blob("T", "d"),
              K.snap_tree("T", "s"), K.snap_stamps("T"), K.snap_sizes("T"), K.snap_bytes("T"), K.snap_clock("T"),
              K.snap_runs("T")]
    assert _slots(tenant) == {key_slot(b"T")}
    assert _slots([K.thread("H"), K.thread_runs("H"), K.thread_state("H")]) == {key_slot(b"H")}
    assert _slots([K.project("P"), K.project_active("P"), K.project_plans("P"), K.project_plans_index("P"),
                   K.project_plans_seq("P")]) == {key_slot(b"P")}
    dispatcher = [K.dispatch(), K.dispatch_tenants(), K.tenant_queue("T"), K.tenant_queue("U"),
                  K.tenant_running("T"), K.dispatch_enqueued()]
    assert _slots(dispatcher) == {key_slot(b"dispatch")}
    globals_ = [K.runs_index(), K.workers(), K.snap_tenants(), K.tenant_runs_indexed(), K.accepting(),
                K.layout()]
    assert _slots(globals_) == {key_slot(b"global")}
    assert _slots([K.cases("tenant:T"), K.case_stats("tenant:T")]) == {key_slot(b"tenant:T")}


def test_templates_keep_the_tag_around_the_id() -> None:
    before, after = K.template("run_cancel")
    assert before + "R" + after == K.run_cancel("R") and before.endswith("{") and after.startswith("}")

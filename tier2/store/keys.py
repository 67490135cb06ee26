"""Every Redis key tier2 uses, in one place (AgentScope's own keys stay under ``agentscope:``).

**Slots (Redis Cluster).** Every key carries a hash tag (the part in ``{}``; Redis hashes only that), so that
each Lua script and each ``MULTI`` touches the keys of one slot (`tests/integration/store/test_key_slots.py`
runs every store operation on a real one-node cluster, which refuses anything else):

- a run, tag ``{<run id>}``: ``<p>:run:{<run>}`` and every ``run_*`` key (`Keys.run_retained`), team, agents;
- a tenant, ``{<tenant>}``: ``<p>:tenant:{<tenant>}:*`` (admission, listing, disk, snapshot ledger), its
  idempotency records, snapshot blobs and trees;
- a thread, ``{<thread id>}``: the thread, its runs and state; a project, ``{<project id>}``: the project, its
  one-writer marker, its plan versions;
- the dispatcher, ``{dispatch}``: the stream, the tenant ring, each tenant's queue and running set (`_DRAIN`, `_PICK`);
- other globals, ``{global}``: the runs index, worker heartbeats, snapshot tenants, accepts in progress, markers;
- a case scope ``{<scope>}``, a policy snapshot ``{<digest>}``.

Two ids of different families may share a slot (a tag is just the id): harmless, a slot only has to hold what one
script touches. What used to be one script over several families is a sequence of one-slot steps
(docs/operations.md §14: the acceptance, the fair dispatch, the end of a run). Keys written before the tags
(``<p>:run:<id>``...) are renamed once at start by `tier2.store.layout`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Keys", "SCHEMA_VERSION", "DISPATCH_GROUP"]

#: Version stamped into every persisted payload.
SCHEMA_VERSION = 1
#: Consumer group of the workers on `Keys.dispatch`.
DISPATCH_GROUP = "workers"


@dataclass(frozen=True)
class Keys:
    """Key templates under one prefix; tests pass their own prefix to stay isolated."""

    prefix: str = "tier2"

    def run(self, run_id: str) -> str:
        return f"{self.prefix}:run:{{{run_id}}}"

    def run_events(self, run_id: str) -> str:
        return f"{self.prefix}:run:{{{run_id}}}:events"

    def run_event_seq(self, run_id: str) -> str:
        return f"{self.prefix}:run:{{{run_id}}}:event_seq"

    def run_event_tokens(self, run_id: str) -> str:
        """Hash append token -> event id: a retried append (lost reply) returns the first id, adds nothing."""
        return f"{self.prefix}:run:{{{run_id}}}:event_tokens"

    def run_channel(self, run_id: str) -> str:
        return f"{self.prefix}:run:{{{run_id}}}:live"

    def run_trajectory(self, run_id: str) -> str:
        """Hash: call id -> JSON record of one model or tool call (`store.trajectory`)."""
        return f"{self.prefix}:run:{{{run_id}}}:trajectory"

    def run_trajectory_order(self, run_id: str) -> str:
        """Sorted set: call id scored by its start time (first sighting wins: a resumed attempt keeps the slot)."""
        return f"{self.prefix}:run:{{{run_id}}}:trajectory:order"

    def policy_snapshot(self, digest: str) -> str:
        """A hot-policy snapshot by its hash (JSON, written once): every attempt of a run loads the one the run took
        (`store.policies`), whatever the policy files say by then."""
        return f"{self.prefix}:policy:{{{digest}}}"

    def runs_index(self) -> str:
        return f"{self.prefix}:{{global}}:runs"

    def idempotency(self, tenant: str, key: str) -> str:
        return f"{self.prefix}:idem:{{{tenant}}}:{key}"

    def thread(self, thread_id: str) -> str:
        return f"{self.prefix}:thread:{{{thread_id}}}"

    def thread_runs(self, thread_id: str) -> str:
        return f"{self.prefix}:thread:{{{thread_id}}}:runs"

    def thread_state(self, thread_id: str) -> str:
        return f"{self.prefix}:thread:{{{thread_id}}}:state"

    def project(self, project_id: str) -> str:
        return f"{self.prefix}:project:{{{project_id}}}"

    def project_active(self, project_id: str) -> str:
        """The run currently writing this project (one writer per workspace)."""
        return f"{self.prefix}:project:{{{project_id}}}:active"

    def project_plans(self, project_id: str) -> str:
        """Append-only list of the project's goal/plan version records, oldest first (JSON, `store.plans`)."""
        return f"{self.prefix}:project:{{{project_id}}}:plans"

    def project_plans_index(self, project_id: str) -> str:
        """``<goal_version> <plan_version> <seq> <summary JSON>`` per entry of `project_plans`, in lockstep with it:
        the version rules, the compaction and the listing read this, never the (large) records."""
        return f"{self.prefix}:project:{{{project_id}}}:plans:index"

    def project_plan_fences(self, project_id: str) -> str:
        """Hash run id -> the newest fencing token that appended to the project's plans: a superseded attempt's
        append is refused once its successor appended (`store.plans`; the run's own fence is another slot)."""
        return f"{self.prefix}:project:{{{project_id}}}:plans:fences"

    def project_plans_seq(self, project_id: str) -> str:
        """Counter: the number of plan version entries ever appended to the project (an entry's ``seq``)."""
        return f"{self.prefix}:project:{{{project_id}}}:plans:seq"

    # --- dispatch, leases and fencing (durable run platform) ---

    def dispatch(self) -> str:
        """The outbox stream workers consume (consumer group `DISPATCH_GROUP`)."""
        return f"{self.prefix}:{{dispatch}}:stream"

    def run_lease(self, run_id: str) -> str:
        """``<worker>|<token>`` with a TTL: the attempt currently allowed to run."""
        return f"{self.prefix}:run:{{{run_id}}}:lease"

    def run_fence(self, run_id: str) -> str:
        """Monotonic fencing token (= attempt number); every write of an attempt checks it is still current."""
        return f"{self.prefix}:run:{{{run_id}}}:fence"

    def run_attempts(self, run_id: str) -> str:
        return f"{self.prefix}:run:{{{run_id}}}:attempts"

    def run_cancel(self, run_id: str) -> str:
        return f"{self.prefix}:run:{{{run_id}}}:cancel"

    def run_commands(self, run_id: str) -> str:
        """Hash session id -> JSON: the writer's command sessions of every attempt (`tier2.store.commands`)."""
        return f"{self.prefix}:run:{{{run_id}}}:commands"

    def run_team(self, run_id: str, member: str, part: str) -> str:
        """A team member's mailbox (``part``: ``inbox`` list, ``closed`` flag; `tier2.store.team`)."""
        return f"{self.prefix}:run:{{{run_id}}}:team:{member}:{part}"

    def run_agent_checkpoints(self, run_id: str, agent: str) -> str:
        """One agent's checkpoint list (`tier2.store.team.AgentKeys`: blocks and fence stay the run's)."""
        return f"{self.prefix}:run:{{{run_id}}}:checkpoints:{agent}"

    def run_agent_latest(self, run_id: str, agent: str) -> str:
        return f"{self.prefix}:run:{{{run_id}}}:checkpoint:latest:{agent}"

    def workers(self) -> str:
        """Worker heartbeats (hash worker id -> JSON)."""
        return f"{self.prefix}:{{global}}:workers"

    # --- per-step checkpoints ---

    def run_blocks(self, run_id: str) -> str:
        """Content-addressed message blocks (append-only: HSETNX by hash)."""
        return f"{self.prefix}:run:{{{run_id}}}:blocks"

    def run_checkpoints(self, run_id: str) -> str:
        """Append-only list of checkpoints; each names the blocks it covers."""
        return f"{self.prefix}:run:{{{run_id}}}:checkpoints"

    def run_latest(self, run_id: str) -> str:
        """The newest checkpoint (a copy of the list's last entry, for O(1) resume)."""
        return f"{self.prefix}:run:{{{run_id}}}:checkpoint:latest"

    # --- business operations (side effects keyed by operation id) ---

    def run_ops(self, run_id: str) -> str:
        """Hash op id -> JSON result of a completed side-effecting operation."""
        return f"{self.prefix}:run:{{{run_id}}}:ops"

    def run_op_began(self, run_id: str) -> str:
        """Hash op id -> how many attempts began the operation."""
        return f"{self.prefix}:run:{{{run_id}}}:ops:began"

    def run_op_by(self, run_id: str) -> str:
        """Set-like hash ``b|<op>|<attempt>`` / ``c|<op>|<attempt>``: counts once per attempt (retried calls)."""
        return f"{self.prefix}:run:{{{run_id}}}:ops:by"

    def run_op_applied(self, run_id: str) -> str:
        """Hash op id -> completed executions of the side effect (chaos tests assert exactly 1)."""
        return f"{self.prefix}:run:{{{run_id}}}:ops:applied"

    # --- run governance: the hard budget ledger (shared by every agent of a run) ---

    def run_budget(self, run_id: str) -> str:
        """Hash: caps, spent, reserved, calls, refusals, start time of the run's budget ledger."""
        return f"{self.prefix}:run:{{{run_id}}}:budget"

    def run_budget_calls(self, run_id: str) -> str:
        """Hash call id -> ``r|s|x:<nano-USD>:<tokens>`` (reserved, spent, released): accounting by call id."""
        return f"{self.prefix}:run:{{{run_id}}}:budget:calls"

    # --- tenant limits and fair dispatch (`store.quotas`, `store.dispatch`) ---

    def tenant_active(self, tenant: str) -> str:
        """Set of the tenant's accepted run ids not yet seen terminal (pruned when counted: self-healing)."""
        return f"{self.prefix}:tenant:{{{tenant}}}:active"

    def tenant_running(self, tenant: str) -> str:
        """Set of the tenant's run ids handed to a worker and not yet seen terminal (pruned when counted)."""
        return f"{self.prefix}:{{dispatch}}:tenant:{tenant}:running"

    def tenant_queue(self, tenant: str) -> str:
        """List of the tenant's run ids waiting for a worker, oldest first."""
        return f"{self.prefix}:{{dispatch}}:tenant:{tenant}:queue"

    def tenant_submissions(self, tenant: str) -> str:
        """Sorted set run id -> acceptance time (ms): the sliding window of the submission rate."""
        return f"{self.prefix}:tenant:{{{tenant}}}:submissions"

    def tenant_uploads(self, tenant: str, day: str) -> str:
        """Upload bytes of the tenant on one UTC day (``YYYYMMDD``), expiring after it."""
        return f"{self.prefix}:tenant:{{{tenant}}}:uploads:{day}"

    def tenant_disk(self, tenant: str) -> str:
        """Hash project id -> bytes its directory measured (``<bytes>:<expires ms>``: an import's reservation while
        it unpacks): the tenant's disk usage is the sum (`store.quotas`)."""
        return f"{self.prefix}:tenant:{{{tenant}}}:disk"

    # --- project snapshots, per tenant (`store.snapshots`, `store.snapshot_gc`) ---

    def snap_blob(self, tenant: str, digest: str) -> str:
        """One file's bytes by sha256 (a TTL, refreshed by every snapshot that references it)."""
        return f"{self.prefix}:snap:blob:{{{tenant}}}:{digest}"

    def snap_tree(self, tenant: str, snapshot_id: str) -> str:
        """A snapshot's manifest (JSON, a TTL like the blobs)."""
        return f"{self.prefix}:snap:tree:{{{tenant}}}:{snapshot_id}"

    def snap_stamps(self, tenant: str) -> str:
        """Sorted set ``b:<digest>`` / ``t:<snapshot id>`` -> the `snap_clock` value of the last snapshot that
        referenced it: the GC deletes only what no snapshot touched since it started."""
        return f"{self.prefix}:tenant:{{{tenant}}}:snap:stamps"

    def snap_sizes(self, tenant: str) -> str:
        """Hash digest -> bytes of each stored blob of the tenant (the snapshot quota's ledger)."""
        return f"{self.prefix}:tenant:{{{tenant}}}:snap:sizes"

    def snap_bytes(self, tenant: str) -> str:
        """The sum of `snap_sizes` (kept with it in the same scripts; the GC recounts it)."""
        return f"{self.prefix}:tenant:{{{tenant}}}:snap:bytes"

    def snap_clock(self, tenant: str) -> str:
        """Counter: one tick per snapshot stored and per GC pass."""
        return f"{self.prefix}:tenant:{{{tenant}}}:snap:clock"

    def snap_tenants(self) -> str:
        """Set of tenants that have stored snapshots (what a full GC pass walks)."""
        return f"{self.prefix}:{{global}}:snap:tenants"

    def snap_runs(self, tenant: str) -> str:
        """Set of the tenant's runs that stored snapshots (the GC keeps those of runs not yet ended)."""
        return f"{self.prefix}:tenant:{{{tenant}}}:snap:runs"

    def run_snapshots(self, run_id: str) -> str:
        """Set of the snapshot ids a run took: while the run has not ended they are live (kept by the GC)."""
        return f"{self.prefix}:run:{{{run_id}}}:snaps"

    def run_snap_ops(self, run_id: str) -> str:
        """Hash op id -> the snapshot taken right after that side-effect operation (a replay restores it)."""
        return f"{self.prefix}:run:{{{run_id}}}:snap_ops"

    def legacy_snap_blob(self, digest: str) -> str:
        """A blob stored before snapshots were per tenant (no tenant part: read as a fallback; the GC gives it a
        TTL)."""
        return f"{self.prefix}:snap:blob:{digest}"

    def legacy_snap_tree(self, snapshot_id: str) -> str:
        return f"{self.prefix}:snap:tree:{snapshot_id}"

    def tenant_runs(self, tenant: str) -> str:
        """Sorted set run id -> acceptance time (s): every run the tenant submitted, for listing (`store.run_index`)."""
        return f"{self.prefix}:tenant:{{{tenant}}}:runs"

    def tenant_runs_indexed(self) -> str:
        """Marker: the runs accepted before `tenant_runs` existed were added to it (`RunIndex.backfill`)."""
        return f"{self.prefix}:{{global}}:tenant-runs:indexed"

    def dispatch_tenants(self) -> str:
        """List of tenants with waiting runs: the round-robin ring of the fair dispatcher."""
        return f"{self.prefix}:{{dispatch}}:tenants"

    def dispatch_enqueued(self) -> str:
        """Hash run id -> 1: the runs whose inbox entry is in the stream (the acceptance's dispatch step adds a run
        once, however often it is retried; the trim drops the field with the entry)."""
        return f"{self.prefix}:{{dispatch}}:enqueued"

    def accepting(self) -> str:
        """Sorted set run id -> start time (s) of an acceptance in progress: its steps touch several slots, so an
        acceptance a crash interrupted is found here and completed or undone (`tier2.store.accept`)."""
        return f"{self.prefix}:{{global}}:accepting"

    def run_accept(self, run_id: str) -> str:
        """Hash: the acceptance plan of a run (its keys and arguments, JSON) and the steps done, in the run's slot
        (`tier2.store.accept`)."""
        return f"{self.prefix}:run:{{{run_id}}}:accept"

    def layout(self) -> str:
        """The key layout of the store (``2``: hash-tagged), written once the old names were renamed
        (`tier2.store.layout`)."""
        return f"{self.prefix}:{{global}}:layout"

    # --- the debug case library (`tier2.learning`): failure signature -> verified fix ---

    def cases(self, scope: str) -> str:
        """Hash signature key -> JSON case, per scope: ``engine`` (engine facts, shared by every tenant) or
        ``tenant:<id>`` (cases that carry that tenant's game content, visible to it alone)."""
        return f"{self.prefix}:cases:{{{scope}}}"

    def case_stats(self, scope: str) -> str:
        """Hash ``<signature key>:<counter>`` -> count (hits, fixer applied/fixed/failed, offered) of a scope."""
        return f"{self.prefix}:cases:{{{scope}}}:stats"

    def template(self, method: str) -> tuple[str, str]:
        """(prefix, suffix) of a one-argument key method, for Lua scripts that build the key of an id they read
        (``prefix .. id .. suffix``): the key names still come from this module only."""
        before, _, after = getattr(self, method)("\0").partition("\0")
        return before, after

    def run_retained(self, run_id: str) -> list[str]:
        """Every key of one run (its record and each ``run_*`` family; the live channel is not a key): what the
        retention bound expires once the run has ended (`tier2.store.retention`). A new ``run_*`` family belongs
        here (`tests/unit/store/test_keys.py` fails until it is)."""
        return [self.run(run_id), self.run_events(run_id), self.run_event_seq(run_id), self.run_event_tokens(run_id),
                self.run_trajectory(run_id), self.run_trajectory_order(run_id), self.run_lease(run_id),
                self.run_fence(run_id), self.run_attempts(run_id), self.run_cancel(run_id), self.run_commands(run_id),
                self.run_blocks(run_id), self.run_checkpoints(run_id), self.run_latest(run_id), self.run_ops(run_id),
                self.run_op_began(run_id), self.run_op_by(run_id), self.run_op_applied(run_id),
                self.run_budget(run_id), self.run_budget_calls(run_id), self.run_snapshots(run_id),
                self.run_snap_ops(run_id), self.run_accept(run_id)]

"""The design phase: a read-only studio (leader + designers) turns the goal into design files and a checked spec.

Steps (each a plan node with a status and evidence, streamed as ``plan_changed`` events):

1. ``design.brief`` — the leader splits the goal: title, genre, one task per designer;
2. ``design.<role>`` — every designer (gameplay, level, economy, ui, audio, vfx, assets) answers its role's JSON,
   concurrently, each on the run's ledger/breakers/trajectory with its own route and its own checkpoints
   (``run:<id>:checkpoints:designer.<role>``); each answer is posted to the leader's mailbox (durable);
3. ``design.spec`` — the leader converges the answers into the spec; tier2 validates it against the JSON Schema
   (one repair turn), closes the mailbox only when drained (a late message makes the leader converge again), and
   writes ``docs/design/<role>.md``, ``docs/design/GDD.md``, ``data/*.json`` and ``design/spec.json``.

Reuse: a resumed attempt skips designers whose answer is in the mailbox and continues a designer mid-turn from
its own checkpoint; a finished design of this run (``.tier2/design/state.json``) is reused as is. A follow-up in
the thread is a new goal version: only the designers its words touch are invalidated and re-run; the others'
verified answers are reused. After a pause (``pause_after: design``) the next run re-reads ``design/spec.json``
(a person may have edited it), validates it, and goes on to implement.
"""

from __future__ import annotations

import asyncio
import builtins
import json
import logging
from pathlib import Path
from typing import Any

from agentscope.agent import Agent
from agentscope.message import Msg, UserMsg

from tier2.assembly.team import build_design_agent, read_only_tools
from tier2.design import ROLES, AnswerError, DesignerAnswer, LeaderSplit, parse_answer
from tier2.design.goal import compose_goal
from tier2.design.paths import DOCS_DIR, SPEC_FILE, STATE_FILE
from tier2.design.planning import TESTABLE, declare_design, declare_work
from tier2.design.roles import FollowUpAnswer, render_gdd, render_role_doc
from tier2.design.spec import spec_sha256, validate_spec
from tier2.errors import Tier2Error
from tier2.events import GoalVersioned, PlanChanged
from tier2.hostio import ProjectDir
from tier2.middleware.checkpoint import CheckpointMiddleware, restorable_state
from tier2.packs.registry import allowed_packs
from tier2.plan import GoalVersion, Plan, check_plan, file_versions, game_version, spec_versions, stable_ids
from tier2.runs.loop.context import DesignOutcome
from tier2.runs.loop.layers import Additions
from tier2.runs.loop.phases.base import PhaseInput, RunControl, Verdict
from tier2.runs.loop.phases.pack_fit import pack_advice
from tier2.runs.loop.phases.replan import follow_up_requirements, goal_diff, invalidations, person_edit, stop_for
from tier2.runs.loop.turns import text_of
from tier2.store.checkpoints import CheckpointMeta
from tier2.store.team import TeamMailbox, agent_checkpoints
from tier2.workspace import snapshot
from tier2.workspace.projects import switch_genre

__all__ = ["DOCS_DIR", "DesignFailed", "DesignOutcome", "DesignPhase", "STATE_FILE", "SPEC_FILE", "store_plan",
           "unbuildable"]

log = logging.getLogger(__name__)

MAX_CONVERGE = 3
MAX_STATE_BYTES = 8_000_000


class DesignFailed(Tier2Error):
    """The design could not be made valid (an answer or the spec failed its schema)."""


def store_plan(project: Path, plan: Plan) -> None:
    """The plan as the run ended (statuses, the state versions of what was verified) into the design state: the
    next goal version starts from it."""
    pdir = ProjectDir(project)
    try:
        state = json.loads(pdir.read_text(STATE_FILE, max_bytes=MAX_STATE_BYTES))
    except (OSError, ValueError):
        return  # no design state (a run without a design phase): nothing to update
    if isinstance(state, dict):
        state["plan"] = plan.model_dump(mode="json")
        pdir.write_text(STATE_FILE, json.dumps(state, indent=2, ensure_ascii=False))


def unbuildable(spec: dict[str, Any]) -> str:
    """Why the design says this pack cannot build the brief (empty: it can): the spec's ``scope``."""
    scope = spec.get("scope") or {}
    if scope.get("buildable", True):
        return ""
    said = "; ".join(f"{u.get('what')}: {u.get('reason')}" for u in scope.get("unsupported") or []
                     if isinstance(u, dict))
    return "not buildable: " + (said or "the design says this pack cannot build the brief")[:1500]


class DesignPhase:
    """The design studio's phase. A design that says the pack cannot build the brief (``scope.buildable`` false:
    no genre of the pack, a language the reader cannot read, an ask no pack here meets) ends the run ``failed``
    with the spec's reasons, the design written for a person or a model to take over — never a substitute game."""

    name = "design"

    async def run(self, run: RunControl, inp: PhaseInput) -> Verdict:
        studio = _Studio(run, inp)
        try:
            outcome = await studio.run()
        except DesignFailed as exc:
            await studio.set("design.spec", "failed", reason=str(exc)[:1000])
            return Verdict("failed", f"design: {exc}")
        run.designed(outcome)
        studio.save_state(status="designing")
        await run.record_plan()  # the goal version this run is on, and the plan the writer starts from
        goal = outcome.plan.current_goal()
        if goal is not None and goal.run_id == run.ctx.run_id and goal.version == outcome.plan.goal_version:
            await run.ctx.emit(GoalVersioned(run_id=run.ctx.run_id, goal_version=goal.version, author=goal.author,
                                             text=goal.text[:4000], diff=goal.diff))
        if outcome.end:  # the follow-up cannot be delivered: the design stays, the writer does not start
            await studio.set("phase.implement", "blocked", reason=outcome.end["reason"][:1000])
            await studio.set("delivery", "blocked", reason=outcome.end["reason"][:1000],
                             options=outcome.end.get("options") or None)
            studio.save_state(status="designed")
            options = outcome.end.get("options") or []
            return Verdict("stopped", outcome.end["reason"] + (("; options: " + "; ".join(options))[:1500]
                                                               if options else ""))
        why = unbuildable(outcome.spec)
        served = list(run.ctx.rt.packs.values()) or allowed_packs(run.ctx.rt.settings)  # every pack it could use
        advice = pack_advice(run.ctx.brief, run.ctx.pack, served)
        if advice.refuse:  # the brief asks for another pack's engine: never built with this one's
            why = "not buildable: " + advice.refuse
        elif why and advice.note:
            why = f"{why}; {advice.note}"[:1800]
        if why:
            await studio.set("phase.implement", "blocked", reason=why[:1000])
            studio.save_state(status="designed")
            return Verdict("failed", why)
        if run.ctx.req.pause_after == "design":
            await studio.set("phase.implement", "blocked", reason="paused after design (pause_after=design)")
            studio.save_state(status="paused")
            return Verdict("stopped", "paused after design (pause_after=design): read and edit docs/design/ and "
                           f"{SPEC_FILE}, then continue the run")
        studio.save_state(status="designed")
        return Verdict(None, "design done")


class _Studio:
    def __init__(self, run: RunControl, inp: PhaseInput) -> None:
        self.run_, self.ctx, self.inp = run, run.ctx, inp
        self.project = inp.project
        self.rt = run.ctx.rt
        store = self.rt.store
        self.mailbox = TeamMailbox(store.r, store.keys, self.ctx.run_id, "leader", self.ctx.fence)
        self.previous = self._load_state()
        self.plan = Plan()
        self.tools: list[Any] = []
        self.answer: FollowUpAnswer | None = None
        #: the nodes this run executed (the others are reused)
        self.executed: builtins.set[str] = set()
        self.old_spec: dict[str, Any] | None = None

    # --- state ----------------------------------------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any] | None:
        try:
            return json.loads(ProjectDir(self.project).read_text(STATE_FILE, max_bytes=MAX_STATE_BYTES))  # type: ignore[no-any-return]
        except (OSError, ValueError):
            return None

    def save_state(self, status: str) -> None:
        state = {"run_id": self.ctx.run_id, "status": status, "goals": self.plan.goals,
                 "plan": self.plan.model_dump(mode="json"), "answers": self.answers_json,
                 "answer_versions": self.answer_versions,
                 "spec_sha256": spec_sha256(self.spec), "split": self.split_json, "spec": self.spec}
        ProjectDir(self.project).write_text(STATE_FILE, json.dumps(state, indent=2, ensure_ascii=False))

    async def set(self, node: str, status: str, **evidence: Any) -> None:
        if node not in self.plan.nodes:
            return
        self.plan.set(node, status, **evidence)  # type: ignore[arg-type]
        await self.announce(node)

    async def announce(self, node: str) -> None:
        n = self.plan.nodes[node]
        await self.ctx.emit(PlanChanged(run_id=self.ctx.run_id, node=n.id, kind=n.kind, status=n.status,
                                        goal_version=self.plan.goal_version, plan_version=self.plan.plan_version,
                                        evidence=n.evidence))

    async def publish(self) -> None:
        await self.run_.update(plan=self.plan.summary())

    # --- the phase ------------------------------------------------------------------------------------------------

    async def run(self) -> DesignOutcome:
        ctx = self.ctx
        await self.run_.phase("design", f"leader + {len(ROLES)} designers")
        prev = self.previous
        self.answers_json: dict[str, Any] = {}
        #: role -> the goal version its answer in ``answers_json`` was made for (the newest answer's tables win)
        self.answer_versions: dict[str, int] = {}
        self.split_json: dict[str, Any] = {}
        self.spec: dict[str, Any] = {}
        rerun: builtins.set[str] = set()
        invalidated: dict[str, str] = {}
        edited = False
        brief = self.inp.brief.strip()
        if prev is not None:
            self.plan = Plan.model_validate(prev["plan"])
            self.answers_json = dict(prev.get("answers") or {})
            made = prev.get("answer_versions")
            self.answer_versions = {str(a): v for a, v in made.items() if isinstance(v, int)} \
                if isinstance(made, dict) else {}
            self.split_json = dict(prev.get("split") or {})
            self.old_spec = prev.get("spec") if isinstance(prev.get("spec"), dict) else None
            same_run = prev.get("run_id") == ctx.run_id
            declare_design(self.plan)
            if not same_run:
                edited = await self._person_edit(prev, invalidated)
                if brief not in self.plan.goals:  # a follow-up: goal version n+1, whatever it says
                    self.answer = await self._read_follow_up(brief)
                    version = self.plan.begin_goal(brief, "user", ctx.run_id)
                    reasons = invalidations(self.answer, version.version)
                    invalidated |= self.plan.invalidate(reasons, "user", cause=f"goal v{version.version}: "
                                                        + brief[:200])
                    rerun = set(reasons)
        else:
            self.plan.goals = [brief]
            self.plan.history = [GoalVersion(version=1, text=brief, author="user", run_id=ctx.run_id)]
            declare_design(self.plan)
            rerun = {"design.brief", *(f"design.{r}" for r in ROLES)}
        goal = compose_goal(self.plan.goals)
        for node in invalidated:
            await self.announce(node)
        await self.publish()
        spec = await self._design(goal, rerun, prev, follow=self.answer is not None)
        self.spec = spec
        await self._plan_work(spec, invalidated)
        await self.publish()
        reused = sorted(r for r in ROLES if f"design.{r}" not in rerun)
        end: dict[str, Any] = {}
        stop = stop_for(self.answer) if self.answer is not None else None
        if stop is not None:
            end = {"kind": "blocked" if stop[0].startswith("blocked") else "unverified", "reason": stop[0],
                   "options": stop[1]}
        return DesignOutcome(spec=spec, plan=self.plan, goal=goal, reused=reused,
                             rerun=sorted(r.removeprefix("design.") for r in rerun if r.startswith("design.")
                                          and r not in ("design.brief", "design.spec")),
                             edited=edited, previous_spec=self.old_spec, executed=set(self.executed), end=end)

    async def _person_edit(self, prev: dict[str, Any], invalidated: dict[str, str]) -> bool:
        """A person edited ``design/spec.json`` since tier2 wrote it: a goal version by that person, the spec on
        disk the base of what follows (validated), and the work whose spec sections changed invalidated."""
        disk = self._disk_spec()
        if disk is None or not person_edit(prev.get("spec_sha256"), spec_sha256(disk)):
            return False
        errors = validate_spec(disk)
        if errors:
            raise DesignFailed(f"{SPEC_FILE} (edited) fails the JSON Schema: " + "; ".join(errors[:8]))
        version = self.plan.begin_goal(f"{SPEC_FILE} edited by a person", "person", self.ctx.run_id)
        disk = stable_ids(self.old_spec, disk)
        declare_work(self.plan, disk, self.ctx.pack.genre_of(self.project).spec.data_tables)
        hit = self.plan.revalidate(spec_versions(disk), "person", cause=f"goal v{version.version}: {SPEC_FILE} "
                                   "edited")
        version.diff = goal_diff(self.old_spec, disk, hit, self.plan, ())
        invalidated.update(hit)
        self.old_spec = disk
        return True

    def _disk_spec(self) -> dict[str, Any] | None:
        try:
            spec = json.loads(ProjectDir(self.project).read_text(SPEC_FILE, max_bytes=MAX_STATE_BYTES))
        except (OSError, ValueError):
            return None
        return spec if isinstance(spec, dict) else None

    async def _read_follow_up(self, text: str) -> FollowUpAnswer:
        """The leader reads the follow-up (one turn; the offline leader with the brief reader): every part of it
        becomes a change, or is kept as unbuildable, contradictory or not understood."""
        genre = (self.old_spec or {}).get("genre") or self.split_json.get("genre") or ""
        message = (f"<brief>\n{compose_goal(self.plan.goals)}\n</brief>\n<design-genre>{genre}</design-genre>\n"
                   f"<follow-up>\n{text}\n</follow-up>\nRead this follow-up: answer the changes it asks for.")
        try:
            answer: FollowUpAnswer = await self._turn("leader", message, FollowUpAnswer, resume=False)
        except AnswerError as exc:  # never dropped: the whole follow-up stays, as not understood
            from tier2.design.roles import FollowUpProblem
            return FollowUpAnswer(uninterpreted=[FollowUpProblem(text=text[:500], reason=str(exc)[:300])])
        self.executed.add("design.brief")
        return answer

    async def _plan_work(self, spec: dict[str, Any], invalidated: dict[str, str]) -> None:
        """The writer's tasks, the build, the validation, the requirements and the delivery from the spec; work
        whose inputs changed is invalidated (by state version); the plan passes its static checks; the goal
        version records its diff."""
        declare_work(self.plan, spec, self.ctx.pack.genre_of(self.project).spec.data_tables)
        current = spec_versions(spec) | {f"answer:{a}": spec_sha256(b) for a, b in self.answers_json.items()} \
            | {"source": game_version(snapshot(self.project))} | file_versions(self.project, sorted(
            {i.name.removeprefix("file:") for n in self.plan.nodes.values() for i in n.inputs
             if i.name.startswith("file:")}))
        hit = self.plan.revalidate(current, "user" if self.answer is not None else "leader",
                                   cause=f"goal v{self.plan.goal_version}: inputs changed")
        invalidated.update(hit)
        # what a change invalidated only by following the edges, and whose own inputs did not change, is reused
        for node in self.plan.restore(current):
            invalidated.pop(node, None)
        for node in sorted(set(hit) | {n for n, x in self.plan.nodes.items() if x.evidence.get("reused")}):
            await self.announce(node)
        problems = check_plan(self.plan, [str(r["id"]) for r in spec["requirements"]], TESTABLE)
        if problems:
            raise DesignFailed("the plan fails its static checks: " + "; ".join(problems[:6]))
        version = self.plan.current_goal()
        if version is not None and version.version == self.plan.goal_version and self.previous is not None:
            version.diff = goal_diff(self.old_spec, spec, invalidated, self.plan, self.executed)

    # --- agents ---------------------------------------------------------------------------------------------------

    async def _agent(self, role: str) -> tuple[Agent, tuple[int, dict[str, Any], CheckpointMeta] | None]:
        ctx = self.ctx
        ckpts = agent_checkpoints(self.rt.store.r, self.rt.store.keys, ctx.run_id, role)
        own = CheckpointMiddleware(ckpts, ctx.fence, lambda: {"phase": "design", "role": role})
        parts = ctx.agent(role, project=self.project, additions=[Additions(checkpoint=(own,))])
        latest = await ckpts.latest()
        agent = build_design_agent(
            role=role, project=self.project, pack=self.ctx.pack, model=parts.models.model, tools=self.tools,
            fallback_model=parts.models.fallback, layers=parts.layers, cancelled=ctx.cancelled,
            state_json=restorable_state(latest[1]) if latest else None)
        return agent, latest

    async def _reply(self, agent: Agent, role: str, message: Msg | None) -> str:
        return text_of((await self.run_.agent_turn(agent, role, message)).final)

    async def _turn(self, role: str, message: str, model: type[Any], resume: bool = True) -> Any:
        """One agent's answer as ``model``: resumed from its own checkpoint when it has one, one repair turn when
        the answer does not parse."""
        agent, latest = await self._agent(role)
        if resume and latest is not None and latest[2].get("stage") == "turn_done" and agent.state.context:
            text = text_of(agent.state.context[-1])  # finished before the crash: its answer is in its state
        elif resume and latest is not None and latest[2].get("stage") == "turn":
            text = await self._reply(agent, role, None)  # continue the interrupted turn
        else:
            text = await self._reply(agent, role, UserMsg("user", message))
        try:
            return parse_answer(text, model)
        except AnswerError as exc:
            text = await self._reply(agent, role, UserMsg("user", f"{exc}. Answer again with the JSON object only."))
            return parse_answer(text, model)

    # --- the work -------------------------------------------------------------------------------------------------

    async def _design(self, goal: str, rerun: builtins.set[str], prev: dict[str, Any] | None,
                      follow: bool = False) -> dict[str, Any]:
        ctx = self.ctx
        if self.run_.view.writer is not None:
            self.tools = read_only_tools(self.project)
        if not rerun and prev is not None:  # resumed after the design, a continue, or a follow-up no designer redoes
            return await self._reuse_spec(prev, follow)
        brief_block = f"<brief>\n{goal}\n</brief>"
        log_ = {m["from"]: m for m in await self.mailbox.all() if m.get("kind") == "split"}
        if "design.brief" in rerun or not self.split_json:
            if "leader" in log_:
                self.split_json = log_["leader"]["body"]
            else:
                await self.set("design.brief", "running")
                self.executed.add("design.brief")
                split = await self._turn("leader", brief_block + "\nSplit this brief for the designers.",
                                         LeaderSplit, resume=False)
                self.split_json = split.model_dump()
                await self.mailbox.post("leader", "split", self.split_json)
            await self.set("design.brief", "verified", genre=self.split_json.get("genre"),
                           title=self.split_json.get("title"))
        tasks = self.split_json.get("tasks") or {}
        posted = {m["from"]: m["body"] for m in await self.mailbox.all() if m.get("kind") == "answer"}

        async def one(area: str) -> None:
            node, role = f"design.{area}", f"designer.{area}"
            if node not in rerun and area in self.answers_json:
                return
            if role in posted:  # answered in an earlier attempt of this run
                self.answers_json[area] = posted[role]
                self.answer_versions[area] = self.plan.goal_version
                await self.set(node, "verified", source="mailbox (earlier attempt)")
                return
            ticket = self.plan.start(node)
            self.executed.add(node)
            await self.announce(node)
            try:
                answer = await self._turn(role, f"{brief_block}\n<task>{tasks.get(area, '')}</task>", DesignerAnswer)
            except AnswerError as exc:
                if self.plan.finish(ticket, "failed", reason=str(exc)[:500]):
                    await self.announce(node)
                return
            answer.role = area
            body = answer.model_dump(mode="json")
            if not self.plan.finish(ticket, "verified", {f"answer:{area}": spec_sha256(body)},
                                    requirements=len(answer.requirements), tables=sorted(answer.tables),
                                    route=ctx.policy.agent_route(role)[0]):
                log.warning("run %s: %s answered after its node moved on: answer dropped", ctx.run_id, role)
                return
            self.answers_json[area] = body
            self.answer_versions[area] = self.plan.goal_version
            if not await self.mailbox.post(role, "answer", body):
                log.warning("run %s: the leader's mailbox closed before %s answered", ctx.run_id, role)
            await self.announce(node)

        await asyncio.gather(*(one(a) for a in ROLES))
        for area in ROLES:
            node = self.plan.nodes[f"design.{area}"]
            if node.status == "invalidated" and area in self.answers_json:
                await self.set(f"design.{area}", "verified", reused_from=prev.get("run_id") if prev else None)
        return await self._converge(goal, brief_block)

    async def _converge(self, goal: str, brief_block: str) -> dict[str, Any]:
        await self.set("design.spec", "running")
        self.executed.add("design.spec")
        for m in await self.mailbox.take():  # the answers (and notes) posted so far
            if m.get("kind") == "answer":
                area = m["from"].removeprefix("designer.")
                if area not in self.answers_json:
                    self.answers_json[area] = m["body"]
                    self.answer_versions[area] = self.plan.goal_version
        notes: list[dict[str, Any]] = []
        spec: dict[str, Any] = {}
        for _ in range(MAX_CONVERGE):
            blocks = [f'<designer-answer role="{a}">\n{json.dumps(self.answers_json[a], ensure_ascii=False)}\n'
                      "</designer-answer>" for a in ROLES if a in self.answers_json]
            blocks += [f'<team-message from="{n["from"]}">{n["body"]}</team-message>' for n in notes]
            message = brief_block + "\nConverge these answers into the design spec.\n" + "\n".join(blocks)
            spec = await self._spec_turn(message)
            late = await self.mailbox.close_if_drained()  # closes only if nothing arrived meanwhile
            if not late:
                break
            notes += [m for m in late if m.get("kind") != "split"]
            for m in late:
                if m.get("kind") == "answer":
                    area = m["from"].removeprefix("designer.")
                    self.answers_json[area] = m["body"]
                    self.answer_versions[area] = self.plan.goal_version
        else:
            raise DesignFailed(f"messages kept arriving while the leader converged ({MAX_CONVERGE} rounds)")
        spec = self._versioned(stable_ids(self.old_spec, spec))
        self._write(spec, goal)
        await self.set("design.spec", "verified", sha256=spec_sha256(spec), requirements=len(spec["requirements"]),
                       genre=spec["genre"], buildable=spec["scope"]["buildable"], late_messages=len(notes))
        return spec

    def _versioned(self, spec: dict[str, Any]) -> dict[str, Any]:
        """The spec of the current goal version: the goal version stamped, and one requirement per part of the
        follow-up that did not become a change (kept from earlier versions too: nothing the user wrote is
        dropped)."""
        spec = dict(spec)
        reqs = [r for r in spec["requirements"] if not str(r.get("predicate", {}).get("gate", "")).startswith(
            "l2.follow_up.")]
        if self.answer is not None:
            used = [int(str(r["id"])[1:]) for r in [*reqs, *((self.old_spec or {}).get("requirements") or [])]
                    if str(r.get("id", ""))[1:].isdigit()]
            reqs += follow_up_requirements(self.answer, self.plan.goal_version, max(used, default=0) + 1)
        spec["requirements"] = reqs[:60]
        spec["goal_version"] = self.plan.goal_version
        return spec

    async def _spec_turn(self, message: str) -> dict[str, Any]:
        agent, _ = await self._agent("leader")
        text = await self._reply(agent, "leader", UserMsg("user", message))
        for attempt in range(2):
            try:
                spec = json.loads(_json_part(text))
            except ValueError as exc:
                errors = [f"not one JSON object: {exc}"]
            else:
                errors = validate_spec(spec)
                if not errors:
                    return spec  # type: ignore[no-any-return]
            if attempt == 0:
                text = await self._reply(agent, "leader", UserMsg("user", (
                    "The spec failed tier2's JSON Schema (design/spec.json):\n- " + "\n- ".join(errors[:12])
                    + "\nAnswer the corrected spec, JSON only.")))
        raise DesignFailed("the leader's spec failed the JSON Schema: " + "; ".join(errors[:8]))

    async def _reuse_spec(self, prev: dict[str, Any], follow: bool) -> dict[str, Any]:
        """The spec on disk (a person may have edited it after a pause), validated before the writer starts; a
        follow-up no designer redoes adds its requirements to it."""
        try:
            spec = json.loads(ProjectDir(self.project).read_text(SPEC_FILE, max_bytes=MAX_STATE_BYTES))
        except (OSError, ValueError) as exc:
            raise DesignFailed(f"{SPEC_FILE} cannot be read: {exc}") from exc
        errors = validate_spec(spec)
        if errors:
            raise DesignFailed(f"{SPEC_FILE} fails the JSON Schema: " + "; ".join(errors[:8]))
        if follow:
            spec = self._versioned(spec)
            ProjectDir(self.project).write_text(SPEC_FILE, json.dumps(spec, indent=2, ensure_ascii=False) + "\n")
        for area in ROLES:
            if self.plan.nodes[f"design.{area}"].status != "verified":
                await self.set(f"design.{area}", "verified", reused_from=prev.get("run_id"))
        await self.set("design.spec", "verified", sha256=spec_sha256(spec), reused_from=prev.get("run_id"))
        return spec  # type: ignore[no-any-return]

    def _write(self, spec: dict[str, Any], goal: str) -> None:
        """tier2 writes the studio's output into the project (designers never write)."""
        pdir = ProjectDir(self.project)  # never through a link the writer's sandbox planted (tier2.hostio)
        answers = {a: DesignerAnswer.model_validate(b) for a, b in self.answers_json.items()}
        for area, answer in answers.items():
            pdir.write_text(f"{DOCS_DIR}/{area}.md", render_role_doc(answer, goal, self.ctx.run_id))
        pdir.write_text(f"{DOCS_DIR}/GDD.md", render_gdd(spec, answers, self.plan.goals))
        pack = self.ctx.pack
        if spec.get("genre") in pack.genres:  # before anyone wrote code: the project starts from that genre
            switch_genre(pack, self.project, spec["genre"])
        allowed = set(pack.genre_of(self.project).spec.data_tables)
        # the designers' tables, the newest answers last (they hold the newest goal version's numbers): a reused
        # answer made for an older goal version never undoes a later one's change (a theme follow-up after a knob
        # change keeps the knob), then those made this run
        order = sorted(answers, key=lambda a: (self.answer_versions.get(a, 0), f"design.{a}" in self.executed,
                                               ROLES.index(a) if a in ROLES else 99))
        tables: dict[str, Any] = {}
        for area in order:
            tables.update({n: t for n, t in answers[area].tables.items() if n in allowed and isinstance(t, dict)})
        for name, table in tables.items():
            target = f"data/{name}"
            if pdir.is_file(target):  # the pack's tables only
                pdir.write_text(target, json.dumps(table, indent=2, ensure_ascii=False) + "\n")
        pdir.write_text(SPEC_FILE, json.dumps(spec, indent=2, ensure_ascii=False) + "\n")


def _json_part(text: str) -> str:
    raw = text.strip()
    if "```" in raw:
        raw = raw.split("```", 2)[1].removeprefix("json")
    if not raw.lstrip().startswith("{") and "{" in raw:
        raw = raw[raw.index("{"): raw.rindex("}") + 1]
    return raw

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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentscope.agent import Agent
from agentscope.message import Msg, UserMsg
from agentscope.model import ChatModelBase

from tier2.assembly.team import build_design_agent, read_only_tools
from tier2.design import ROLES, AnswerError, DesignerAnswer, LeaderSplit, Plan, classify_brief, parse_answer
from tier2.design.roles import render_gdd, render_role_doc, roles_touched_by
from tier2.design.spec import spec_sha256, validate_spec
from tier2.errors import Tier2Error
from tier2.events import PlanChanged
from tier2.hostio import ProjectDir
from tier2.middleware.checkpoint import CheckpointMiddleware, restorable_state
from tier2.models.routing import agent_models
from tier2.runs.layers import LayerContext, build_run_layers
from tier2.runs.phases import PhaseInput, Verdict
from tier2.store.checkpoints import CheckpointMeta
from tier2.store.team import TeamMailbox, agent_checkpoints
from tier2.validators.l2 import completion_map
from tier2.workspace.projects import switch_genre

if TYPE_CHECKING:
    from collections.abc import Callable

    from tier2.runs.session import RunSession
    from tier2.validators import ValidationReport

__all__ = ["DesignFailed", "DesignOutcome", "DesignPhase", "STATE_FILE", "SPEC_FILE"]

log = logging.getLogger(__name__)

SPEC_FILE = "design/spec.json"
DOCS_DIR = "docs/design"
STATE_FILE = ".tier2/design/state.json"  # tier2's own record of the design (agents may not write .tier2/)
MAX_CONVERGE = 3
MAX_STATE_BYTES = 8_000_000


class DesignFailed(Tier2Error):
    """The design could not be made valid (an answer or the spec failed its schema)."""


@dataclass
class DesignOutcome:
    """What the design phase leaves for validation and delivery."""

    spec: dict[str, Any]
    plan: Plan
    goal: str
    reused: list[str] = field(default_factory=list)
    rerun: list[str] = field(default_factory=list)
    edited: bool = False

    def completion(self, report: ValidationReport | None, why: str = "") -> dict[str, Any]:
        gates = [g for g in report.gates if g.layer == "L2"] if report is not None else None
        return completion_map(self.spec, gates, why)


def _msg_text(msg: Msg | None) -> str:
    return (msg.get_text_content() or "").strip() if msg is not None else ""


class DesignPhase:
    name = "design"

    def __init__(self, model_for: Callable[[str], ChatModelBase] | None = None) -> None:
        #: tests: the model of each design role (``leader``, ``designer.<area>``); default: the ``agents:`` route
        self.model_for = model_for

    async def run(self, session: RunSession, inp: PhaseInput) -> Verdict:
        studio = _Studio(session, inp, self.model_for)
        try:
            outcome = await studio.run()
        except DesignFailed as exc:
            await studio.set("design.spec", "failed", reason=str(exc)[:1000])
            return Verdict("failed", f"design: {exc}")
        session.design = outcome
        runner = session.runner
        if runner is not None:
            runner.design_spec, runner.design_goal = outcome.spec, outcome.goal
        if session.req.pause_after == "design":
            await studio.set("phase.implement", "blocked", reason="paused after design (pause_after=design)")
            studio.save_state(status="paused")
            return Verdict("stopped", "paused after design (pause_after=design): read and edit docs/design/ and "
                           f"{SPEC_FILE}, then continue the run")
        studio.save_state(status="designed")
        return Verdict(None, "design done")


class _Studio:
    def __init__(self, session: RunSession, inp: PhaseInput, model_for: Callable[[str], ChatModelBase] | None,
                 ) -> None:
        self.s, self.inp, self.model_for = session, inp, model_for
        self.project = inp.project
        self.rt = session.rt
        store = self.rt.store
        self.mailbox = TeamMailbox(store.r, store.keys, session.run_id, "leader", session.fence)
        self.previous = self._load_state()
        self.plan = Plan()
        self.tools: list[Any] = []

    # --- state ----------------------------------------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any] | None:
        try:
            return json.loads(ProjectDir(self.project).read_text(STATE_FILE, max_bytes=MAX_STATE_BYTES))  # type: ignore[no-any-return]
        except (OSError, ValueError):
            return None

    def save_state(self, status: str) -> None:
        state = {"run_id": self.s.run_id, "status": status, "goals": self.plan.goals,
                 "plan": self.plan.model_dump(mode="json"), "answers": self.answers_json,
                 "spec_sha256": spec_sha256(self.spec), "split": self.split_json}
        ProjectDir(self.project).write_text(STATE_FILE, json.dumps(state, indent=2, ensure_ascii=False))

    async def set(self, node: str, status: str, **evidence: Any) -> None:
        if node not in self.plan.nodes:
            return
        n = self.plan.set(node, status, **evidence)  # type: ignore[arg-type]
        await self.s.emit(PlanChanged(run_id=self.s.run_id, node=n.id, kind=n.kind, status=n.status,
                                      goal_version=self.plan.goal_version, evidence=n.evidence))

    async def publish(self) -> None:
        await self.s.update(plan=self.plan.summary())

    # --- the phase ------------------------------------------------------------------------------------------------

    async def run(self) -> DesignOutcome:
        s = self.s
        await s.phase("design", f"leader + {len(ROLES)} designers")
        prev = self.previous
        self.answers_json: dict[str, Any] = {}
        self.split_json: dict[str, Any] = {}
        self.spec: dict[str, Any] = {}
        rerun: builtins.set[str]
        if prev is not None:
            self.plan = Plan.model_validate(prev["plan"])
            self.answers_json = dict(prev.get("answers") or {})
            self.split_json = dict(prev.get("split") or {})
            same_run = prev.get("run_id") == s.run_id
            # a resumed attempt of this run, or a continue with the same goal: nothing changed
            follow = "" if same_run or self.inp.brief.strip() in self.plan.goals else self.inp.brief.strip()
            rerun = self._invalidated_by(follow, prev)
            if follow and rerun:  # a new goal version: only what it touches is redone
                self.plan.goal_version += 1
                self.plan.goals.append(follow)
        else:
            self.plan.goals = [self.inp.brief]
            rerun = {"design.brief", *(f"design.{r}" for r in ROLES)}
        self._nodes()
        goal = "\n".join(self.plan.goals)
        if prev is not None and rerun:
            hit = self.plan.invalidate(rerun, f"goal v{self.plan.goal_version}: {self.plan.goals[-1][:200]}")
            for node in hit:
                n = self.plan.nodes[node]
                await s.emit(PlanChanged(run_id=s.run_id, node=node, kind=n.kind, status=n.status,
                                         goal_version=self.plan.goal_version, evidence=n.evidence))
        await self.publish()
        spec = await self._design(goal, rerun, prev)
        self.spec = spec
        await self.publish()
        reused = sorted(r for r in ROLES if f"design.{r}" not in rerun)
        return DesignOutcome(spec=spec, plan=self.plan, goal=goal, reused=reused,
                             rerun=sorted(r.removeprefix("design.") for r in rerun if r.startswith("design.")
                                          and r not in ("design.brief", "design.spec")),
                             edited=bool(prev and prev.get("spec_sha256") and spec_sha256(spec) != prev[
                                 "spec_sha256"]))

    def _nodes(self) -> None:
        p = self.plan
        p.add("design.brief", "design")
        for r in ROLES:
            p.add(f"design.{r}", "design", ["design.brief"])
        p.add("design.spec", "design", [f"design.{r}" for r in ROLES])
        p.add("phase.implement", "phase", ["design.spec"])
        p.add("phase.validate", "phase", ["phase.implement"])

    def _invalidated_by(self, follow: str, prev: dict[str, Any]) -> builtins.set[str]:
        """Nodes a follow-up's words change (nothing for a resumed attempt of the same run or a bare "continue")."""
        if not follow:
            return set()
        guess = classify_brief(follow, self.rt.pack.genre_vocab())
        if guess.genre is not None and guess.genre != (self.split_json.get("genre")):
            return {"design.brief", *(f"design.{r}" for r in ROLES)}  # another game: everything changes
        return {f"design.{r}" for r in roles_touched_by(follow)}

    # --- agents ---------------------------------------------------------------------------------------------------

    async def _agent(self, role: str) -> tuple[Agent, tuple[int, dict[str, Any], CheckpointMeta] | None]:
        s = self.s
        m = agent_models(s.policy, role, scripted=self.model_for)
        model, fallback, name, route = m.model, m.fallback, m.route_name, m.route
        layers = build_run_layers(LayerContext(
            run_id=s.run_id, agent=role, policy=s.policy, route_name=name, route=route, runtime=self.rt,
            options=dict(s.req.options), fence=s.fence, durable=False, project=self.project, emit=s.emit))
        ckpts = agent_checkpoints(self.rt.store.r, self.rt.store.keys, s.run_id, role)
        layers.checkpoint = [CheckpointMiddleware(ckpts, s.fence, lambda: {"phase": "design", "role": role})]
        latest = await ckpts.latest()
        cancel = s.req.cancel
        agent = build_design_agent(
            role=role, project=self.project, pack=self.rt.pack, model=model, tools=self.tools,
            fallback_model=fallback, layers=layers, cancelled=(lambda: cancel.is_set()) if cancel else None,
            state_json=restorable_state(latest[1]) if latest else None)
        return agent, latest

    async def _reply(self, agent: Agent, role: str, message: Msg | None) -> str:
        final: Msg | None = None
        try:
            async for item in agent.reply_stream(message):
                if isinstance(item, Msg):
                    final = item
                    continue
                self.s.mapper.agent = role  # sync: no other designer's event is mapped in between
                for event in self.s.mapper.map(item):
                    await self.s.emit(event)
        finally:
            self.s.mapper.agent = "writer"  # the run's default agent: the writer's calls are never billed to a role
        if final is None and agent.state.context:
            final = agent.state.context[-1]
        return _msg_text(final)

    async def _turn(self, role: str, message: str, model: type[Any], resume: bool = True) -> Any:
        """One agent's answer as ``model``: resumed from its own checkpoint when it has one, one repair turn when
        the answer does not parse."""
        agent, latest = await self._agent(role)
        if resume and latest is not None and latest[2].get("stage") == "turn_done" and agent.state.context:
            text = _msg_text(agent.state.context[-1])  # finished before the crash: its answer is in its state
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

    async def _design(self, goal: str, rerun: builtins.set[str], prev: dict[str, Any] | None) -> dict[str, Any]:
        s = self.s
        if s.writer is not None:
            self.tools = read_only_tools(self.project)
        if not rerun and prev is not None:  # resumed after the design, or a continue: the spec on disk
            return await self._reuse_spec(prev)
        brief_block = f"<brief>\n{goal}\n</brief>"
        log_ = {m["from"]: m for m in await self.mailbox.all() if m.get("kind") == "split"}
        if "design.brief" in rerun or not self.split_json:
            if "leader" in log_:
                self.split_json = log_["leader"]["body"]
            else:
                await self.set("design.brief", "running")
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
                await self.set(node, "verified", source="mailbox (earlier attempt)")
                return
            await self.set(node, "running")
            try:
                answer = await self._turn(role, f"{brief_block}\n<task>{tasks.get(area, '')}</task>", DesignerAnswer)
            except AnswerError as exc:
                await self.set(node, "failed", reason=str(exc)[:500])
                return
            answer.role = area
            body = answer.model_dump(mode="json")
            self.answers_json[area] = body
            if not await self.mailbox.post(role, "answer", body):
                log.warning("run %s: the leader's mailbox closed before %s answered", s.run_id, role)
            await self.set(node, "verified", requirements=len(answer.requirements), tables=sorted(answer.tables),
                           route=s.policy.agent_route(role)[0])

        await asyncio.gather(*(one(a) for a in ROLES))
        for area in ROLES:
            node = self.plan.nodes[f"design.{area}"]
            if node.status == "invalidated" and area in self.answers_json:
                await self.set(f"design.{area}", "verified", reused_from=prev.get("run_id") if prev else None)
        return await self._converge(goal, brief_block)

    async def _converge(self, goal: str, brief_block: str) -> dict[str, Any]:
        await self.set("design.spec", "running")
        for m in await self.mailbox.take():  # the answers (and notes) posted so far
            if m.get("kind") == "answer":
                self.answers_json.setdefault(m["from"].removeprefix("designer."), m["body"])
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
                    self.answers_json[m["from"].removeprefix("designer.")] = m["body"]
        else:
            raise DesignFailed(f"messages kept arriving while the leader converged ({MAX_CONVERGE} rounds)")
        spec["goal_version"] = self.plan.goal_version
        self._write(spec, goal)
        await self._requirements(spec)
        await self.set("design.spec", "verified", sha256=spec_sha256(spec), requirements=len(spec["requirements"]),
                       genre=spec["genre"], buildable=spec["scope"]["buildable"], late_messages=len(notes))
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

    async def _reuse_spec(self, prev: dict[str, Any]) -> dict[str, Any]:
        """The spec on disk (a person may have edited it after a pause), validated before the writer starts."""
        try:
            spec = json.loads(ProjectDir(self.project).read_text(SPEC_FILE, max_bytes=MAX_STATE_BYTES))
        except (OSError, ValueError) as exc:
            raise DesignFailed(f"{SPEC_FILE} cannot be read: {exc}") from exc
        errors = validate_spec(spec)
        if errors:
            raise DesignFailed(f"{SPEC_FILE} fails the JSON Schema: " + "; ".join(errors[:8]))
        edited = spec_sha256(spec) != prev.get("spec_sha256")
        for area in ROLES:
            if self.plan.nodes[f"design.{area}"].status != "verified":
                await self.set(f"design.{area}", "verified", reused_from=prev.get("run_id"))
        await self._requirements(spec)
        await self.set("design.spec", "verified", sha256=spec_sha256(spec), reused_from=prev.get("run_id"),
                       edited_by_person=edited or None)
        return spec  # type: ignore[no-any-return]

    async def _requirements(self, spec: dict[str, Any]) -> None:
        """One plan node per requirement (pending until a gate verifies it); old ones the spec dropped go."""
        keep = {f"req.{r['id']}" for r in spec["requirements"]}
        for gone in [n for n in self.plan.nodes if n.startswith("req.") and n not in keep]:
            del self.plan.nodes[gone]
        for r in spec["requirements"]:
            role = r.get("role", "")
            deps = ["design.spec"] + ([f"design.{role}"] if role in ROLES else [])
            node = self.plan.add(f"req.{r['id']}", "requirement", deps)
            if node.status != "verified":
                node.status = "pending"
        self.plan.nodes["phase.implement"].status = "pending"
        self.plan.nodes["phase.validate"].status = "pending"

    def _write(self, spec: dict[str, Any], goal: str) -> None:
        """tier2 writes the studio's output into the project (designers never write)."""
        pdir = ProjectDir(self.project)  # never through a link the writer's sandbox planted (tier2.hostio)
        answers = {a: DesignerAnswer.model_validate(b) for a, b in self.answers_json.items()}
        for area, answer in answers.items():
            pdir.write_text(f"{DOCS_DIR}/{area}.md", render_role_doc(answer, goal, self.s.run_id))
        pdir.write_text(f"{DOCS_DIR}/GDD.md", render_gdd(spec, answers, self.plan.goals))
        pack = self.rt.pack
        if spec.get("genre") in pack.genres:  # before anyone wrote code: the project starts from that genre
            switch_genre(pack, self.project, spec["genre"])
        allowed = set(pack.genre_of(self.project).spec.data_tables)
        economy = answers.get("economy")
        for name, table in (economy.tables if economy else {}).items():
            target = f"data/{name}"
            if name in allowed and isinstance(table, dict) and pdir.is_file(target):  # the pack's tables only
                pdir.write_text(target, json.dumps(table, indent=2, ensure_ascii=False) + "\n")
        pdir.write_text(SPEC_FILE, json.dumps(spec, indent=2, ensure_ascii=False) + "\n")


def _json_part(text: str) -> str:
    raw = text.strip()
    if "```" in raw:
        raw = raw.split("```", 2)[1].removeprefix("json")
    if not raw.lstrip().startswith("{") and "{" in raw:
        raw = raw[raw.index("{"): raw.rindex("}") + 1]
    return raw

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
from typing import Any

from agentscope.agent import Agent
from agentscope.message import Msg, UserMsg

from tier2.assembly.team import build_design_agent, read_only_tools
from tier2.design import ROLES, AnswerError, DesignerAnswer, LeaderSplit, classify_brief, parse_answer
from tier2.design.paths import DOCS_DIR, SPEC_FILE, STATE_FILE
from tier2.design.roles import render_gdd, render_role_doc, roles_touched_by
from tier2.design.spec import spec_sha256, validate_spec
from tier2.errors import Tier2Error
from tier2.events import PlanChanged
from tier2.hostio import ProjectDir
from tier2.middleware.checkpoint import CheckpointMiddleware, restorable_state
from tier2.plan import Plan
from tier2.runs.loop.context import DesignOutcome
from tier2.runs.loop.layers import Additions
from tier2.runs.loop.phases.base import PhaseInput, RunControl, Verdict
from tier2.runs.loop.turns import text_of
from tier2.store.checkpoints import CheckpointMeta
from tier2.store.team import TeamMailbox, agent_checkpoints
from tier2.workspace.projects import switch_genre

__all__ = ["DOCS_DIR", "DesignFailed", "DesignOutcome", "DesignPhase", "STATE_FILE", "SPEC_FILE", "unbuildable"]

log = logging.getLogger(__name__)

MAX_CONVERGE = 3
MAX_STATE_BYTES = 8_000_000


class DesignFailed(Tier2Error):
    """The design could not be made valid (an answer or the spec failed its schema)."""


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
        why = unbuildable(outcome.spec)
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

    # --- state ----------------------------------------------------------------------------------------------------

    def _load_state(self) -> dict[str, Any] | None:
        try:
            return json.loads(ProjectDir(self.project).read_text(STATE_FILE, max_bytes=MAX_STATE_BYTES))  # type: ignore[no-any-return]
        except (OSError, ValueError):
            return None

    def save_state(self, status: str) -> None:
        state = {"run_id": self.ctx.run_id, "status": status, "goals": self.plan.goals,
                 "plan": self.plan.model_dump(mode="json"), "answers": self.answers_json,
                 "spec_sha256": spec_sha256(self.spec), "split": self.split_json}
        ProjectDir(self.project).write_text(STATE_FILE, json.dumps(state, indent=2, ensure_ascii=False))

    async def set(self, node: str, status: str, **evidence: Any) -> None:
        if node not in self.plan.nodes:
            return
        n = self.plan.set(node, status, **evidence)  # type: ignore[arg-type]
        await self.ctx.emit(PlanChanged(run_id=self.ctx.run_id, node=n.id, kind=n.kind, status=n.status,
                                      goal_version=self.plan.goal_version, evidence=n.evidence))

    async def publish(self) -> None:
        await self.run_.update(plan=self.plan.summary())

    # --- the phase ------------------------------------------------------------------------------------------------

    async def run(self) -> DesignOutcome:
        ctx = self.ctx
        await self.run_.phase("design", f"leader + {len(ROLES)} designers")
        prev = self.previous
        self.answers_json: dict[str, Any] = {}
        self.split_json: dict[str, Any] = {}
        self.spec: dict[str, Any] = {}
        rerun: builtins.set[str]
        if prev is not None:
            self.plan = Plan.model_validate(prev["plan"])
            self.answers_json = dict(prev.get("answers") or {})
            self.split_json = dict(prev.get("split") or {})
            same_run = prev.get("run_id") == ctx.run_id
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
                await ctx.emit(PlanChanged(run_id=ctx.run_id, node=node, kind=n.kind, status=n.status,
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
        ctx = self.ctx
        ckpts = agent_checkpoints(self.rt.store.r, self.rt.store.keys, ctx.run_id, role)
        own = CheckpointMiddleware(ckpts, ctx.fence, lambda: {"phase": "design", "role": role})
        parts = ctx.agent(role, project=self.project, additions=[Additions(checkpoint=(own,))])
        latest = await ckpts.latest()
        agent = build_design_agent(
            role=role, project=self.project, pack=self.rt.pack, model=parts.models.model, tools=self.tools,
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

    async def _design(self, goal: str, rerun: builtins.set[str], prev: dict[str, Any] | None) -> dict[str, Any]:
        ctx = self.ctx
        if self.run_.view.writer is not None:
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
                log.warning("run %s: the leader's mailbox closed before %s answered", ctx.run_id, role)
            await self.set(node, "verified", requirements=len(answer.requirements), tables=sorted(answer.tables),
                           route=ctx.policy.agent_route(role)[0])

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
            pdir.write_text(f"{DOCS_DIR}/{area}.md", render_role_doc(answer, goal, self.ctx.run_id))
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

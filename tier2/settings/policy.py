"""The hot policy's model (``config/policy/*.yaml``): model routes, prices, iterations, timeouts, durability,
budgets, breakers, gates, agent routing, workspace choice. One immutable `Policy` per run (`tier2.settings.loader`
loads it; `PolicyStore` hot-reloads it, validated against the security config's ceilings first).
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from tier2.settings.agents import check_routing, fallback_chain, resolve_role
from tier2.settings.companions import CompanionsPolicy
from tier2.settings.context import ContextPolicy
from tier2.settings.sandbox import SandboxPolicy
from tier2.settings.tenants import DEADLINE_S_CEILING, TOKENS_CEILING, USD_CEILING

__all__ = ["BreakerPolicy", "BudgetOverride", "BudgetPolicy", "DesignPolicy", "DurabilityPolicy", "EngineDocsPolicy",
           "LearningPolicy", "LegibilityPolicy", "ModelRoute", "Policy", "Price", "StuckPolicy", "TimeoutPolicy",
           "ToolsPolicy", "WriterPolicy"]


class ModelRoute(BaseModel):
    """One named model route: the offline policy, an OpenAI-compatible chat endpoint, or (``images``) an
    OpenAI-compatible images endpoint (``POST {base_url}/images/generations``; only the ``assets`` role uses one)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    kind: Literal["offline", "openai", "images"]
    model: str
    base_url: str | None = None
    api_key_env: str | None = None
    parameters: dict[str, Any] = {}
    context_size: int = 128_000
    stream: bool = True
    max_retries: int = 2
    fallback: str | None = None


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    input_per_mtok: float
    output_per_mtok: float

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        return (input_tokens * self.input_per_mtok + output_tokens * self.output_per_mtok) / 1_000_000


class WriterPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    max_iters: int = 24
    max_fix_rounds: int = 2


class TimeoutPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    build_s: float = 60.0
    validation_s: float = 45.0
    gate_s: float = 10.0
    boot_s: float = 15.0
    model_call_s: float = 120.0
    #: a streamed ``openai`` route's wait for its first token (SSE pings do not count) and between two chunks (HTTP
    #: read timeout); at most model_call_s: a server that accepts the request and then says nothing fails early
    first_token_s: float = Field(default=60.0, gt=0)


class DurabilityPolicy(BaseModel):
    """Leases, attempts and which tool calls are side effects (looked up by operation id on resume)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    lease_ttl_s: float = Field(default=15.0, gt=0)
    heartbeat_s: float = Field(default=3.0, gt=0)
    max_attempts: int = Field(default=3, ge=1)
    side_effect_tools: tuple[str, ...] = ("Write", "Edit")


class BudgetPolicy(BaseModel):
    """Default run governance limits (a run may override ``usd``, ``tokens`` and ``deadline_s``).

    The hard ledger reserves ``input estimate × input_margin + max output tokens`` at the price-table rate before
    every model call and refuses a call that would pass a cap; ``None`` switches a limit off."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    usd: float | None = Field(default=0.50, gt=0)
    tokens: int | None = Field(default=None, gt=0)
    deadline_s: float | None = Field(default=900.0, gt=0)
    #: reserved (and sent as ``max_tokens`` when the route sets none) for a call's output
    max_output_tokens: int = Field(default=16384, gt=0)
    #: multiplier on the chars/4 input estimate: the reservation must cover the provider's real token count
    input_margin: float = Field(default=1.25, ge=1.0)
    #: input tokens counted per image sent to the L3 scorer
    image_tokens: int = Field(default=1500, ge=0)
    #: AgentScope's soft budget: wrap up (no more tools) once a reply used this share of the cap; None = off
    soft_ratio: float | None = Field(default=0.8, gt=0, le=1)


class StuckPolicy(BaseModel):
    """Stuck-pattern thresholds (`tier2.middleware.stuck`); a tool step is fingerprinted on tool + args + result."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    window: int = Field(default=12, ge=2)  # recent tool steps the repeat and error patterns look at
    repeat: int = Field(default=4, ge=2)  # same tool + arguments + result this often in the window
    error: int = Field(default=4, ge=2)  # same tool + error text this often in the window (any arguments)
    alternation: int = Field(default=3, ge=2)  # A-B-A-B cycles in a row (3 cycles = 6 tool steps)
    monologue: int = Field(default=3, ge=1)  # model replies in a row without a tool call
    empty: int = Field(default=2, ge=1)  # model replies in a row with neither text nor a tool call
    compression: int = Field(default=3, ge=2)  # context compressions ...
    compression_steps: int = Field(default=6, ge=1)  # ... within this many model steps
    volatile: list[str] = []  # regexes masked in tool results before hashing (durations, per-call paths)


class BreakerPolicy(BaseModel):
    """Circuit breakers (`tier2.middleware.breakers`): any one stops the run with a reason naming it."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    steps_per_run: int = Field(default=80, ge=1)  # model calls in one run, all writer turns together
    steps_per_turn: int = Field(default=30, ge=1)  # model calls in one writer turn (one build-fix loop)
    model_call_s: float = Field(default=180.0, gt=0)  # wall clock of one whole model call, stream included
    tool_call_s: float = Field(default=150.0, gt=0)  # wall clock of one tool call
    stuck: StuckPolicy = StuckPolicy()


class ToolsPolicy(BaseModel):
    """What one tool call may carry; only lowers the security config's ``[tools]`` (a higher value is refused)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    max_write_bytes: int | None = Field(default=None, gt=0)  # None: the security config's max_write_bytes


class LegibilityPolicy(BaseModel):
    """Thresholds of the legibility gate ``l1.legible`` (`tier2.validators.legibility`); sizes in game pixels."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    overlap_px: float = Field(default=2.0, ge=0)  # overlaps and overruns up to this many px are tolerated
    duplicate_px: float = Field(default=4.0, ge=0)  # one string drawn twice this close = one label (a shadow copy)
    panel_share: float = Field(default=0.5, gt=0, lt=1)  # a shape holding more of a text's box than this is its panel
    min_font_px: float = Field(default=10.0, ge=0)
    min_contrast: float = Field(default=4.5, ge=1, le=21)  # WCAG 2 AA, normal text
    min_contrast_large: float = Field(default=3.0, ge=1, le=21)  # WCAG 2 AA, large text
    large_px: float = Field(default=24.0, gt=0)  # large text: at least 18 pt ...
    large_bold_px: float = Field(default=18.66, gt=0)  # ... or 14 pt bold


#: what a rule's failure is in one validation mode: a ``verdict`` (it fails the gate) or a ``finding`` (reported
#: with its evidence, never failing the validation)
VerdictAs = Literal["verdict", "finding"]

#: The rules the ``verdicts:`` table may name: design rules of tier2's own games and what a game nobody here wrote
#: is not at fault for. A defect of any game (does not boot, throws in the loop, freezes, a blank canvas, ignores
#: all input, blocks on a dialog, stops answering) is no rule here: it is always a verdict (mechanism, not config).
VERDICT_RULES: dict[str, str] = {
    "l1.legible": "texts that overlap, are cut, too small or too faint (WCAG contrast)",
    "l1.magic_numbers": "gameplay numbers in src/ that belong in data/",
    "l1.no_errors.blocked_request": "a blocked outside request the game plays without (fonts, analytics)",
    "l1.no_errors.blocked_request_error": "a console or page error caused by a blocked outside request",
    "l1.no_errors.service_worker": "a service-worker registration refused on the validation origin",
    "l1.no_errors.unshown_asset": "a 404 for an asset file the game never shows (it plays and draws)",
    "l1.engine_calls.undefined_read": "a read of an engine property the engine does not define (not a call)",
    "l1.engine_calls.version_unverified": "the engine version the game ships could not be checked (no type data)",
}


class RuleVerdict(BaseModel):
    """One rule's consequence per validation mode (contract: tier2's own games; generic: any other game)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    contract: VerdictAs = "verdict"
    generic: VerdictAs = "finding"


def _default_verdicts() -> dict[str, RuleVerdict]:
    return {rule: RuleVerdict() for rule in VERDICT_RULES}


class VerdictPolicy(BaseModel):
    """The ``verdicts:`` table of hot policy: rule -> {contract, generic} -> verdict | finding. Rules not named keep
    their default (a verdict in contract mode, a finding in generic mode); only `VERDICT_RULES` may be named."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    rules: dict[str, RuleVerdict] = Field(default_factory=_default_verdicts)

    @model_validator(mode="before")
    @classmethod
    def _table(cls, value: Any) -> Any:
        """The YAML table is the rules themselves (``verdicts: {l1.legible: {generic: finding}}``)."""
        if isinstance(value, dict) and "rules" not in value:
            unknown = sorted(set(value) - set(VERDICT_RULES))
            if unknown:
                raise ValueError(f"verdicts: unknown rule(s) {', '.join(unknown)}; a defect of any game is always a "
                                 f"verdict; the rules are: {', '.join(VERDICT_RULES)}")
            return {"rules": {**_default_verdicts(), **{k: RuleVerdict.model_validate(v) for k, v in value.items()}}}
        return value

    def as_(self, rule: str, mode: str) -> VerdictAs:
        """What a failure of ``rule`` is in ``mode`` (a rule not in the table is always a verdict)."""
        entry = self.rules.get(rule)
        if entry is None:
            return "verdict"
        return entry.generic if mode == "generic" else entry.contract


class LearningPolicy(BaseModel):
    """The debug case library (`tier2.learning`, config/policy/learning.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    cases: bool = True  # record verified fixes as cases and look failures up by exact signature
    fixers: bool = True  # apply a case's deterministic fixer (no model call) before the writer sees the failure
    #: fixer + re-validation rounds per failing check (inside the tool call: breakers.tool_call_s bounds them all)
    fixer_rounds: int = Field(default=2, ge=0, le=5)
    recall: Literal["auto", "off"] = "auto"  # near matches through mem0 when the `memory` extra is installed
    recall_top_k: int = Field(default=3, ge=1, le=20)
    recall_min_score: float = Field(default=0.35, ge=0.0, le=1.0)
    #: how long a recall may wait for mem0 to load (once per process); 0: never wait — the first recall starts the
    #: load and finds nothing, later ones use it
    recall_wait_s: float = Field(default=0.0, ge=0.0, le=600.0)
    offer_limit: int = Field(default=3, ge=0, le=20)  # known fixes offered to the writer per failing validation
    diff_chars: int = Field(default=2000, ge=0, le=20_000)  # of each offered fix's diff


class EngineDocsPolicy(BaseModel):
    """Engine-doc retrieval (`tier2.packs.retrieval`, config/policy/engine_docs.yaml)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    tool: bool = True  # give the writer the EngineDocs tool
    hints: bool = True  # append the docs of an API a failing Build/RunGame names to the result the writer reads
    hint_sections: int = Field(default=2, ge=1, le=5)  # sections appended per failing result
    hint_chars: int = Field(default=2500, ge=200, le=10_000)  # bound of the appended text


class DesignPolicy(BaseModel):
    """The design spec's requirements (config/policy/design.yaml; docs/design-phase.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    #: the mode of a requirement that comes from the brief's own words (``origin: brief`` — the player character,
    #: enemies, the setting, counts...): ``observe`` reports it in the completion map and never blocks delivery;
    #: ``enforce`` blocks like any enforced gate. A requirement's own ``mode`` in the spec, or a ``gates:`` entry for
    #: its gate id, wins. Structural requirements keep ``gates:`` (family ``l2.req``) and the L2 defaults.
    content_mode: Literal["observe", "enforce"] = "observe"


class BudgetOverride(BaseModel):
    """A run's own limits (``tier2 generate --budget-usd``, ``"budget"`` on POST /v1/runs); unset = policy.

    Only finite positive numbers up to the compiled ceilings (`tier2.settings.tenants`); a tenant's own ceiling
    (security config) is checked when the run is accepted (`tier2.runs.tenancy`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)
    usd: float | None = Field(default=None, gt=0, le=USD_CEILING,
                              description="USD cap for the run (all agents together)")
    tokens: int | None = Field(default=None, gt=0, le=TOKENS_CEILING,
                               description="input+output token cap for the run")
    deadline_s: float | None = Field(default=None, gt=0, le=DEADLINE_S_CEILING,
                                     description="wall-clock limit of the run in seconds")

    @field_validator("usd", "tokens", "deadline_s", mode="before")
    @classmethod
    def _non_finite_as_text(cls, value: Any) -> Any:
        """``Infinity``/``NaN`` (which Python's JSON parser accepts) are refused as "not a finite number"; passed
        on as text so the error, which echoes the input, stays valid JSON in a 422 response."""
        return str(value) if isinstance(value, float) and not math.isfinite(value) else value


class Policy(BaseModel):
    """Hot policy snapshot (immutable; one per run)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    default_model: str = "offline"
    models: dict[str, ModelRoute] = {}
    prices: dict[str, Price] = {}
    writer: WriterPolicy = WriterPolicy()
    timeouts: TimeoutPolicy = TimeoutPolicy()
    durability: DurabilityPolicy = DurabilityPolicy()
    breakers: BreakerPolicy = BreakerPolicy()
    gates: dict[str, Literal["observe", "enforce"]] = {}
    strict_acyclic: bool = False  # data gate policy: reject every crafting cycle, not just bootstrap-free ones
    l3_scorer: str | None = None  # a model route for the L3 visual score; None = the offline heuristic
    l3_timeout_s: float = 30.0
    budget: BudgetPolicy = BudgetPolicy()
    legibility: LegibilityPolicy = LegibilityPolicy()
    #: per rule and validation mode: a verdict (fails its gate) or a finding (reported, never failing)
    verdicts: VerdictPolicy = VerdictPolicy()
    #: agent role -> model route (`tier2.settings.agents`); a role without an entry uses ``default_model``
    agents: dict[str, str] = {}
    sandbox: SandboxPolicy = SandboxPolicy()  # may only lower the security config's [sandbox]
    tools: ToolsPolicy = ToolsPolicy()  # may only lower the security config's [tools]
    learning: LearningPolicy = LearningPolicy()
    context: ContextPolicy = ContextPolicy()  # context budgets per agent (config/policy/context.yaml)
    companions: CompanionsPolicy = CompanionsPolicy()  # explorer + reviewer (config/policy/companions.yaml)
    engine_docs: EngineDocsPolicy = EngineDocsPolicy()
    design: DesignPolicy = DesignPolicy()  # requirement modes of the design spec (config/policy/design.yaml)
    source_hash: str = ""

    @model_validator(mode="after")
    def _check_routing(self) -> Policy:
        check_routing(self.models, self.agents)
        return self

    def route(self, name: str | None) -> tuple[str, ModelRoute]:
        from tier2.errors import ModelRouteError

        key = name or self.default_model
        if key not in self.models:
            known = ", ".join(sorted(self.models)) or "(none)"
            raise ModelRouteError(f"unknown model route {key!r}; configured routes: {known}")
        return key, self.models[key]

    def agent_route(self, role: str, override: str | None = None) -> tuple[str, ModelRoute]:
        """The route of an agent role (``writer``, ``designer.economy``...); ``override`` (``--model``) wins."""
        return self.route(override or resolve_role(self.agents, role, self.default_model))

    def route_chain(self, name: str) -> list[tuple[str, ModelRoute]]:
        """The route and its fallbacks, in the order they are tried."""
        return [self.route(n) for n in fallback_chain(self.models, name)]

    def l3_route(self) -> str | None:
        """The L3 scorer's route: ``agents.l3_scorer``, else the older top-level ``l3_scorer``; None = heuristic."""
        return self.agents.get("l3_scorer") or self.l3_scorer

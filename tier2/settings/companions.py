"""The companions' hot policy (``config/policy/companions.yaml``): the read-only explorer the writer can ask and
the independent reviewer of the writer's turns (`tier2.companions`, seed 004 §6.2)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["CompanionsPolicy", "ExplorerPolicy", "ReviewerPolicy", "ReviewTrigger"]

#: when the reviewer runs: after a turn in which any gate failed (the writer's own Build/RunGame checks or the
#: session's validation after the turn), only when the session's validation failed, or after every turn
ReviewTrigger = Literal["failed_check", "failed_validation", "every_turn"]


class _Companion(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    enabled: bool = True
    max_iters: int = Field(default=6, ge=1, le=30)  # ReAct iterations of one call (each one model call)
    max_calls_per_run: int = Field(default=4, ge=0, le=100)  # beyond: a clear refusal, no model call
    max_answer_chars: int = Field(default=4000, ge=200, le=50_000)  # what reaches the writer


class ExplorerPolicy(_Companion):
    """The writer's ``Explore(question)`` tool."""

    max_question_chars: int = Field(default=1000, ge=20, le=10_000)


class ReviewerPolicy(_Companion):
    """The reviewer of a writer turn's change; it never writes and never decides completion."""

    trigger: ReviewTrigger = "failed_check"
    max_findings: int = Field(default=20, ge=1, le=200)
    max_diff_chars: int = Field(default=12_000, ge=500, le=200_000)  # of the turn's diff in the reviewer's message


class CompanionsPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    explorer: ExplorerPolicy = ExplorerPolicy()
    reviewer: ReviewerPolicy = ReviewerPolicy()

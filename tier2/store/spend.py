"""`SpendGuard`: the gate every paid model call of a run passes — writer, designers, explorer, L3 scorer.

It turns tokens into USD with the hot price table, asks the run's `BudgetLedger` for a reservation before the
call and reconciles the reported usage after it. Every refusal is a `RunLimitReached` that names the exact
limit (``budget: 0.41 USD cap, 17 calls, 0.398 spent``), so the run ends ``stopped`` with it as the reason.

Fail closed: a model without a price (while a USD cap applies) or an unreachable ledger refuses the call —
spending without accounting is never the fallback.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from tier2.errors import RunLimitReached
from tier2.settings.loader import BudgetPolicy, Price
from tier2.store.budget import BudgetLedger, LedgerStatus, LedgerUnavailable

__all__ = ["SpendGuard", "fmt_usd"]

log = logging.getLogger(__name__)


def fmt_usd(x: float) -> str:
    """0.398 → ``0.398``, 0.5 → ``0.5``, 1e-7 → ``0.0000001`` (no exponent, no trailing zeros)."""
    text = f"{x:.9f}".rstrip("0").rstrip(".")
    return text or "0"


def refusal(verdict: str, st: LedgerStatus) -> RunLimitReached:
    """The terminal reason of a refused reservation, naming the limit that was hit."""
    if verdict == "deadline":
        return RunLimitReached("deadline", f"{st.deadline_s:g} s wall clock, {st.calls} calls, "
                                           f"{fmt_usd(st.spent_usd)} USD spent")
    if verdict == "tokens":
        held = f", {st.reserved_tokens} held by calls in flight" if st.reserved_tokens else ""
        return RunLimitReached("budget", f"{st.cap_tokens} tokens cap, {st.calls} calls, {st.spent_tokens} spent"
                                         + held)
    held = f", {fmt_usd(st.reserved_usd)} held by calls in flight" if st.reserved_usd else ""
    return RunLimitReached("budget", f"{fmt_usd(st.cap_usd or 0.0)} USD cap, {st.calls} calls, "
                                     f"{fmt_usd(st.spent_usd)} spent" + held)


class SpendGuard:
    """One run's (or one agent's) view of the run ledger plus the policy snapshot's prices."""

    def __init__(self, ledger: BudgetLedger, prices: Mapping[str, Price], limits: BudgetPolicy | None = None) -> None:
        self.ledger, self.prices = ledger, dict(prices)
        self.limits = limits or BudgetPolicy()  # output bound, input margin, image tokens (hot config)
        self._settling: asyncio.Future[Any] | None = None  # the newest background reconcile (a handle)

    def price(self, model: str) -> Price | None:
        return self.prices.get(model)

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float:
        """USD at the table rate; raises `RunLimitReached` for an unpriced model while a USD cap applies."""
        price = self.prices.get(model)
        if price is not None:
            return price.cost(input_tokens, output_tokens)
        if self.ledger.caps.usd is None:
            return 0.0
        raise RunLimitReached("budget", f"no price for model {model!r} in config/policy/prices.yaml; "
                                        "a USD cap cannot be enforced without one, so the call is refused")

    async def reserve(self, call_id: str, model: str, input_tokens: int, max_output_tokens: int) -> None:
        """Hold the call's worst case (estimated input + max output) or raise `RunLimitReached`."""
        self._raise_settle_failure()
        usd = self.cost(model, input_tokens, max_output_tokens)
        try:
            res = await self.ledger.reserve(call_id, usd, input_tokens + max_output_tokens)
        except LedgerUnavailable as exc:
            raise RunLimitReached("budget", f"ledger unreachable ({exc}); no model call without it") from exc
        if not res.ok:
            log.info("run %s: call %s refused (%s)", self.ledger.run_id, call_id, res.verdict)
            raise refusal(res.verdict, res.status)

    async def reconcile(self, call_id: str, model: str, input_tokens: int, output_tokens: int) -> LedgerStatus:
        """Record the reported usage; an unreachable ledger stops the run (the spend would go unaccounted)."""
        usd = self.cost(model, input_tokens, output_tokens)
        try:
            verdict, status = await self.ledger.reconcile(call_id, usd, input_tokens + output_tokens)
        except LedgerUnavailable as exc:
            raise RunLimitReached("budget", f"ledger unreachable ({exc}); the last call could not be "
                                            "accounted, so no further call is made") from exc
        if status.overrun_usd > 0 and verdict == "ok":
            log.warning("run %s: call %s cost more than its reservation (overrun so far %s USD)",
                        self.ledger.run_id, call_id, fmt_usd(status.overrun_usd))
        return status

    def reconcile_later(self, call_id: str, model: str, input_tokens: int, output_tokens: int) -> None:
        """`reconcile` in the background, in order: the next call does not wait for it. Safe for the cap: until it
        lands, the call's worst-case reservation is still held, so the ledger is stricter, never looser. A failure
        (ledger unreachable) is raised by the next `reserve`, `flush` or `report`."""
        previous = self._settling

        async def settle() -> None:
            if previous is not None:
                await asyncio.wait([previous])  # keep the order; its own failure is reported separately
            await self.reconcile(call_id, model, input_tokens, output_tokens)

        self._settling = asyncio.ensure_future(settle())
        self._settling.add_done_callback(lambda f: f.cancelled() or f.exception())

    def _raise_settle_failure(self) -> None:
        pending = self._settling
        if pending is not None and pending.done():
            self._settling = None
            failure = None if pending.cancelled() else pending.exception()
            if failure is not None:
                raise failure

    async def flush(self) -> None:
        """Wait for background reconciles (before reporting the ledger or ending the run)."""
        if self._settling is not None:
            await asyncio.wait([self._settling])
            self._raise_settle_failure()

    async def release(self, call_id: str) -> None:
        """Free a failed call's reservation; never raises (a stuck reservation only makes the ledger stricter)."""
        try:
            await self.ledger.release(call_id)
        except LedgerUnavailable as exc:
            log.warning("run %s: could not release %s (%s); it stays reserved", self.ledger.run_id, call_id, exc)

    async def report(self) -> dict[str, Any]:
        """The ledger status for the run record and the delivery; never raises."""
        try:
            await self.flush()
        except RunLimitReached as exc:
            return {"error": str(exc)}
        try:
            return (await self.ledger.status()).report()
        except LedgerUnavailable as exc:
            return {"error": f"ledger unreachable ({exc})"}

"""The arithmetic: what each model call cost, summed per task and per session, and how an
amount is shown.

A call's tokens are the provider's own counts when its driver reports them (`usage`), else
murmur-tui's (cl100k) counts, the ones the status line shows. `usage.input_tokens` counts the
input read from and written to the prompt cache too (Murmur's driver response, §4.3): those
are priced at the cache's prices, the rest at the input price. A failed call is priced from
the provider's usage when it reports one, and costs nothing otherwise.

Sums are exact (`Decimal` dollars); only the shown amount is rounded, once (`money`). A task or
session any of whose calls went to a model with no price has no cost — its tokens are shown
alone, never a part of the cost or a guess.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal

from tui.core.cost import override
from tui.core.cost.table import BUILTIN_TABLE, Price, PriceTable
from tui.core.events import vocabulary as ev

_MILLION = Decimal(1_000_000)
_CENT = Decimal("0.01")
_TENTH_MIL = Decimal("0.0001")


def money(dollars: Decimal) -> str:
    """`$0.0123`: four decimals under $10, `$12.35` / `$1,234.50` from $10 on; half a unit of
    the last digit rounds up. A cost too small for four decimals is `<$0.0001`, not
    `$0.0000`; nothing at all is `$0.0000`."""
    shown = dollars.quantize(_TENTH_MIL, ROUND_HALF_UP)
    if shown >= 10:
        return f"${dollars.quantize(_CENT, ROUND_HALF_UP):,}"
    if dollars > 0 and not shown:
        return "<$0.0001"
    return f"${shown}"


def call_cost(price: Price, input_tokens: int, output_tokens: int, cached: int = 0,
              cache_write: int = 0) -> Decimal:
    """Dollars for one call (the price is dollars per million tokens)."""
    fresh = max(0, input_tokens - cached - cache_write)
    micro = (fresh * price.input + cached * price.cached_input
             + cache_write * price.cache_write + output_tokens * price.output)
    return micro / _MILLION


def turn_cost(table: PriceTable, event: ev.TurnCompleted,
              session_model: str = "") -> Decimal | None:
    """What the call cost, or None when its model has no price. A call that names no model
    (a turn rebuilt from a trace line, which names it only for a hook's call) used the
    session's."""
    price = table.price(event.model or session_model)
    if price is None:
        return None
    usage: Mapping[str, int] = event.usage
    if event.decision == "error" and not usage:
        return Decimal(0)
    return call_cost(price, usage.get("input_tokens", event.input_tokens),
                     usage.get("output_tokens", event.output_tokens or 0),
                     usage.get("cached_tokens", 0), usage.get("cache_write_tokens", 0))


@dataclass
class Spend:
    """Tokens and dollars of some calls; `dollars` is None once one of them had no price."""

    input_tokens: int = 0
    output_tokens: int = 0
    dollars: Decimal | None = Decimal(0)
    calls: int = 0

    def add(self, input_tokens: int, output_tokens: int, dollars: Decimal | None) -> None:
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        self.calls += 1
        self.dollars = None if dollars is None or self.dollars is None else \
            self.dollars + dollars

    def __add__(self, other: Spend) -> Spend:
        dollars = None if self.dollars is None or other.dollars is None else \
            self.dollars + other.dollars
        return Spend(self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens, dollars,
                     self.calls + other.calls)

    @property
    def cost(self) -> str:
        """`$0.0123`; empty when there is no cost to show (no call yet, or one unpriced)."""
        return money(self.dollars) if self.dollars is not None and self.calls else ""


@dataclass
class Ledger:
    """A session's spend, per task and in all, from its events. The price table is read at
    each SessionStarted (so an edited prices.yaml counts from the next session on), which
    also starts the sums again unless `per_session` is off (a fleet row: a reconnection
    says SessionStarted again for the same session)."""

    table: PriceTable = BUILTIN_TABLE
    session: Spend = field(default_factory=Spend)
    tasks: dict[str, Spend] = field(default_factory=dict)
    model: str = ""  # the session's model
    per_session: bool = True

    def apply(self, event: ev.Event) -> None:
        if isinstance(event, ev.SessionStarted):
            self.table = override.current()
            self.model = event.model or self.model
            if self.per_session:
                self.session, self.tasks = Spend(), {}
        elif isinstance(event, ev.TurnCompleted):
            dollars = turn_cost(self.table, event, self.model)
            tokens = (event.input_tokens, event.output_tokens or 0)
            self.session.add(*tokens, dollars)
            self.tasks.setdefault(event.task_id, Spend()).add(*tokens, dollars)

    def task(self, task_id: str) -> Spend:
        return self.tasks.get(task_id) or Spend()

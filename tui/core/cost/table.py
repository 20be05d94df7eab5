"""The built-in price table and how a model's name finds its price.

Prices are US dollars per million tokens, as each provider's public pricing page published
them on the date given beside them (`source`). They change: `$MURMUR_HOME/tui/prices.yaml`
replaces or adds any of them (see `override`).

A name finds its price exactly (case aside), or — when it ends in a snapshot date
(`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`) or `-latest` — by the name without it.
Nothing else: `gpt-4o-mini` is not `gpt-4o`, and `openrouter/anthropic/claude-…` is no
Anthropic price (a router sets its own); such a model has no price until prices.yaml gives it
one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal


@dataclass(frozen=True)
class Price:
    """Dollars per million tokens: fresh input, output, input read from the provider's prompt
    cache, and input written to it. Dollars per million tokens are micro-dollars per token."""

    input: Decimal
    output: Decimal
    cached_input: Decimal
    cache_write: Decimal
    source: str  # where the price was read, and when; or the prices.yaml line that set it


def _price(fresh: str, output: str, cached: str, write: str | None, source: str) -> Price:
    return Price(Decimal(fresh), Decimal(output), Decimal(cached),
                 Decimal(write if write is not None else fresh), source)


_ANTHROPIC = "https://www.anthropic.com/pricing (API prices as published in November 2025)"
_OPENAI = "https://openai.com/api/pricing (standard tier, as published in November 2025)"

# Anthropic: input, output, cache read, cache write (5-minute). Prompts over 200k tokens
# (the 1M-context beta) are priced higher; this table has the standard rate only.
# OpenAI: input, output, cached input; it does not bill cache writes.
BUILTIN: Mapping[str, Price] = {
    "claude-opus-4-5": _price("5", "25", "0.50", "6.25", _ANTHROPIC),
    "claude-opus-4-1": _price("15", "75", "1.50", "18.75", _ANTHROPIC),
    "claude-opus-4-0": _price("15", "75", "1.50", "18.75", _ANTHROPIC),
    "claude-opus-4": _price("15", "75", "1.50", "18.75", _ANTHROPIC),
    "claude-sonnet-4-5": _price("3", "15", "0.30", "3.75", _ANTHROPIC),
    "claude-sonnet-4-0": _price("3", "15", "0.30", "3.75", _ANTHROPIC),
    "claude-sonnet-4": _price("3", "15", "0.30", "3.75", _ANTHROPIC),
    "claude-3-7-sonnet": _price("3", "15", "0.30", "3.75", _ANTHROPIC),
    "claude-haiku-4-5": _price("1", "5", "0.10", "1.25", _ANTHROPIC),
    "claude-3-5-haiku": _price("0.80", "4", "0.08", "1", _ANTHROPIC),
    "claude-3-haiku": _price("0.25", "1.25", "0.03", "0.30", _ANTHROPIC),
    "gpt-5": _price("1.25", "10", "0.125", None, _OPENAI),
    "gpt-5-mini": _price("0.25", "2", "0.025", None, _OPENAI),
    "gpt-5-nano": _price("0.05", "0.40", "0.005", None, _OPENAI),
    "gpt-4.1": _price("2", "8", "0.50", None, _OPENAI),
    "gpt-4.1-mini": _price("0.40", "1.60", "0.10", None, _OPENAI),
    "gpt-4.1-nano": _price("0.10", "0.40", "0.025", None, _OPENAI),
    "gpt-4o": _price("2.50", "10", "1.25", None, _OPENAI),
    "gpt-4o-mini": _price("0.15", "0.60", "0.075", None, _OPENAI),
    "o3": _price("2", "8", "0.50", None, _OPENAI),
    "o4-mini": _price("1.10", "4.40", "0.275", None, _OPENAI),
    "o3-mini": _price("1.10", "4.40", "0.55", None, _OPENAI),
}

_SNAPSHOT = re.compile(r"-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


def plain_name(model: str) -> str:
    """The name a price is filed under: lower case, without a snapshot date or `-latest`."""
    return _SNAPSHOT.sub("", model.strip().lower())


@dataclass(frozen=True)
class PriceTable:
    """The prices in force (built-in, then the person's), and what was wrong with the
    person's file: each warning names the file and the line."""

    prices: Mapping[str, Price]
    warnings: tuple[str, ...] = ()

    def price(self, model: str) -> Price | None:
        """The model's price, or None: the model has none (its cost is not shown)."""
        name = model.strip().lower()
        if not name:
            return None
        found = self.prices.get(name)
        return found if found is not None else self.prices.get(plain_name(name))


BUILTIN_TABLE = PriceTable(BUILTIN)

"""The price table, the person's prices.yaml over it, and the arithmetic of what calls cost."""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

from tui.core.cost import BUILTIN, Ledger, Spend, load_prices, money, prices_file
from tui.core.cost.ledger import call_cost
from tui.core.events import vocabulary as ev
from tui.core.inference.anthropic import MessageEventAssembler
from tui.core.inference.driver import NullStream


def turn(model: str, counted_in: int = 1000, counted_out: int = 500, task: str = "tsk_1",
         usage: dict[str, int] | None = None) -> ev.TurnCompleted:
    """A completed call: murmur-tui's counts, and the provider's `usage` when it reported one."""
    return ev.TurnCompleted(task_id=task, turn=0, input_tokens=counted_in,
                            output_tokens=counted_out, decision="end_turn",
                            stop_reason="end_turn", tool_name=None, model=model,
                            usage=usage or {})


def write_prices(home: Path, text: str) -> Path:
    file = prices_file(home)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(text, encoding="utf-8")
    return file


def test_an_amount_shows_four_decimals_under_ten_dollars_rounding_half_up() -> None:
    assert money(Decimal("0.012345")) == "$0.0123"
    assert money(Decimal("0.01235")) == "$0.0124"
    assert money(Decimal(0)) == "$0.0000"
    assert money(Decimal("0.00004")) == "<$0.0001"  # spent, but less than shows
    assert money(Decimal("9.99996")) == "$10.00"
    assert money(Decimal("1234.505")) == "$1,234.51"


def test_a_dated_snapshot_finds_its_models_price_and_nothing_is_guessed(
        murmur_home: Path) -> None:
    table = load_prices()
    assert table.warnings == ()
    assert table.price("claude-sonnet-4-5-20250929") == BUILTIN["claude-sonnet-4-5"]
    assert table.price("gpt-4.1-2025-04-14") == BUILTIN["gpt-4.1"]
    assert table.price("GPT-4o-mini") == BUILTIN["gpt-4o-mini"]
    for unknown in ("gpt-4o-minix", "gpt-4", "openrouter/anthropic/claude-sonnet-4-5",
                    "qwen3:8b", "scripted", ""):
        assert table.price(unknown) is None, unknown


def test_cached_tokens_are_a_part_of_input_and_priced_at_the_cache_price() -> None:
    price = BUILTIN["claude-sonnet-4-5"]  # $3 in, $15 out, $0.30 cache read, $3.75 write
    # 12043 in, of which 11780 read from the cache and 200 written to it; 218 out
    dollars = call_cost(price, 12043, 218, cached=11780, cache_write=200)
    assert dollars == Decimal("0.007743")  # (63·3 + 11780·0.30 + 200·3.75 + 218·15) / 1e6
    assert money(dollars) == "$0.0077"
    openai = BUILTIN["gpt-4.1"]  # $2 in, $8 out, $0.50 cached
    assert call_cost(openai, 2000, 100, cached=1000) == Decimal("0.0033")


def test_the_ledger_prices_the_providers_usage_per_task_and_per_session(
        murmur_home: Path) -> None:
    ledger = Ledger()
    ledger.apply(ev.SessionStarted(capsule_name="c", capsule_version="1", model="gpt-4.1",
                                   workdir="", trace_path="", context_id="", record_path=None,
                                   max_turns=5, tools=()))
    # the provider's usage wins over the counted tokens; cached tokens are cheaper
    ledger.apply(turn("gpt-4.1", 900, 90, usage={"input_tokens": 2000, "output_tokens": 100,
                                                 "cached_tokens": 1000}))
    ledger.apply(turn("", 1000, 500, task="tsk_2"))  # names no model: the session's
    assert ledger.task("tsk_1").cost == "$0.0033"
    assert ledger.task("tsk_2").cost == "$0.0060"  # 1000·2 + 500·8
    assert ledger.session.cost == "$0.0093"
    assert (ledger.session.input_tokens, ledger.session.output_tokens) == (1900, 590)


def test_an_unknown_model_shows_tokens_only_and_hides_a_partial_sum(murmur_home: Path) -> None:
    ledger = Ledger()
    ledger.apply(turn("test-model"))
    assert ledger.session.cost == "" and ledger.session.input_tokens == 1000
    ledger.apply(turn("gpt-4.1"))
    assert ledger.session.cost == ""  # one unpriced call: the sum would understate
    assert Spend().cost == ""  # no call yet: nothing to show


def test_a_failed_call_without_usage_costs_nothing(murmur_home: Path) -> None:
    ledger = Ledger()
    ledger.apply(ev.TurnCompleted(task_id="t", turn=0, input_tokens=5000, output_tokens=None,
                                  decision="error", stop_reason="error", tool_name=None,
                                  model="gpt-4.1", error="HTTP 500"))
    assert ledger.session.cost == "$0.0000"


def test_the_persons_prices_win_add_models_and_take_a_price_away(murmur_home: Path) -> None:
    write_prices(murmur_home, "models:\n"
                 "  gpt-4.1: {input: 1, output: 2}\n"
                 "  house-model:\n"
                 "    input: 0.5\n"
                 "    output: '1.25'\n"
                 "    cached_input: 0.05\n"
                 "  gpt-4o: null\n")
    table = load_prices()
    assert table.warnings == ()
    gpt = table.price("gpt-4.1-2025-04-14")
    assert gpt is not None and (gpt.input, gpt.output, gpt.cached_input) == (1, 2, 1)
    assert gpt.source.endswith("prices.yaml:2")
    house = table.price("house-model")
    assert house is not None and house.output == Decimal("1.25")
    assert house.cached_input == Decimal("0.05") and house.cache_write == Decimal("0.5")
    assert table.price("gpt-4o") is None
    assert table.price("claude-haiku-4-5") == BUILTIN["claude-haiku-4-5"]  # untouched


def test_a_broken_prices_file_is_a_warning_naming_its_line_and_the_built_in_table_applies(
        murmur_home: Path) -> None:
    file = write_prices(murmur_home, "models:\n  gpt-4.1: {input: 1, output: 2\n  x: [\n")
    table = load_prices()
    assert len(table.warnings) == 1
    assert table.warnings[0].startswith(f"{file}:")
    assert table.warnings[0].endswith("the built-in prices apply")
    assert table.price("gpt-4.1") == BUILTIN["gpt-4.1"]


def test_a_wrong_entry_is_left_out_naming_its_line_and_the_rest_apply(
        murmur_home: Path) -> None:
    file = write_prices(murmur_home, "models:\n"
                        "  gpt-4.1:\n"
                        "    input: lots\n"
                        "    output: 2\n"
                        "  mine: {input: 1}\n"
                        "  theirs: {input: -1, output: 1}\n"
                        "  good: {input: 1, output: 3, ouput: 4}\n"
                        "  fine: {input: 1, output: 3}\n"
                        "currency: EUR\n")
    table = load_prices()
    assert table.warnings == (
        f"{file}:3: models.gpt-4.1: input must be a number of dollars from 0 to 1000000, "
        "got 'lots'; this model is left out",
        f"{file}:5: models.mine: output missing; this model is left out",
        f"{file}:6: models.theirs: input must be a number of dollars from 0 to 1000000, "
        "got -1; this model is left out",
        f"{file}:7: models.good: ouput is not one of input, output, cached_input, "
        "cache_write; this model is left out",
        f"{file}:9: currency: unknown key, left out")
    assert table.price("gpt-4.1") == BUILTIN["gpt-4.1"]  # the built-in price stays
    assert table.price("mine") is None and table.price("good") is None
    fine = table.price("fine")
    assert fine is not None and fine.output == 3


def test_a_prices_file_of_the_wrong_shape_leaves_the_built_in_table(murmur_home: Path) -> None:
    file = write_prices(murmur_home, "- gpt-4.1\n")
    table = load_prices()
    assert table.warnings == (f"{file}:1: expected `models:` holding a price for each model "
                              "name; the built-in prices apply",)
    assert table.prices == BUILTIN


def test_anthropics_cache_counts_are_added_to_input_as_murmurs_usage_counts_them() -> None:
    assembler = MessageEventAssembler(NullStream())
    assembler.event("message_start", {"type": "message_start", "message": {"usage": {
        "input_tokens": 63, "cache_read_input_tokens": 11780,
        "cache_creation_input_tokens": 200, "output_tokens": 1}}})
    assembler.event("message_delta", {"type": "message_delta",
                                      "delta": {"stop_reason": "end_turn"},
                                      "usage": {"output_tokens": 218}})
    assert assembler.response()["usage"] == {"input_tokens": 12043, "output_tokens": 218,
                                             "cached_tokens": 11780, "cache_write_tokens": 200}


def test_the_documented_table_is_the_built_in_table() -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "cost.md").read_text()
    rows = re.findall(r"^\| `([^`]+)` \| \$([\d.]+) \| \$([\d.]+) \| \$([\d.]+) \| "
                      r"(?:\$([\d.]+)|—) \|", doc, re.M)
    documented = {name: (Decimal(fresh), Decimal(out), Decimal(cached),
                         Decimal(write) if write else Decimal(fresh))
                  for name, fresh, out, cached, write in rows}
    assert documented == {name: (p.input, p.output, p.cached_input, p.cache_write)
                          for name, p in BUILTIN.items()}

"""What a session's calls cost, on the screen: the status line and the task's end line show
it for a model with a price, and only tokens for a model without one."""

from __future__ import annotations

import re
from pathlib import Path

from tests.app.conftest import keep_notes
from tests.conftest import CapsuleFactory
from tests.fakes import start_session
from tests.responses import text_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp


def priced(text: str, input_tokens: int, output_tokens: int) -> dict[str, object]:
    """A final answer whose provider reported its usage."""
    return {**text_response(text), "usage": {"input_tokens": input_tokens,
                                             "output_tokens": output_tokens}}


def status_of(app: SupervisorApp) -> str:
    return str(app.supervisor.status.render())


def drawn(app: SupervisorApp) -> str:
    return "\n".join(app.supervisor.transcript.plain_lines)


async def test_a_model_with_a_price_shows_its_cost_in_the_status_line_and_the_end_line(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    # claude-sonnet-4-5: $3 in, $15 out a million: 1000·3 + 500·15 = 10,500 µ$
    root = make_capsule([priced("All done.", 1000, 500)], model="claude-sonnet-4-5-20250929")
    app = SupervisorApp(murmur_home)
    start_session(app, root)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: app.result is not None
                         and "$" in status_of(app))
        assert re.search(r"\d+ in / \d+ out  ·  \$0\.0105  ·  \d+:\d\d", status_of(app)), \
            status_of(app)
        end = "✓ task ok · 1 turn · 0 tool calls · $0.0105"
        assert app.supervisor.transcript.result is not None
        assert app.supervisor.transcript.result[0] == end
        await wait_until(pilot, lambda: end in drawn(app))


async def test_a_model_without_a_price_shows_its_tokens_only(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([priced("All done.", 1000, 500)], model="test-model")
    app = SupervisorApp(murmur_home)
    start_session(app, root)
    async with app.run_test(size=(140, 40)) as pilot:
        await wait_until(pilot, lambda: "✓ task ok · 1 turn · 0 tool calls" in drawn(app))
        status = status_of(app)
        assert re.search(r"\d+ in / \d+ out  ·  \d+:\d\d", status), status
        assert "$" not in status and "$" not in drawn(app)


async def test_prices_yaml_prices_a_model_the_table_does_not_know(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    prices = murmur_home / "tui" / "prices.yaml"
    prices.parent.mkdir(parents=True, exist_ok=True)
    prices.write_text("models:\n  house-model: {input: 10, output: 20}\n")
    root = make_capsule([priced("All done.", 1000, 500)], model="house-model")
    app = SupervisorApp(murmur_home)
    start_session(app, root)
    async with app.run_test(size=(140, 40)) as pilot:
        end = "✓ task ok · 1 turn · 0 tool calls · $0.0200"  # 1000·10 + 500·20 µ$
        await wait_until(pilot, lambda: end in drawn(app))
        assert "  ·  $0.0200  ·  " in status_of(app)


async def test_a_broken_prices_yaml_is_told_on_screen_and_the_built_in_prices_apply(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    prices = murmur_home / "tui" / "prices.yaml"
    prices.parent.mkdir(parents=True, exist_ok=True)
    prices.write_text("models:\n  gpt-4.1: {input: 1, output: 2\n")
    root = make_capsule([priced("All done.", 1000, 500)], model="gpt-4.1")
    app = SupervisorApp(murmur_home)
    notes = keep_notes(app)
    start_session(app, root)
    async with app.run_test(size=(160, 40)) as pilot:
        end = "✓ task ok · 1 turn · 0 tool calls · $0.0060"  # built in: $2 in, $8 out
        await wait_until(pilot, lambda: end in drawn(app))
        told = [note for note in notes if note.startswith(f"{prices}:3: ")]
        assert told and told[0].endswith("; the built-in prices apply"), notes

"""`launch --headless` tells what the task and the session cost: a real subprocess, a real
prices.yaml."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import CapsuleFactory, run_cli
from tests.responses import text_response, tool_response


def with_usage(response: dict[str, object], input_tokens: int,
               output_tokens: int) -> dict[str, object]:
    return {**response, "usage": {"input_tokens": input_tokens,
                                  "output_tokens": output_tokens}}


SCRIPT = [with_usage(tool_response("echo hi"), 1000, 100),  # gpt-4.1: 2000 + 800 µ$
          with_usage(text_response("Done."), 1200, 50)]  # 2400 + 400 µ$


def test_the_task_and_session_lines_say_what_the_calls_cost(
        make_capsule: CapsuleFactory) -> None:
    root = make_capsule(SCRIPT, model="gpt-4.1")
    result = run_cli("launch", str(root), "--headless", "--task", "go")
    assert result.returncode == 0, result.stderr
    assert re.search(r"^task ok · 2 turns · \d+ in / \d+ out tokens · \$0\.0056 · "
                     r"1 tool call$", result.stdout, re.M), result.stdout
    assert re.search(r"^session ok · [\d.]+ m?s · \d+ in / \d+ out tokens · \$0\.0056$",
                     result.stdout, re.M), result.stdout


def test_a_model_without_a_price_ends_with_its_tokens_only(
        make_capsule: CapsuleFactory) -> None:
    root = make_capsule(SCRIPT, model="test-model")
    result = run_cli("launch", str(root), "--headless", "--task", "go")
    assert result.returncode == 0, result.stderr
    assert re.search(r"^task ok · 2 turns · \d+ in / \d+ out tokens · 1 tool call$",
                     result.stdout, re.M), result.stdout
    assert re.search(r"^session ok · [\d.]+ m?s · \d+ in / \d+ out tokens$", result.stdout,
                     re.M), result.stdout
    assert not re.search(r"\$\d", result.stdout)  # no amount anywhere


def test_a_broken_prices_yaml_is_a_warning_and_the_built_in_prices_apply(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    prices = murmur_home / "tui" / "prices.yaml"
    prices.parent.mkdir(parents=True, exist_ok=True)
    prices.write_text("models:\n  gpt-4.1:\n    input: [1\n")
    root = make_capsule(SCRIPT, model="gpt-4.1")
    result = run_cli("launch", str(root), "--headless", "--task", "go")
    assert result.returncode == 0, result.stderr
    assert re.search(rf"^warning: {re.escape(str(prices))}:\d+: .*; the built-in prices "
                     r"apply$", result.stderr, re.M), result.stderr
    assert "Traceback" not in result.stderr
    assert re.search(r"^session ok · .* · \$0\.0056$", result.stdout, re.M), result.stdout

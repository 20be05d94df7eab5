"""A host's sums and the lines that say them (tui/app/fleet/host_totals.py): sessions, tokens,
cost from the price table, tasks run and running, questions waiting and the longest wait —
fitted to a width by shortening, then leaving out, the parts least needed."""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len

from tui.app.fleet.host_totals import (
    HostTotals,
    Part,
    compact,
    fit,
    fleet_line,
    heading,
    host_totals,
)
from tui.app.fleet.model import FleetSession
from tui.core.events import vocabulary as ev


def session(name: str, model: str = "gpt-4.1", host: str = "") -> FleetSession:
    found = FleetSession(f"ses_{name}", "u", host=host, capsule=name)
    found.connection = "live"
    found.apply(ev.SessionStarted(capsule_name=name, capsule_version="1", model=model,
                                  workdir="", trace_path="", context_id="", record_path=None,
                                  max_turns=5, tools=()), 0.0)
    return found


def task(found: FleetSession, task_id: str, at: float = 1.0) -> None:
    found.apply(ev.TaskStarted(task_id=task_id, context_id="c", text="work"), at)


def turn(found: FleetSession, task_id: str, tokens_in: int, tokens_out: int) -> None:
    found.apply(ev.TurnCompleted(task_id=task_id, turn=0, input_tokens=tokens_in,
                                 output_tokens=tokens_out, decision="end_turn",
                                 stop_reason="end_turn", tool_name=None, model=""))


def ended(found: FleetSession, task_id: str) -> None:
    found.apply(ev.TaskEnded(task_id=task_id, exit_status="ok", result="", duration_ms=1,
                             turns=1, input_tokens=0, output_tokens=0, tool_calls=0,
                             shell_calls=0, reopen_count=0), 2.0)


def asks(found: FleetSession, task_id: str, at: float) -> None:
    found.apply(ev.InputRequested(task_id=task_id, request_id=f"r_{task_id}",
                                  prompt="Which branch?", tool_name="ask"), at)


def three(murmur_home: Path) -> list[FleetSession]:
    """One idle after two tasks, one working, one asking since t=100."""
    idle, busy, asking = session("idle"), session("busy"), session("asking")
    task(idle, "t1")
    turn(idle, "t1", 1000, 500)
    ended(idle, "t1")
    task(idle, "t2")
    ended(idle, "t2")
    task(busy, "t3")
    turn(busy, "t3", 2000, 100)
    task(asking, "t4")
    asks(asking, "t4", 100.0)
    return [idle, busy, asking]


def test_a_hosts_sums(murmur_home: Path) -> None:
    totals = host_totals(three(murmur_home), now=141.0)
    # gpt-4.1: $2 in, $8 out per million: 3000·2 + 600·8 µ$
    assert totals == HostTotals(sessions=3, needs=1, working=1, tokens_in=3000,
                                tokens_out=600, tool_calls=0, cost="$0.0108", tasks=4,
                                running=2, longest=41.0, attention=1)
    assert totals.questions == 1


def test_the_longest_wait_is_the_oldest_open_question_and_none_when_none_waits(
        murmur_home: Path) -> None:
    one, two = session("one"), session("two")
    task(one, "a")
    task(two, "b")
    asks(one, "a", 50.0)
    asks(two, "b", 20.0)
    assert host_totals([one, two], now=100.0).longest == 80.0
    assert host_totals([one, two], now=100.0).needs == 2
    one.connect("gone", "no process", dead=True)  # a question that can no longer be answered
    gone = host_totals([one, two], now=100.0)
    assert (gone.needs, gone.attention) == (1, 2)  # one question waits; the death needs you too
    assert host_totals([], now=1.0).longest is None


def test_a_model_without_a_price_leaves_the_cost_out(murmur_home: Path) -> None:
    priced, unpriced = session("a"), session("b", model="test-model")
    turn(priced, "t", 10, 5)
    turn(unpriced, "t", 10, 5)
    assert host_totals([priced], 0.0).cost == "$0.0001"
    assert host_totals([priced, unpriced], 0.0).cost == ""
    assert heading("build-3", host_totals([priced, unpriced], 0.0), None) == \
        "▪ build-3 · 2 sessions · tasks 0 (0 running) · tokens 20 in / 10 out"


def test_a_heading_in_full_and_fitted_to_narrower_widths(murmur_home: Path) -> None:
    totals = host_totals(three(murmur_home), now=141.0)
    whole = ("▪ build-3 · 3 sessions · 1 question waiting 0:41 · tasks 4 (2 running)"
             " · tokens 3,000 in / 600 out · $0.0108")
    assert heading("build-3", totals, None) == whole
    assert heading("build-3", totals, len(whole)) == whole
    # narrower: the least needed part takes its short form first (tasks, then tokens) …
    assert heading("build-3", totals, 100) == (
        "▪ build-3 · 3 sessions · 1 question waiting 0:41 · 4 tasks"
        " · tokens 3,000 in / 600 out · $0.0108")
    assert heading("build-3", totals, 90) == \
        "▪ build-3 · 3 sessions · 1 question waiting 0:41 · 4 tasks · 3.6k tokens · $0.0108"
    # … then is left out (tasks, the cost, the tokens, the sessions) …
    assert heading("build-3", totals, 80) == \
        "▪ build-3 · 3 sessions · 1 question waiting 0:41 · 3.6k tokens · $0.0108"
    assert heading("build-3", totals, 70) == \
        "▪ build-3 · 3 sessions · 1 question waiting 0:41 · 3.6k tokens"
    assert heading("build-3", totals, 40) == "▪ build-3 · 1 question waiting 0:41"
    # … and the question waiting is shortened, then left out, only after all of them
    assert heading("build-3", totals, 30) == "▪ build-3 · 1 ? 0:41"
    assert heading("build-3", totals, 5) == "▪ build-3"
    for width in range(20, 140):
        assert cell_len(heading("build-3", totals, width)) <= width


def test_more_questions_say_the_longest_wait(murmur_home: Path) -> None:
    sessions = three(murmur_home)
    task(sessions[0], "t5")
    asks(sessions[0], "t5", 130.0)
    assert heading("this machine", host_totals(sessions, now=141.0), None) == (
        "▪ this machine · 3 sessions · 2 questions waiting, longest 0:41 · tasks 5 (3 running)"
        " · tokens 3,000 in / 600 out · $0.0108")


def test_the_fleet_line_gains_tasks_and_the_longest_wait(murmur_home: Path) -> None:
    totals = host_totals(three(murmur_home), now=141.0)
    assert fleet_line(totals) == (
        "3 sessions · 1 need you, longest 0:41 · 1 working · tasks 4 (2 running) · "
        "tokens 3,000 in / 600 out · $0.0108 · 0 tool calls")
    assert fleet_line(totals, 78) == \
        "3 sessions · 1 need you, longest 0:41 · 1 working · 3.6k tokens · $0.0108"
    assert fleet_line(totals, 40) == "3 sessions · 1 need you, longest 0:41"
    nobody = host_totals([], now=0.0)
    assert fleet_line(nobody) == "0 sessions · 0 need you · 0 working · tasks 0 (0 running) · " \
        "tokens 0 in / 0 out · 0 tool calls"  # no call made: no cost to say


def test_fitting_keeps_the_order_and_the_first_part() -> None:
    parts = [Part("first", "f", 0), Part("second part", "2nd", 2), Part("third", "3", 1)]
    assert fit(parts, None) == "first · second part · third"
    assert fit(parts, 21) == "first · 2nd · third"
    assert fit(parts, 15) == "first · third"  # the vital third is kept whole, the second goes
    assert fit(parts, 10) == "first · 3"
    assert fit(parts, 2) == "f"  # then cut by the row it is drawn in


def test_counts_in_a_few_cells() -> None:
    assert [compact(n) for n in (0, 999, 1000, 12_345, 999_949, 4_500_000)] == \
        ["0", "999", "1k", "12.3k", "999.9k", "4.5M"]

"""The fleet's total cost: every session's calls priced, shown beside the fleet's tokens —
and no amount once one session called a model without a price."""

from __future__ import annotations

from pathlib import Path

from tests.waits import wait_until
from tui.app.fleet.app import FleetApp
from tui.app.fleet.model import FleetSession, spent
from tui.core.events import vocabulary as ev


def started(session: FleetSession, model: str) -> None:
    session.apply(ev.SessionStarted(capsule_name="c", capsule_version="1", model=model,
                                    workdir="", trace_path="", context_id="",
                                    record_path=None, max_turns=5, tools=()))


def call(session: FleetSession, model: str = "") -> None:
    session.apply(ev.TurnCompleted(task_id="t", turn=0, input_tokens=1000, output_tokens=500,
                                   decision="end_turn", stop_reason="end_turn",
                                   tool_name=None, model=model))


def test_the_fleets_cost_is_every_sessions_calls_priced(murmur_home: Path) -> None:
    one, two = FleetSession("a", "u"), FleetSession("b", "u")
    started(one, "gpt-4.1")
    started(two, "claude-haiku-4-5")
    call(one)  # the session's model: 1000·2 + 500·8 µ$
    call(two)  # 1000·1 + 500·5
    assert spent([one, two]) == "$0.0095"
    started(one, "gpt-4.1")  # a reconnection says so again: the row keeps its sums
    assert spent([one, two]) == "$0.0095"
    three = FleetSession("c", "u")
    started(three, "test-model")
    call(three)
    assert spent([one, two, three]) == ""  # its tokens count; a cost would be a guess
    assert spent([]) == ""


async def test_the_fleet_screen_shows_the_total_cost_beside_the_tokens(
        murmur_home: Path) -> None:
    app = FleetApp(murmur_home)
    async with app.run_test(size=(160, 40)) as pilot:
        # two rows, as the links deliver them: a session's start, then a call
        for session_id, model in (("ses_a", "gpt-4.1"), ("ses_b", "claude-haiku-4-5")):
            app.sessions[session_id] = FleetSession(session_id, "http://127.0.0.1:1")
            app.inbox.put((session_id, [
                ev.SessionStarted(capsule_name="c", capsule_version="1", model=model,
                                  workdir="", trace_path="", context_id="", record_path=None,
                                  max_turns=5, tools=()),
                ev.TurnCompleted(task_id="t", turn=0, input_tokens=1000, output_tokens=500,
                                 decision="end_turn", stop_reason="end_turn", tool_name=None,
                                 model="")]))
        await wait_until(pilot, lambda: "tokens 2,000 in / 1,000 out · $0.0095 · 0 tool calls"
                         in str(app.fleet.totals.render()))
        app.sessions["ses_c"] = FleetSession("ses_c", "http://127.0.0.1:1")
        app.inbox.put(("ses_c", [ev.TurnCompleted(
            task_id="t", turn=0, input_tokens=10, output_tokens=5, decision="end_turn",
            stop_reason="end_turn", tool_name=None, model="test-model")]))
        await wait_until(pilot, lambda: "tokens 2,010 in / 1,005 out · 0 tool calls"
                         in str(app.fleet.totals.render()))

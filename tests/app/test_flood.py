"""A flood of events reaches the screen spread over several batches, in order, all of it; a
streaming answer shows as plain text and as Markdown once its turn is done."""

from __future__ import annotations

from pathlib import Path

from tests.app.conftest import replay, settle
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.bridge import MIN_FLUSH_EVENTS
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream


def stream_of(turns: int, calls: int) -> list[ev.Event]:
    made: list[ev.Event] = []
    stream = EventStream("ses_flood")
    stream.add(type("Sink", (), {"emit": lambda self, e: made.append(e)})())
    for turn in range(turns):
        stream.emit(ev.TurnStarted(task_id="t", turn=turn, max_turns=turns, input_tokens=1))
        for piece in range(20):
            stream.emit(ev.TextDelta(task_id="t", turn=turn, text=f"w{piece} "))
        stream.emit(ev.TurnCompleted(task_id="t", turn=turn, input_tokens=1, output_tokens=1,
                    decision="tool_call", stop_reason="tool_call", tool_name="bash",
                    model="m"))
        for number in range(calls):
            call = {"task_id": "t", "turn": turn, "call_id": f"c{turn}.{number}",
                    "tool_name": "bash"}
            stream.emit(ev.ToolCallStarted(kind="shell", input={"command": "true"}, **call))
            stream.emit(ev.ToolCallFinished(kind="shell", status="ok", duration_ms=1,
                        input={"command": "true"}, input_bytes=10, output="", output_bytes=0,
                        **call))
    return made


async def test_a_flood_is_spread_over_batches_in_order_and_all_of_it_arrives(
        murmur_home: Path) -> None:
    events = stream_of(turns=150, calls=10)  # 7,050 events at once
    assert len(events) > 10 * MIN_FLUSH_EVENTS
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()  # mounted, before the flood
        for event in events:
            app.bridge.emit(event)
        await settle(pilot)
        # the first flush takes what its budget allows (its cost per event not yet measured)
        assert app.bridge.delivered > 1
        transcript = app.supervisor.transcript
        assert transcript.turns[-1].text.split() == [f"w{piece}" for piece in range(20)]
        rows = app.supervisor.tools.rows
        keys = [row.key for row in rows.rows]
        assert len(keys) == min(rows.max_rows, 150 * 10)
        expected = [f"t:{turn}:c{turn}.{number}:bash" for turn in range(150)
                    for number in range(10)][-len(keys):]
        assert keys == expected  # in the order they came, none lost or doubled
        assert all(row.cells[1] == "ok" for row in rows.rows)  # each start met its end
        assert rows.highlighted == expected[-1]  # the cursor rides on the newest row


async def test_a_streaming_answer_is_plain_text_until_its_turn_is_done(
        murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    stream = EventStream("ses_md")
    made: list[ev.Event] = []
    stream.add(type("Sink", (), {"emit": lambda self, e: made.append(e)})())
    stream.emit(ev.TurnStarted(task_id="t", turn=0, max_turns=1, input_tokens=1))
    stream.emit(ev.TextDelta(task_id="t", turn=0, text="Some **bold words** here"))
    async with app.run_test(size=(120, 40)) as pilot:
        await replay(pilot, made)
        transcript = app.supervisor.transcript
        await wait_until(pilot, lambda: any("**bold words**" in line
                                          for line in transcript.plain_lines))
        made.clear()
        stream.emit(ev.TurnCompleted(task_id="t", turn=0, input_tokens=1, output_tokens=5,
                    decision="final", stop_reason="end_turn", tool_name=None, model="m"))
        await replay(pilot, made)
        await wait_until(pilot, lambda: any("Some bold words here" in line
                                          for line in transcript.plain_lines))
        assert not any("**" in line for line in transcript.plain_lines)

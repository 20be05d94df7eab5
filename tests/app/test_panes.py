"""A recorded session fed into the app: what each pane shows."""

from __future__ import annotations

import re
from pathlib import Path

from textual.widgets import TabbedContent

from tests.app.conftest import recorded, replay
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.core.events import vocabulary as ev
from tui.core.events.stream import EventStream


async def test_recorded_session_fills_every_pane(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    events = recorded()
    async with app.run_test(size=(160, 50)) as pilot:
        await replay(pilot, events)
        screen = app.supervisor
        started = next(e for e in events if isinstance(e, ev.SessionStarted))
        header = str(screen.header.render())
        assert "screen-fixture 1.0.0" in header and started.session_id in header
        # the transcript: the task, the streamed text (coalesced), the tool and question lines
        transcript = screen.transcript
        assert transcript.task_text == "Look around, carefully."
        turns = transcript.window_turns
        assert [t.number for t in turns] == [1, 2, 3, 4]
        assert turns[0].thinking == "I should ask before touching anything."
        assert turns[1].text == "Running **two** commands."
        assert "## Done" in turns[3].text
        lines = "\n".join(line for t in turns for line in t.lines.values())
        assert "? ask-user asks: The demo tool would like to know" in lines
        assert "you answered: blue" in lines
        assert "✓ $ echo hello from bash · exit 0" in lines
        assert "✗ $ echo oops >&2; exit 3 · exit 3" in lines
        assert "✓ $ seq 1 5000 · exit 0" in lines and "· truncated" in lines
        drawn = "\n".join(transcript.plain_lines)
        assert drawn.startswith(f"Session {started.session_id} · 1 task\n")
        assert "▌ Task 1 · given at launch ━━" in drawn
        assert "\nLook around, carefully." in drawn
        assert "Running two commands." in drawn  # the Markdown, rendered
        assert "Done" in drawn and "• asked a question" in drawn
        # tool calls: one row per call with status, bytes, state effect and resource
        rows = [row.cells for row in screen.tools.rows.rows]
        assert [row[0] for row in rows] == ["ask-user", "bash", "bash", "bash"]
        # a shell call shows its exit code where its status shows, as the transcript does
        assert [row[1] for row in rows] == ["ok", "exit 0", "exit 3", "exit 0"]
        assert rows[0][5:] == ["read", "demo:question"]
        # shell: command, exit code, excerpt and truncation (rendered once the pane shows)
        await pilot.press("2")
        await wait_until(pilot, lambda: "exit 3" in "\n".join(row.cells[0]
                                                              for row in screen.shell.rows))
        shell = "\n".join(row.cells[0] for row in screen.shell.rows)
        assert "$ echo hello from bash   exit 0" in shell
        assert "exit 3" in shell and "stderr: oops" in shell
        assert "more lines" in shell and "output truncated at 16 KiB" in shell
        # hook faults: rows and the count on the tab
        faults = screen.faults.rows
        assert faults.row_count == 4
        assert faults.rows[0].cells[2] == "on-tool-call"
        tab = app.supervisor.query_one(TabbedContent).get_tab("tab-faults")
        assert "Hook faults (4)" in str(tab.label)
        # the status bar and the result
        status = str(screen.status.render())
        assert status.startswith("finished ok") and "turn 4/8" in status
        assert "4 hook faults" in status and "context" in status
        assert transcript.result is not None
        assert transcript.result[0] == "✓ task ok · 4 turns · 4 tool calls"
        assert "✓ task ok · 4 turns · 4 tool calls" in drawn


async def test_selecting_a_call_shows_its_input_and_output(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(160, 50)) as pilot:
        await replay(pilot, recorded())
        rows = app.supervisor.tools.rows
        rows.focus()
        await pilot.press("home", "down", "down")
        await wait_until(pilot, lambda: "echo oops >&2; exit 3"
                         in str(app.supervisor.tools.detail.render()))
        detail = str(app.supervisor.tools.detail.render())
        assert "echo oops >&2; exit 3" in detail
        # one truth per call: the detail says what the row and the transcript say
        assert "Exit code: 3" in detail and "status: exit 3 · " in detail
        assert "status: ok" not in detail
        assert rows.get(rows.highlighted or "").cells[1] == "exit 3"  # type: ignore[union-attr]


async def test_text_deltas_are_coalesced_into_few_batches(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    events = recorded()
    async with app.run_test(size=(120, 40)) as pilot:
        await replay(pilot, events)
        assert app.bridge.delivered <= 3  # 51 events arrived in a burst: a batch or two
        text = "".join(t.text for t in app.supervisor.transcript.window_turns)
        streamed = "".join(e.text for e in events if isinstance(e, ev.TextDelta))
        assert text == streamed


async def test_long_sessions_keep_a_bounded_window(murmur_home: Path) -> None:
    from tui.app.widgets import transcript as transcript_module

    app = SupervisorApp(murmur_home)
    stream = EventStream("ses_long")
    made: list[ev.Event] = []
    stream.add(type("Sink", (), {"emit": lambda self, e: made.append(e)})())
    turns = transcript_module.WINDOW * 3
    for turn in range(turns):
        stream.emit(ev.TurnStarted(task_id="t", turn=turn, max_turns=turns, input_tokens=1))
        stream.emit(ev.TextDelta(task_id="t", turn=turn, text=f"answer {turn}"))
        stream.emit(ev.ToolCallStarted(task_id="t", turn=turn, call_id=f"c{turn}",
                    tool_name="bash", kind="shell", input={}))
        stream.emit(ev.TurnCompleted(task_id="t", turn=turn, input_tokens=1, output_tokens=1,
                    decision="tool_call", stop_reason="tool_call", tool_name="bash",
                    model="m"))
    async with app.run_test(size=(120, 40)) as pilot:
        await replay(pilot, made)
        transcript = app.supervisor.transcript
        window = transcript.window_turns
        assert len(window) == transcript_module.WINDOW
        assert len(transcript.turns) == turns
        assert transcript.hidden_older == turns - transcript_module.WINDOW
        assert window[-1].text == f"answer {turns - 1}"
        drawn = list(transcript.plain_lines)
        assert drawn[0].strip().startswith(f"▲ {turns - transcript_module.WINDOW} earlier")
        # scrolling to the top brings older turns back, a batch at a time
        hidden = transcript.hidden_older
        # laid out first (a busy machine may not be yet): a scroll to the top is a scroll
        await wait_until(pilot, lambda: transcript.max_scroll_y > 0)
        transcript.scroll_home(animate=False)
        await wait_until(pilot, lambda: transcript.hidden_older < hidden)
        brought = hidden - transcript.hidden_older
        assert brought % transcript_module.LOAD_OLDER == 0
        assert transcript.window_turns[0].number == transcript.hidden_older + 1
        assert len(transcript.window_turns) == transcript_module.WINDOW + brought
        # memory stays bounded too: beyond MODEL_TURNS the oldest turns are let go
        assert transcript.turns.maxlen == transcript_module.MODEL_TURNS


async def test_thinking_can_be_hidden(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await replay(pilot, recorded())
        transcript = app.supervisor.transcript
        assert "I should ask before touching anything." in "\n".join(transcript.plain_lines)
        transcript.focus()
        await pilot.press("t")
        drawn = "\n".join(transcript.plain_lines)
        assert "I should ask before touching anything." not in drawn
        assert "thinking hidden" in drawn


async def test_a_retry_shows_on_the_status_bar_and_drops_the_partial_answer(
        murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    stream = EventStream("ses_retry")
    made: list[ev.Event] = []
    stream.add(type("Sink", (), {"emit": lambda self, e: made.append(e)})())
    stream.emit(ev.TurnStarted(task_id="t", turn=0, max_turns=3, input_tokens=1))
    stream.emit(ev.TextDelta(task_id="t", turn=0, text="half an ans"))
    stream.emit(ev.InferenceRetry(task_id="t", turn=0, attempt=1, max_attempts=3,
                status=429, reason="slow down", delay_ms=3_600_000))
    async with app.run_test(size=(120, 40)) as pilot:
        await replay(pilot, made)
        assert "retrying in" in str(app.supervisor.status.render())
        assert "(429)" in str(app.supervisor.status.render())
        assert app.state.retries == 1
        # the bar's once-a-second refresh keeps counting down
        await wait_until(pilot, lambda: "retrying in 3600 s"
                         not in str(app.supervisor.status.render()))
        assert app.supervisor.status.has_class("retrying")
        assert re.search(r"retrying in 3\d{3} s \(429\)", str(app.supervisor.status.render()))
        lines = list(app.supervisor.transcript.plain_lines)
        assert not any("half an ans" in line for line in lines)
        assert any("retrying in 3600.0 s (attempt 2 of 3)" in line for line in lines)

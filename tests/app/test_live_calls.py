"""What the screen shows while a call runs: a real shell command's lines in the shell pane
before it ends, the running call's newest line in the transcript, a spinner row in the tool
calls pane, and the result added without printing the output twice."""

from __future__ import annotations

from pathlib import Path

from tests.capsules import write_capsule
from tests.fakes import start_session as start
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.core.events import vocabulary as ev

# ticks every 100 ms, then waits (at most ~60 s) for ./go, which the test writes only once
# the ticks are on screen: they provably arrived while the command ran
COMMAND = ("for i in 1 2 3 4 5; do echo tick $i; sleep 0.1; done; "
           "for i in $(seq 600); do [ -f go ] && break; sleep 0.1; done; echo released")


def live_capsule(root: Path) -> Path:
    return write_capsule(root, [tool_response(COMMAND, "s1"), text_response("all done")],
                         name="live", max_turns=None,
                         # the command stays the call's, however slow
                         lifecycle={"shell_grace_secs": 600})


async def test_a_running_commands_lines_show_before_it_ends(tmp_path: Path,
                                                            murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    session = start(app, live_capsule(tmp_path / "c"))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.supervisor

        def shell_text() -> str:
            return "\n".join(row.cells[0] for row in screen.shell.rows)

        await wait_until(pilot, lambda: "tick 3" in shell_text(), within=60)
        assert screen.shell.count == 0  # the command has not ended: no result yet
        text = shell_text()
        assert text.splitlines()[0].endswith("running…") and "  tick 1" in text
        lines = "\n".join(line for t in screen.transcript.window_turns
                          for line in t.lines.values())
        assert "⋯ tick" in lines  # the running call's line shows its newest output
        rows = screen.tools.rows.rows
        assert rows[0].cells[1].endswith("run") and screen.tools.ticker is not None
        first = list(rows[0].cells)
        await wait_until(pilot, lambda: list(screen.tools.rows.rows[0].cells) != first)
        (session.paths.accessible / "go").write_text("")
        await wait_until(pilot, lambda: app.result is not None, within=60)
        await wait_until(pilot, lambda: screen.shell.count == 1)
        text = shell_text()
        assert text.count("tick 1") == 1  # shown live, not again as the excerpt
        assert "released" in text and "exit 0" in text
        # the header says how it ended, in place; the closing line under the output too, and
        # the command is not written twice
        shown = text.splitlines()
        assert shown[0].startswith("$ ") and "exit 0 · " in shown[0]
        assert shown[-1].startswith("  ✓ exit 0 · ")
        assert sum(line.startswith("$ ") for line in shown) == 1
        assert screen.tools.rows.rows[0].cells[1] == "exit 0"
        await wait_until(pilot, lambda: screen.tools.ticker is None)  # nothing runs: no timer


async def test_a_call_being_composed_shows_before_it_starts(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.supervisor
        base = {"session_id": "ses_x", "task_id": "tsk_1", "turn": 0}
        await screen.apply([
            ev.TaskStarted(session_id="ses_x", task_id="tsk_1", context_id="c", text="t"),
            ev.TurnStarted(**base, max_turns=5, input_tokens=1),
            ev.ToolCallComposing(**base, call_id="c1", tool_name="fetch", input_bytes=40)])
        lines = [line for t in screen.transcript.window_turns for line in t.lines.values()]
        assert any(line.startswith("✎ fetch") for line in lines)
        await screen.apply([
            ev.ToolCallStarted(**base, call_id="c1", tool_name="fetch", kind="wasm",
                               input={"url": "x"}),
            ev.ToolProgress(**base, call_id="c1", text="downloading 40%\n")])
        await wait_until(pilot, lambda: screen.tools.rows.rows[0].cells[6] == "downloading 40%")
        lines = [line for t in screen.transcript.window_turns for line in t.lines.values()]
        assert any("fetch" in line and "⋯ downloading 40%" in line for line in lines)
        assert screen.tools.rows.rows[0].cells[6] == "downloading 40%"

"""A shell command demoted to the background (it outran `lifecycle.shell_grace_secs`) is told
as moved on its call's transcript line, with its work id — never as a call that finished —
the line follows the newest line of its log while it runs (the Background pane's source), and
says how the work ended: completed with its exit code, or stopped."""

from __future__ import annotations

import re
from pathlib import Path

from tests.app.test_transcript_model import make
from tests.capsules import write_capsule
from tests.fakes import start_session as start
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.models.transcript import TranscriptModel
from tui.core.events import vocabulary as ev
from tui.core.events.wording import LineKind

# runs from the session workdir (<capsule>/workdir/<session>): says a line, waits for ../../go,
# says another, then runs until it is stopped
SCRIPT = ("echo first line\nwhile [ ! -f ../../go ]; do sleep 0.1; done\necho second line\n"
          "sleep 600\n")
COMMAND = "bash ../../wait.sh"
WAITS = "until [ -f ../../go ]; do sleep 0.05; done; echo done"


def capsule(root: Path, command: str, grace: float) -> Path:
    root = write_capsule(root, [tool_response(command, "s1"), text_response("it runs on"),
                                text_response("saw it end")],
                         name="bg", max_turns=None,
                         lifecycle={"task_acceptance": "queue", "after_task": "sleep",
                                    "shell_grace_secs": grace})
    (root / "wait.sh").write_text(SCRIPT)
    return root


def call_lines(app: SupervisorApp) -> list[str]:
    turns = app.supervisor.transcript.window_turns
    return list(turns[0].lines.values()) if turns else []


async def test_the_line_says_moved_follows_the_log_and_says_stopped(
        tmp_path: Path, murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    root = capsule(tmp_path / "c", COMMAND, 0.3)
    start(app, root)
    async with app.run_test(size=(240, 50)) as pilot:
        pane = app.supervisor.work_pane
        await wait_until(pilot, lambda: pane.running == 1)
        [work_id] = pane.work
        moved = (f"⇢ $ {COMMAND} · still running after 300 ms: moved to the background as "
                 f"{work_id}")
        await wait_until(pilot, lambda: call_lines(app) == [f"{moved}  ⋯ first line"],
                         what=lambda: call_lines(app))
        (root / "go").write_text("")
        await wait_until(pilot, lambda: call_lines(app) == [f"{moved}  ⋯ second line"],
                         what=lambda: call_lines(app))
        transcript = app.supervisor.transcript
        await wait_until(pilot, lambda: f"{moved}  ⋯ second line" in transcript.plain_lines,
                         what=lambda: transcript.plain_lines)
        assert not any(line.startswith("✓ bash") for line in transcript.plain_lines)
        row = app.supervisor.tools.rows.rows[0].cells
        assert (row[0], row[1]) == ("bash", "moved")  # the call returned its handle: not "ok"
        app.supervisor.tools.rows.focus()
        await wait_until(pilot, lambda: f"status: moved to the background as {work_id} after "
                         in str(app.supervisor.tools.detail.render()))

        await pilot.press("4")
        pane.rows.focus()
        await pilot.press("x")
        stopped = (f"⊘ $ {COMMAND} · moved to the background as {work_id} · stopped · "
                   f"exit 137")
        await wait_until(pilot, lambda: stopped in transcript.plain_lines,
                         what=lambda: transcript.plain_lines)
        assert call_lines(app) == [stopped]


async def test_the_line_says_how_completed_work_ended(tmp_path: Path,
                                                      murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home)
    # ends only once told to: a busy machine cannot let it finish inside its grace period
    root = capsule(tmp_path / "c", WAITS, 0.1)
    start(app, root)
    async with app.run_test(size=(240, 50)) as pilot:
        pane = app.supervisor.work_pane
        await wait_until(pilot, lambda: len(pane.work) == 1)
        [work_id] = pane.work
        (root / "go").write_text("")
        ended = re.compile(rf"✓ \$ {re.escape(WAITS)} · moved to the background as "
                           rf"{work_id} · exit 0 · (\d+ ms|\d+\.\d s)")
        await wait_until(pilot, lambda: any(ended.fullmatch(line) for line in call_lines(app)),
                         what=lambda: call_lines(app))
        await wait_until(pilot, lambda: any(ended.fullmatch(line)
                                            for line in app.supervisor.transcript.plain_lines))


def detached(work_id: str = "wrk_1") -> ev.ShellDetached:
    return make(ev.ShellDetached, task_id="t", turn=0, call_id="c1", work_id=work_id,
                binary="/usr/bin/bash", command="make all", grace_ms=1000,
                output_path=f"logs/{work_id}.log")


def demoted(model: TranscriptModel) -> None:
    """A call whose command moved to the background, in the order a session reports it."""
    model.take(make(ev.ToolCallStarted, task_id="t", turn=0, call_id="c1", tool_name="bash",
                    kind="shell", input={"command": "make all"}))
    model.take(make(ev.ShellOutput, task_id="t", turn=0, call_id="c1", stream="stdout",
                    text="building"))
    model.take(detached())
    model.take(make(ev.ShellOutput, task_id="t", turn=0, call_id="c1", stream="stdout",
                    text="late line of the call"))  # the call's feed, flushed after
    model.take(make(ev.ToolCallFinished, task_id="t", turn=0, call_id="c1", tool_name="bash",
                    kind="shell", status="ok", duration_ms=1000, input={"command": "make all"},
                    input_bytes=20, output="handle", output_bytes=300))


def entries(model: TranscriptModel) -> list[tuple[LineKind, str]]:
    return [entry for t in model.turns for entry in t.entries()]


MOVED = "⇢ $ make all · still running after 1.0 s: moved to the background as wrk_1"


def test_the_model_keeps_the_moved_line_over_the_calls_finish_and_takes_its_tail() -> None:
    model = TranscriptModel()
    demoted(model)
    assert entries(model) == [(LineKind.RUNNING, MOVED)]
    assert model.tail("wrk_1", "step 3 of 9\n") and \
        entries(model) == [(LineKind.RUNNING, f"{MOVED}  ⋯ step 3 of 9")]
    assert not model.tail("wrk_other", "x") and not model.tail("wrk_1", "  ")


def test_work_the_sessions_end_killed_says_so_and_a_failed_exit_is_a_failure() -> None:
    model = TranscriptModel()
    demoted(model)
    model.take(make(ev.ShellAbandoned, work_id="wrk_1", binary="/usr/bin/bash",
                    command="make all", running_ms=5000))
    assert entries(model) == [(LineKind.FAILURE, "⊘ $ make all · moved to the background as "
                                                 "wrk_1 · abandoned (the session ended) · "
                                                 "killed while running")]
    assert not model.tail("wrk_1", "after the end")  # ended: its line stays as it ended
    again = TranscriptModel()
    demoted(again)
    again.take(make(ev.ShellCompleted, work_id="wrk_1", binary="/usr/bin/bash",
                    command="make all", exit_code=2, duration_ms=64_000,
                    output_path="logs/wrk_1.log", output_bytes=10, status="error",
                    completion_task_id="tsk_2"))
    assert entries(again) == [(LineKind.FAILURE, "✗ $ make all · moved to the background as "
                                                 "wrk_1 · exit 2 · 1 min 4 s")]

"""What the screen says while a call waits for approval (`launch --approve`) and after it was
decided: waiting — not busy, no spinning run clock — while the dialog is open; a denied call's
line says denied, with no duration; and the dialog says word for word what `p` and `a` keep,
`a` storing the programs of a script's commands."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import yaml

from tests.app.test_approval_dialog import decide, start
from tests.app.test_transcript_model import make
from tests.conftest import CapsuleFactory
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.models.status import SessionState
from tui.app.models.transcript import TranscriptModel
from tui.core.events import vocabulary as ev
from tui.core.events.wording import LineKind


def calls_row(app: SupervisorApp) -> list[str]:
    rows = app.supervisor.tools.rows.rows
    return list(rows[0].cells) if rows else []


async def test_a_call_waiting_for_approval_is_shown_waiting_and_a_denied_one_denied(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    marker = tmp_path / "ran"
    root = make_capsule([tool_response(f"touch {marker}"), text_response("fine")])
    app = SupervisorApp(murmur_home)
    start(app, root, murmur_home)
    async with app.run_test(size=(400, 40)) as pilot:  # the line whole, however long the path
        screen = app.supervisor
        await wait_until(pilot, lambda: app.desk.approval_dialog is not None)
        waiting = re.compile(r"waiting for your approval: bash · 0:\d\d")
        await wait_until(pilot, lambda: waiting.fullmatch(app.state.status) is not None,
                         what=lambda: app.state.status)
        assert app.state.kind == "approval"
        bar = str(screen.status.render())
        assert bar.startswith("waiting for your approval: bash · 0:") and "busy" not in bar
        assert screen.status.has_class("approval")
        await wait_until(pilot, lambda: calls_row(app)[:2] == ["bash", "approval"],
                         what=lambda: calls_row(app))
        # the transcript says it waits, with no clock running: nothing runs yet
        asking = f'→ bash {{"command": "touch {marker}"}} · waiting for your approval'
        await wait_until(pilot, lambda: asking in screen.transcript.plain_lines,
                         what=lambda: screen.transcript.plain_lines)

        await decide(pilot, app, "d", *"not now", "enter")
        await wait_until(pilot, lambda: app.result is not None)
        await wait_until(pilot, lambda: calls_row(app)[:3] == ["bash", "denied", ""],
                         what=lambda: calls_row(app))
        lines = [line for t in screen.transcript.window_turns for line in t.lines.values()]
        assert lines[0] == f'⊘ bash {{"command": "touch {marker}"}} · denied: not now'
        assert not any("0 ms" in line or line.startswith("✗ bash") for line in lines)
        await wait_until(pilot, lambda: lines[0] in screen.transcript.plain_lines)
        screen.tools.rows.focus()
        await wait_until(pilot, lambda: "status: denied (not run): not now"
                         in str(screen.tools.detail.render()))
    assert not marker.exists()


async def test_an_approved_call_runs_its_clock_from_the_approval(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    root = make_capsule([tool_response("sleep 0.3; echo ok"), text_response("fine")])
    app = SupervisorApp(murmur_home)
    start(app, root, murmur_home)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: calls_row(app)[1:2] == ["approval"],
                         what=lambda: calls_row(app))
        await decide(pilot, app, "o")
        await wait_until(pilot, lambda: app.state.kind != "approval")
        assert not app.state.approvals and app.state.approval_since is None
        await wait_until(pilot, lambda: app.result is not None)
        await wait_until(pilot, lambda: calls_row(app)[1] == "exit 0",
                         what=lambda: calls_row(app))


async def test_the_dialog_says_what_each_choice_keeps_and_always_stores_programs(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([tool_response("git --version && ls", "c1"),
                         tool_response("git --version | ls -a", "c2"), text_response("done")])
    app = SupervisorApp(murmur_home)
    start(app, root, murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        _, call, choices = await decide(pilot, app, "a")
        assert call.endswith("(bash -c)\nscript  git --version && ls")
        assert choices == ("o  once\n"
                           "p  these prefixes for the session: bash -c git, ls\n"
                           "a  always for this capsule: bash -c git, ls\n"
                           "d  deny, with a reason")
        await wait_until(pilot, lambda: app.result is not None)
        assert app.desk.approval_dialog is None  # `git … | ls -a` ran on the stored rule
        assert app.result is not None and app.result.ok
    stored = yaml.safe_load((murmur_home / "tui" / "approvals.yaml").read_text())
    assert stored["capsules"][0]["shell"] == [["bash", "-c", "git"], ["bash", "-c", "ls"]]


async def test_a_script_with_shell_syntax_is_offered_as_written(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    script = "echo 'it is' > note.txt"
    root = make_capsule([tool_response(script), text_response("done")])
    app = SupervisorApp(murmur_home)
    start(app, root, murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        _, call, choices = await decide(pilot, app, "o")
        assert f"p  this prefix for the session: bash -c {script} (exactly this script)" \
            in choices
        assert call.endswith(f"script  {script}")
        assert "'\"'\"'" not in choices + call
        await wait_until(pilot, lambda: app.result is not None)


def test_the_status_waits_while_approvals_wait_and_runs_again_after() -> None:
    state = SessionState()
    state.apply(make(ev.SessionStarted, capsule_name="c", capsule_version="1", model="m",
                     max_turns=5, workdir="/w", trace_path="/w/trace.jsonl", context_id="x",
                     record_path=None, tools=()))
    state.apply(make(ev.ToolCallStarted, task_id="t", turn=0, call_id="c1", tool_name="bash",
                     kind="shell", input={"command": "ls"}))
    assert state.kind == "busy"
    state.waiting_for_approval((("c1", "bash"), ("c2", "fetch"), ("c3", "bash")))
    assert state.kind == "approval"
    assert state.status == "waiting for your approval: bash, fetch · 0:00"
    assert state.line().startswith("waiting for your approval: bash, fetch · 0:00  ·  turn 1/5")
    state.waiting_for_approval(())
    assert state.kind == "busy" and state.approval_since is None


def test_a_line_waiting_for_approval_has_no_clock_and_runs_from_the_approval() -> None:
    model = TranscriptModel()
    model.take(make(ev.TaskStarted, task_id="t", context_id="c", text="go"))
    model.take(dataclasses.replace(
        make(ev.ToolCallStarted, task_id="t", turn=0, call_id="c1", tool_name="bash",
             kind="shell", input={"command": "make"}), ts_ms=1_000))
    [turn] = model.turns
    assert model.awaiting({"c1"}, 5_000)
    assert list(turn.entries(60_000)) == [
        (LineKind.RUNNING, '→ bash {"command": "make"} · waiting for your approval')]
    assert not model.awaiting({"c1"}, 6_000)  # unchanged: nothing to redraw
    assert model.awaiting(set(), 9_000)  # approved at 9 s: the run counts from then
    assert list(turn.entries(10_500)) == [
        (LineKind.RUNNING, '→ bash {"command": "make"} · 1.5 s')]

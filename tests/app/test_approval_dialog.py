"""The approval dialog end to end: a real session, a real shell command waiting for a decision
(`launch --approve shell`), decided from the keyboard."""

from __future__ import annotations

import json
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import Static

from tests.app.conftest import key_clock, settle
from tests.conftest import CapsuleFactory, read_jsonl
from tests.responses import text_response, tool_response
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.screens.approve import ApproveScreen
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule
from tui.core.tools.approvals import prepare


class CountingApp(SupervisorApp):
    """Counts the approval dialogs its desk opens."""

    opened = 0

    def on_mount(self) -> None:
        desk = self.desk
        open_approval = desk.open_approval

        def counting() -> None:
            before = desk.approval_dialog
            open_approval()
            if desk.approval_dialog is not None and desk.approval_dialog is not before:
                self.opened += 1

        desk.open_approval = counting  # type: ignore[method-assign]


def start(app: SupervisorApp, root: Path, home: Path) -> Session:
    capsule = load_capsule(root)
    setup = prepare("shell", home, capsule.manifest_path, capsule.name)
    assert setup is not None
    session = Session(capsule, LaunchOptions(task="t", home=home), sinks=[app.bridge],
                      responder=app.responder, cancel=app.cancel,
                      approver=setup.gate(app.approver))
    app.attach(session)
    return session


async def decide(pilot: Pilot[int], app: SupervisorApp, *keys: str
                 ) -> tuple[ApproveScreen, str, str]:
    """Wait for the dialog, decide with `keys`; the dialog and its call and choices text."""
    await wait_until(pilot, lambda: app.desk.approval_dialog is not None
                   and bool(app.desk.approval_dialog.query("#choices"))
                   and bool(app.desk.approval_dialog.query("#call")))  # inside its scroll: later
    dialog = app.desk.approval_dialog
    assert dialog is not None
    call = str(dialog.query_one("#call", Static).render())
    choices = str(dialog.query_one("#choices", Static).render())
    await wait_until(pilot, lambda: dialog.armed)  # on screen, past the type-ahead guard
    await pilot.press(*keys)
    return dialog, call, choices


def tool_messages(session: Session) -> list[str]:
    assert session.record_path is not None
    return [json.dumps(m) for m in read_jsonl(session.record_path) if m.get("role") == "tool"]


async def test_a_denial_with_a_reason_reaches_the_model_and_the_trace(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    marker = tmp_path / "ran"
    root = make_capsule([tool_response(f"touch {marker}"), text_response("fine")])
    app = SupervisorApp(murmur_home)
    session = start(app, root, murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        _, call, _ = await decide(pilot, app, "d", *"not now", "enter")
        assert "binary  /" in call and "bash (bash -c)" in call
        assert f"script  touch {marker}" in call
        await wait_until(pilot, lambda: app.result is not None)
        await settle(pilot)
    assert not marker.exists()
    assert "the user denied this call: not now" in tool_messages(session)[0]
    trace = read_jsonl(session.paths.trace)
    denied = [line for line in trace if line["event_type"] == "call_denied"]
    assert [(d["event"], d["reason"]) for d in denied] == [("on-shell", "not now")]
    assert not [line for line in trace if line["event_type"] in ("tool_call", "shell")]


async def test_once_runs_it_and_the_same_command_asks_again(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    marker = tmp_path / "ran"
    root = make_capsule([tool_response(f"touch {marker}", "c1"),
                         tool_response(f"touch {marker}", "c2"), text_response("done")])
    app = CountingApp(murmur_home)
    session = start(app, root, murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        first, _, _ = await decide(pilot, app, "o")
        await wait_until(pilot, lambda: app.desk.approval_dialog not in (None, first))
        await decide(pilot, app, "o")
        await wait_until(pilot, lambda: app.result is not None)
    assert app.opened == 2 and marker.exists()
    kinds = [line["event_type"] for line in read_jsonl(session.paths.trace)]
    assert kinds.count("shell") == 2 and "call_denied" not in kinds


async def test_a_prefix_is_remembered_for_the_session(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    root = make_capsule([tool_response(f"touch {one}", "c1"),
                         tool_response(f"touch {two}", "c2"),
                         tool_response("echo other", "c3"), text_response("done")])
    app = CountingApp(murmur_home)
    session = start(app, root, murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        first, _, choices = await decide(pilot, app, "p")
        assert "bash -c touch" in choices
        # `touch <two>` matches the prefix: it runs; `echo other` does not: it asks
        await wait_until(pilot, lambda: app.desk.approval_dialog not in (None, first)
                       and bool(app.desk.approval_dialog.query("#call")))  # composed
        assert app.desk.approval_dialog is not None
        assert "echo other" in str(app.desk.approval_dialog.query_one("#call", Static).render())
        assert two.exists()
        await decide(pilot, app, "d", "enter")
        await wait_until(pilot, lambda: app.result is not None)
    assert app.opened == 2 and one.exists()
    assert "no reason given" in tool_messages(session)[2]
    assert not (murmur_home / "tui" / "approvals.yaml").exists()  # the session's only


async def test_always_is_stored_and_a_new_session_honours_it(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    root = make_capsule([tool_response(f"touch {one}"), text_response("done")])
    app = CountingApp(murmur_home)
    start(app, root, murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await decide(pilot, app, "a")
        await wait_until(pilot, lambda: app.result is not None)
    assert one.exists()
    store = murmur_home / "tui" / "approvals.yaml"
    assert (store.stat().st_mode & 0o777) == 0o600
    assert "touch" in store.read_text()

    (root / "script.json").write_text(json.dumps([tool_response(f"touch {two}"),
                                                  text_response("again")]))
    again = CountingApp(murmur_home)
    session = start(again, root, murmur_home)
    async with again.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: again.result is not None)
    assert again.opened == 0 and two.exists()
    assert again.result is not None and again.result.ok
    assert "call_denied" not in session.paths.trace.read_text()


async def test_cancel_ends_the_wait_as_a_denial(
        make_capsule: CapsuleFactory, tmp_path: Path, murmur_home: Path) -> None:
    marker = tmp_path / "ran"
    root = make_capsule([tool_response(f"touch {marker}"), text_response("never")])
    app = SupervisorApp(murmur_home)
    key_clock(app)
    session = start(app, root, murmur_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.approval_dialog is not None)
        dialog = app.desk.approval_dialog
        assert dialog is not None
        dialog.arming_seconds = 600  # the guard, held open however slow the machine is
        await pilot.press("o")  # inside the guard: ignored
        assert app.desk.approval_dialog is dialog
        dialog.arming_seconds = 0
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: app.result is not None)
        assert app.desk.approval_dialog is None
    assert not marker.exists()
    assert app.result is not None and app.result.exit_status == "canceled"
    denied = [line for line in read_jsonl(session.paths.trace)
              if line["event_type"] == "call_denied"]
    assert [d["reason"] for d in denied] == ["canceled by the user"]

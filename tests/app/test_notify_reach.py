"""A question waiting on the supervisor screen reaches the user beyond the terminal: a desktop
notification by a real `notify-send` program and a webhook received over loopback HTTP."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.app.test_attention import output, written
from tests.app.test_dialog import asking_capsule
from tests.fakes import start_session as start
from tests.fleet.test_fleet_notify import RFC3339, Hook, fleet_yaml, hook
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.core import names
from tui.core.loop.build import SessionSpec, build_session
from tui.core.loop.launch import LaunchOptions
from tui.core.manifest.reader import load_capsule
from tui.core.notify.outbound import Notice

__all__ = ["hook", "written"]  # fixtures


def fake_notify_send(folder: Path) -> Path:
    """A `notify-send` that writes its arguments, one a line, to `args` beside it."""
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / "notify-send"
    program.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {folder / 'args.tmp'}\n"
                       f"mv {folder / 'args.tmp'} {folder / 'args'}\n")
    program.chmod(0o755)
    return folder / "args"


async def test_a_waiting_question_goes_to_notify_send_and_the_webhook(
        tmp_path: Path, murmur_home: Path, written: list[str], hook: Hook,
        monkeypatch: pytest.MonkeyPatch) -> None:
    args = fake_notify_send(tmp_path / "bin")
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent")
    fleet_yaml(murmur_home, f"  webhook: {hook.url}\n")
    app = SupervisorApp(murmur_home)
    start(app, asking_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        _, _, body = await asyncio.to_thread(hook.next)
        told = json.loads(body)
        assert RFC3339.fullmatch(told.pop("asked_at"))
        assert told == {"session": app.state.session_id, "capsule": "asking",
                        "question": 'ask asks: {"p":"Which branch?"}'}
        assert app.state.session_id.startswith("ses_")
        await wait_until(pilot, args.exists)
        assert args.read_text().splitlines() == [
            "--app-name=murmur-tui", "--", f"asking ({app.state.session_id}) asks",
            'ask asks: {"p":"Which branch?"}']
        assert "\a" in output(written)  # and the terminal's bell, as before


async def test_the_webhook_names_a_named_session_by_its_name_as_it_is_now(
        tmp_path: Path, murmur_home: Path, hook: Hook, monkeypatch: pytest.MonkeyPatch) -> None:
    """The supervisor's body has the fleet's shape: `name` beside `session` and `capsule` —
    the name the session has when the question comes (renamed since it started here)."""
    monkeypatch.setenv("PATH", str(tmp_path))  # no notify-send
    fleet_yaml(murmur_home, f"  webhook: {hook.url}\n")
    app = SupervisorApp(murmur_home)
    session = build_session(SessionSpec(
        load_capsule(asking_capsule(tmp_path / "c")), LaunchOptions(task="t", name="nightly"),
        sinks=[app.bridge], responder=app.responder, cancel=app.cancel))
    app.attach(session)
    names.give(murmur_home, session.session_id, "release 2.1")  # `R` in a fleet meanwhile
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        _, _, body = await asyncio.to_thread(hook.next)
        told = json.loads(body)
        assert RFC3339.fullmatch(told.pop("asked_at"))
        assert told == {"session": session.session_id, "name": "release 2.1",
                        "capsule": "asking", "question": 'ask asks: {"p":"Which branch?"}'}
        assert list(json.loads(body)) == ["session", "name", "capsule", "question", "asked_at"]


async def test_a_webhook_that_cannot_be_reached_is_said_once_on_screen(
        tmp_path: Path, murmur_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("PATH", str(tmp_path))  # no notify-send at all: nothing fails
    monkeypatch.setenv("DISPLAY", ":0")
    fleet_yaml(murmur_home, f"  webhook: http://127.0.0.1:{port}/hook?token=s3cret\n")
    app = SupervisorApp(murmur_home)
    start(app, asking_capsule(tmp_path / "c"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.desk.dialog is not None)
        said = "the webhook at 127.0.0.1 could not be reached"
        await wait_until(pilot, lambda: any(said in str(n.message)
                                            for n in app._notifications))
        again = app.attention.outbound.send(Notice("ses_x", "asking", "again?",
                                                   "2026-01-01T00:00:00Z"))
        for thread in again:
            await asyncio.to_thread(thread.join, 10)
        await pilot.pause()
        messages = [str(n.message) for n in app._notifications]
        assert sum(said in m for m in messages) == 1
        assert not any("s3cret" in m or "Traceback" in m for m in messages)

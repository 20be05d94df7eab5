"""Notifications that reach the user from the fleet: the terminal's own sequence, the bell and
the title in what the real app writes, and the webhook received over loopback HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from queue import SimpleQueue

import pytest
from textual.drivers.headless_driver import HeadlessDriver

from tests.conftest import CapsuleFactory
from tests.fleet.test_fleet_screen import ask_capsule, row, until_state
from tests.served import Served, serve
from tests.waits import wait_until
from tui.app.fleet.app import FleetApp
from tui.core.events import vocabulary as ev
from tui.core.notify.beacon import RESTORE_TITLE, SAVE_TITLE

PROMPT = '{"q":"which branch?"}'  # what the test capsule's asking tool asks
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


class Hook:
    """A webhook receiver on loopback: every POST's path, headers and body, in order."""

    def __init__(self) -> None:
        self.received: SimpleQueue[tuple[str, dict[str, str], bytes]] = SimpleQueue()
        received = self.received

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                received.put((self.path, dict(self.headers.items()), body))
                self.send_response(204)
                self.end_headers()

            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                return None

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def next(self) -> tuple[str, dict[str, str], bytes]:
        return self.received.get(timeout=20)


@pytest.fixture
def hook() -> Iterator[Hook]:
    receiver = Hook()
    yield receiver
    receiver.server.shutdown()
    receiver.server.server_close()


@pytest.fixture
def written(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Everything the app sends to its terminal (the headless driver otherwise drops it)."""
    out: list[str] = []
    monkeypatch.setattr(HeadlessDriver, "write", lambda self, data: out.append(data))
    yield out


def output(written: list[str]) -> str:
    """What the app wrote, less Textual's own mouse-pointer shape (OSC 22)."""
    return re.sub("\x1b]22;[a-z-]*\x07", "", "".join(written))


def fleet_yaml(home: Path, notify: str) -> None:
    """A fleet file whose other keys belong to other readers: only `notify:` is read here."""
    (home / "tui").mkdir(parents=True, exist_ok=True)
    (home / "tui" / "fleet.yaml").write_text(f"hosts: []\nnotify:\n{notify}")


async def test_a_question_is_told_on_the_terminal_and_to_the_webhook_and_its_answer_in_the_title(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served], hook: Hook,
        written: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM_PROGRAM", "WezTerm")  # OSC 777
    monkeypatch.delenv("TMUX", raising=False)
    monkeypatch.setenv("DISPLAY", ":0")  # a display, but no notify-send on PATH: nothing fails
    monkeypatch.setenv("PATH", str(murmur_home))
    fleet_yaml(murmur_home, f"  webhook: {hook.url}\n")
    door = serve(ask_capsule(make_capsule, "asker"))
    served.append(door)
    sid = door.session_id
    app = FleetApp(murmur_home)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: sid in app.sessions and row(app, door).connection ==
                         "live")
        task = door.send("ask me")
        told_osc = f"\x1b]777;notify;asker ({sid}) asks;{PROMPT}\x07"
        await wait_until(pilot, lambda: told_osc in output(written))
        # the title follows the list (the row moved), the notification and the bell follow it
        assert (SAVE_TITLE + "\x1b]2;murmur-tui · 1 needs you\x07" + told_osc + "\a") in \
            output(written)
        path, headers, body = await asyncio.to_thread(hook.next)
        told = json.loads(body)
        assert path == "/hook" and headers["Content-Type"] == "application/json"
        assert "Authorization" not in headers
        assert RFC3339.fullmatch(told.pop("asked_at"))
        assert told == {"session": sid, "capsule": "asker", "question": PROMPT}
        # answered from the fleet: nothing is retracted, the title says it is answered
        written.clear()
        app.fleet.rows.select_key(sid)
        await pilot.press("a")
        await pilot.press(*"main", "enter")
        await until_state(door, task["id"], "TASK_STATE_COMPLETED")
        await wait_until(pilot, lambda: "\x1b]2;murmur-tui · all answered\x07" in
                         output(written))
        assert "\x1b]777;" not in output(written)
        # a question carrying an escape sequence of its own reaches nothing raw
        written.clear()
        app.inbox.put((sid, [ev.InputRequested(session_id=sid, task_id=None, request_id="r9",
                                               prompt="deploy?\x1b]0;evil\x07 now",
                                               tool_name="ask")]))
        evil_osc = f"\x1b]777;notify;asker ({sid}) asks;deploy?␛]0;evil␇ now\x07"
        await wait_until(pilot, lambda: evil_osc in output(written))
        out = output(written)
        assert "\x1b]2;murmur-tui · 1 needs you\x07" in out
        assert "\x1b]0;" not in out and "evil\x07" not in out
        _, _, body = await asyncio.to_thread(hook.next)
        assert json.loads(body)["question"] == "deploy?␛]0;evil␇ now"
        written.clear()
    assert output(written).endswith("\x1b]2;murmur-tui\x07" + RESTORE_TITLE)


async def test_terminal_false_keeps_the_terminal_quiet_and_still_posts(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served], hook: Hook,
        written: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")
    monkeypatch.delenv("TMUX", raising=False)
    fleet_yaml(murmur_home, f"  webhook: {hook.url}\n  body: text\n  terminal: false\n"
               "  desktop: false\n")
    door = serve(ask_capsule(make_capsule, "asker"))
    served.append(door)
    app = FleetApp(murmur_home)
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_until(pilot, lambda: door.session_id in app.sessions and
                         row(app, door).connection == "live")
        door.send("ask me")
        _, headers, body = await asyncio.to_thread(hook.next)
        assert body.decode() == f"asker ({door.session_id}) asks: {PROMPT}"
        assert headers["Content-Type"].startswith("text/plain")
        assert headers["Title"] == f"murmur-tui: asker ({door.session_id}) needs you"
        await wait_until(pilot, lambda: row(app, door).group == "needs")
        await pilot.pause()
        out = output(written)
        assert "\x1b]9;" not in out and "needs you" not in out and "\a" not in out


def test_the_fleet_in_a_real_terminal_writes_kittys_notification_and_the_title(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    """`murmur-tui fleet` on a pseudo-terminal, as a person runs it: the bytes it writes."""
    import fcntl
    import pty
    import struct
    import subprocess
    import sys
    import termios
    import time

    door = serve(ask_capsule(make_capsule, "asker"))
    served.append(door)
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 160, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("TMUX", "TERM_PROGRAM")}
    env.update(TERM="xterm-kitty", MURMUR_HOME=str(murmur_home))
    process = subprocess.Popen([sys.executable, "-m", "tui", "fleet"], stdin=follower,
                               stdout=follower, stderr=follower, env=env, close_fds=True,
                               start_new_session=True)
    os.close(follower)
    seen = bytearray()
    lock = threading.Lock()

    def read() -> None:
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                return
            if not chunk:
                return
            with lock:
                seen.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()

    def until(marker: bytes) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            with lock:
                if marker in seen:
                    return
            if process.poll() is not None:
                break
            time.sleep(0.05)
        raise AssertionError(f"{marker!r} never written; the fleet wrote {bytes(seen)[-2000:]!r}")

    try:
        door.send("ask me")  # asked before or after the fleet finds it: told all the same
        title = f"\x1b]99;i=murmur:d=0:p=title;asker ({door.session_id}) asks\x1b\\"
        until(title.encode())
        until(f"\x1b]99;i=murmur:d=1:p=body;{PROMPT}\x1b\\\a".encode())
        until("\x1b]2;murmur-tui · 1 needs you\x07".encode())
        os.write(leader, b"\x11")  # Ctrl+Q
        assert process.wait(30) == 0
        until(RESTORE_TITLE.encode())
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        reader.join(5)
        os.close(leader)

"""One look at a host, over real HTTP on loopback: a listed session's token is read (and sent)
only when its door's public card names no other session; a host of doors none of which
answers is unreachable with why and a retry time that grows; one that answers again is ok."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tui.core.hosts.config import HostConfig
from tui.core.hosts.tokens import TokenSource
from tui.core.hosts.watch import HostReport, HostWatcher

LISTED = "ses_019f00000000000000000000000000aa"
OTHER = "ses_019f00000000000000000000000000bb"


def card(session_id: str) -> dict[str, Any]:
    """A public v1.0 card naming `session_id` (the capsule extension)."""
    return {"name": "door", "version": "1.0.0", "capabilities": {"extensions": [
        {"uri": "https://docs.murmur.nexus/reference/agent-card/#murmur-capsule-v1",
         "params": {"sessionId": session_id}}]},
        "supportedInterfaces": [{"url": "http://x", "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}]}


class Door(BaseHTTPRequestHandler):
    session_id = OTHER

    def do_GET(self) -> None:
        body = json.dumps(card(self.session_id)).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def door() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Door)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_door_naming_another_session_than_listed_gets_no_token(
        tmp_path: Path, door: str) -> None:
    asked = tmp_path / "asked"
    token = tmp_path / "token.py"
    token.write_text(f"import pathlib, sys\npathlib.Path({str(asked)!r}).write_text(sys.argv[1])"
                     "\nprint('tok-from-command')\n")
    listing = tmp_path / "list.py"
    rows = [{"session_id": LISTED, "url": door}, {"session_id": OTHER, "url": door}]
    listing.write_text(f"print({json.dumps(json.dumps(rows))})\n")
    host = HostConfig("lab", discover=(sys.executable, str(listing)),
                      token=TokenSource("command", argv=(sys.executable, str(token))))
    report = HostWatcher(host, lambda _: None).look()
    assert report.found is not None
    assert [(found.session_id, found.url, found.token) for found in report.found] == [
        (OTHER, f"http://{door}", "tok-from-command")]
    assert report.why == (f"{LISTED}: the door at http://{door} serves session {OTHER}, not "
                          "the one listed there: not watched, no token sent")
    assert asked.read_text() == OTHER  # the command ran for the session its door names only


def test_a_host_whose_doors_do_not_answer_is_retried_later_each_time_then_ok(
        tmp_path: Path, door: str) -> None:
    gone = "127.0.0.1:9"  # nothing listens on the discard port
    reports: list[HostReport] = []
    watcher = HostWatcher(HostConfig("far", doors=(f"http://{gone}",)), reports.append)
    before = time.monotonic()
    first, second = watcher.look(), watcher.look()
    assert first.found is None and first.failures == 1 and second.failures == 2
    assert first.why.startswith("no door answers: ") and gone in first.why
    assert first.retry_at is not None and second.retry_at is not None
    assert first.retry_at >= before + 2.0  # tried again 2 s on (and a tenth at most more),
    assert second.retry_at - first.retry_at >= 4.0 - 2.2  # then 4 s on
    # a door that answers beside the one that does not: ok, the silent one named
    watcher.host = HostConfig("far", doors=(f"http://{gone}", f"http://{door}"))
    back = watcher.look()
    assert back.found is not None and [f.session_id for f in back.found] == [OTHER]
    assert back.failures == 0 and back.retry_at is None and gone in back.why
    # on its thread: reported, and closed when asked
    watcher.start()
    deadline = time.monotonic() + 30
    while not reports and time.monotonic() < deadline:
        time.sleep(0.05)
    watcher.close()
    assert reports and reports[0].found is not None


class NamelessDoor(Door):
    """A door whose public card names no session (an authenticated one's)."""

    def do_GET(self) -> None:
        body = json.dumps({**card(OTHER), "capabilities": {}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_a_hosts_new_sessions_are_checked_at_once_not_one_after_another(
        tmp_path: Path) -> None:
    """Each token command waits until all three have started: run one after another, the
    first would wait in vain and fail, and no session would be watched."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), NamelessDoor)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    started = tmp_path / "started"
    started.mkdir()
    token = tmp_path / "token.py"
    token.write_text(
        "import pathlib, sys, time\n"
        f"folder = pathlib.Path({str(started)!r})\n"
        "(folder / sys.argv[1]).write_text('')\n"
        "ends = time.monotonic() + 8\n"
        "while len(list(folder.iterdir())) < 3:\n"
        "    if time.monotonic() > ends:\n"
        "        sys.exit('the others never started')\n"
        "    time.sleep(0.02)\n"
        "print('tok-' + sys.argv[1][-2:])\n")
    sessions = [f"ses_019f0000000000000000000000000{n}c" for n in range(100, 103)]
    rows = [{"session_id": s, "url": f"127.0.0.1:{server.server_address[1]}"}
            for s in sessions]
    listing = tmp_path / "list.py"
    listing.write_text(f"print({json.dumps(json.dumps(rows))})\n")
    host = HostConfig("lab", discover=(sys.executable, str(listing)),
                      token=TokenSource("command", argv=(sys.executable, str(token))))
    try:
        report = HostWatcher(host, lambda _: None).look()
    finally:
        server.shutdown()
        server.server_close()
    assert report.why == ""
    assert report.found is not None
    assert [(found.session_id, found.token) for found in report.found] == [
        (session, f"tok-{session[-2:]}") for session in sessions]  # in the listing's order


def test_what_a_host_passed_over_is_said_in_a_few_notes_and_how_many_more() -> None:
    from tui.core.hosts.watch import said

    assert said([]) == ""
    assert said(["a", "b", "c"]) == "a; b; c"
    assert said([f"ses_{n}: not a session" for n in range(1000)]) == \
        "ses_0: not a session; ses_1: not a session; ses_2: not a session; and 997 more"

"""The loopback relay that carries a formation member's component requests to its callees
(tui/core/wasm/formation_peers.py), spoken to over real HTTP: a request without the relay's
secret is answered 404 and reaches no door; with it, the door gets the edge's token and origin
peer in place of the caller's, and the answer comes back as it is."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from tui.core.formation.seat import Callee, Seat
from tui.core.wasm.formation_peers import PeerRelay, env_value

TOKEN = "mft1.eyJmcm9tIjoibGVhZCJ9.c2lnbmF0dXJl"


@pytest.fixture
def door() -> Iterator[tuple[str, list[dict[str, str]]]]:
    seen: list[dict[str, str]] = []

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("content-length") or 0))
            seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
            self.send_response(202)
            self.send_header("content-length", "4")
            self.end_headers()
            self.wfile.write(b"took")

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()


@pytest.fixture
def relay(door: tuple[str, list[dict[str, str]]]) -> Iterator[PeerRelay]:
    seat = Seat("frm_" + "1" * 32, "lead", True, "key", (Callee("coder", TOKEN),))
    seat.know_urls({"coder": door[0]})
    found = PeerRelay(seat)
    yield found
    found.close()


def test_the_variable_names_the_callees_in_roster_order() -> None:
    assert env_value(("coder", "reviewer")) == (
        "coder=http://coder.formation.invalid reviewer=http://reviewer.formation.invalid")


def test_a_request_without_the_secret_goes_nowhere(
        relay: PeerRelay, door: tuple[str, list[dict[str, str]]]) -> None:
    authority, path = relay.target("coder", "/rpc")
    assert path.endswith("/coder/rpc")
    for guess in ("/coder/rpc", "/rpc", path.replace("/coder/", "/reviewer/")):
        answer = httpx.post(f"http://{authority}{guess}", content=b"{}")
        assert answer.status_code == 404 and TOKEN not in answer.text
    assert door[1] == []


def test_a_relayed_request_carries_the_token_and_not_the_callers_credentials(
        relay: PeerRelay, door: tuple[str, list[dict[str, str]]]) -> None:
    authority, path = relay.target("coder", "/rpc?x=1")
    answer = httpx.post(f"http://{authority}{path}", content=b"{}", headers={
        "authorization": "Bearer mine", "x-murmur-task-origin": "user",
        "x-murmur-task-trust": "trusted", "x-other": "kept"})
    assert (answer.status_code, answer.text) == (202, "took")
    (seen,) = door[1]
    assert seen["path"] == "/rpc?x=1"
    assert seen["authorization"] == f"Bearer {TOKEN}"
    assert seen["x-murmur-task-origin"] == "peer"
    assert "x-murmur-task-trust" not in seen and seen["x-other"] == "kept"

"""A formation member's components reach its callees at their virtual addresses (spec
murmur-newest §7.5): a real componentize-py tool (`py_http_tool`) making wasi:http requests from
a member's session — `MURMUR_FORMATION_PEERS` in its environment, a request to
`http://coder.formation.invalid` carried to coder's real served door with the edge's `mft1.`
token (which the door verifies: the task is `member:lead`'s, origin peer), the guest's own
credentials dropped, the token never handed back; a member that is not a callee, and a member
whose allow-list lacks `localhost`, refused. Shell commands do not get the variable."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.capsules import write_capsule
from tests.door.test_member_tokens import Member, serving_coder, trace_lines
from tests.e2e.test_language_guests import guest
from tests.fakes import Collect
from tests.guests.build import cache_root
from tests.responses import call_response, text_response
from tests.waits import block_until
from tui.core.events import vocabulary as ev
from tui.core.formation.seat import Callee, Seat
from tui.core.formation.tokens import mint, new_keys
from tui.core.loop.launch import LaunchOptions, SessionResult
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule

pytestmark = pytest.mark.slow

PEERS = "coder=http://coder.formation.invalid echo=http://echo.formation.invalid"
GUEST_AUTH = "Bearer the-guests-own-key"


class Echo:
    """A loopback server standing for a callee's door: it keeps each request's path, headers
    and body, and answers 200 with a body and a header of its own."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, str], bytes]] = []
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: object) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                answer = b'{"echoed": true}'
                self.send_response(201)
                self.send_header("content-type", "application/json")
                self.send_header("x-echo", "yes")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def echo() -> Iterator[Echo]:
    server = Echo()
    yield server
    server.stop()


@pytest.fixture
def coder(tmp_path: Path) -> Iterator[Member]:
    with serving_coder(tmp_path, [text_response("coder did it")]) as item:
        yield item


@pytest.fixture(autouse=True)
def shared_compiled_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    """The guest is compiled once for every test (and every run)."""
    monkeypatch.setenv("MURMUR_COMPILED_CACHE", str(cache_root() / "compiled-host"))


def request(url: str, body: str, headers: list[list[str]] | None = None) -> dict[str, Any]:
    return {"url": url, "method": "POST", "body": body,
            "headers": [["content-type", "application/json"], ["authorization", GUEST_AUTH],
                        ["x-murmur-task-origin", "user"], ["x-murmur-task-trust", "trusted"],
                        *(headers or [])]}


def send_message(text: str) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}]}}})


def lead(root: Path, calls: list[tuple[str, dict[str, Any]]], allow: str = "[localhost]"
         ) -> Path:
    """The calling member: the http tool, called once a turn as `calls` says, and a shell."""
    steps = [call_response(tool, given, call_id=f"c{n}")
             for n, (tool, given) in enumerate(calls)]
    return write_capsule(root, [*steps, text_response("lead is done")], name="lead",
                         shell=("bash",), tools={"http": guest("py_http_tool")},
                         capabilities=f"  network:\n    allow: {allow}\n")


def run(root: Path, seat: Seat) -> tuple[SessionResult, dict[str, ev.ToolCallFinished]]:
    sink = Collect()
    result = Session(load_capsule(root), LaunchOptions(task="call them", seat=seat),
                     sinks=[sink]).run()
    assert result.exit_status == "ok"
    return result, {e.call_id: e for e in sink.of(ev.ToolCallFinished)}


def data(finished: ev.ToolCallFinished) -> dict[str, Any]:
    """The guest's JSON, out of the fence a tool's result is given to the model in."""
    found, _ = json.JSONDecoder().raw_decode(finished.output[finished.output.index("{"):])
    return dict(found)


def test_a_components_request_reaches_the_callees_door_as_the_member(
        tmp_path: Path, coder: Member, echo: Echo) -> None:
    signing, _ = new_keys()
    echo_token = mint(signing, coder.frm, "lead", "echo")
    seat = Seat(coder.frm, "lead", True, "unused-here",
                (Callee("coder", coder.lead), Callee("echo", echo_token)))
    seat.know_urls({"coder": coder.url, "echo": echo.url})
    root = lead(tmp_path / "lead", [
        ("http", request("http://coder.formation.invalid/", send_message("write it"),
                         [["a2a-version", "1.0"]])),
        ("http", request("http://echo.formation.invalid/v1/x?y=1", '{"hello": 1}')),
        ("http", request("http://stranger.formation.invalid/", "{}")),
        ("bash", {"command": "echo \"peers=[$MURMUR_FORMATION_PEERS] in $MURMUR_SESSION_ID\""}),
    ])
    result, calls = run(root, seat)
    # coder's door took the task from member:lead, a peer task: the token, not the guest's key
    sent = data(calls["c0"])
    assert sent["status"] == 200, sent
    assert sent["peers"] == PEERS
    task_id = json.loads(sent["body"])["result"]["task"]["id"]
    block_until(lambda: any(line["event_type"] == "task_start" for line in trace_lines(coder)),
                what="coder's task starts")
    lines = trace_lines(coder)
    assert [(line["task_id"], line["caller_member"]) for line in lines
            if line["event_type"] == "a2a_task_received"] == [(task_id, "lead")]
    assert [(line["task_id"], line["origin"]) for line in lines
            if line["event_type"] == "task_start"] == [(task_id, "peer")]
    # at the door (the echo server), the guest's credentials and claims are gone, the edge's
    # token and origin peer are there, the rest as the guest sent it
    ((path, headers, body),) = echo.seen
    assert path == "/v1/x?y=1" and body == b'{"hello": 1}'
    assert headers["authorization"] == f"Bearer {echo_token}"
    assert headers["x-murmur-task-origin"] == "peer"
    assert "x-murmur-task-trust" not in headers
    assert headers["content-type"] == "application/json"
    echoed = data(calls["c1"])
    assert (echoed["status"], echoed["body"]) == (201, '{"echoed": true}')
    assert ["x-echo", "yes"] in echoed["headers"]
    # a member lead may not call: refused before anything is sent
    refused = data(calls["c2"])
    assert calls["c2"].status == "error" and "HttpRequestDenied" in refused["error"]
    log = (result.paths.logs / "http.log").read_text(encoding="utf-8")
    assert ("network policy: 'http://stranger.formation.invalid' is not a member this one may "
            "call (its callees: coder, echo)") in log
    # a shell command is told who the session is, not where the members are
    assert f"peers=[] in {result.session_id}" in calls["c3"].output
    # the token never reached the guest, nor anything the session wrote
    for token in (coder.lead, echo_token):
        assert not any(token in finished.output for finished in calls.values())
        for file in result.paths.session.rglob("*"):
            if file.is_file():
                assert token not in file.read_text(encoding="utf-8", errors="replace"), file


def test_without_localhost_in_the_allow_list_a_callee_is_refused(
        tmp_path: Path, echo: Echo) -> None:
    signing, key = new_keys()
    seat = Seat("frm_" + "0" * 32, "lead", True, key,
                (Callee("echo", mint(signing, "frm_" + "0" * 32, "lead", "echo")),))
    seat.know_urls({"echo": echo.url})
    root = lead(tmp_path / "lead", [("http", request("http://echo.formation.invalid/", "{}"))],
                allow="[example.com]")
    result, calls = run(root, seat)
    refused = data(calls["c0"])
    assert calls["c0"].status == "error" and "HttpRequestDenied" in refused["error"]
    assert refused["peers"] == "echo=http://echo.formation.invalid"
    assert echo.seen == []
    log = (result.paths.logs / "http.log").read_text(encoding="utf-8")
    assert ("network policy: 'http://echo.formation.invalid' is a formation member, but "
            "capabilities.network.allow does not include localhost, so no member's door can "
            "be reached (W-RUN-008)") in log


def test_a_member_that_calls_no_one_has_no_peers(tmp_path: Path, echo: Echo) -> None:
    seat = Seat("frm_" + "0" * 32, "lead", True, "unused-here")
    root = lead(tmp_path / "lead", [("http", request("http://echo.formation.invalid/", "{}"))])
    result, calls = run(root, seat)
    refused = data(calls["c0"])
    assert refused["peers"] is None
    assert echo.seen == []
    log = (result.paths.logs / "http.log").read_text(encoding="utf-8")
    assert ("network policy: 'http://echo.formation.invalid' is not a member this one may "
            "call (its callees: none)") in log

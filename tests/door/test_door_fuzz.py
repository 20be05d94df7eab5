"""The door fuzzed: JSON-RPC bodies of valid shape and hostile ones (deep nesting, lone
surrogates in every field, huge numbers, wrong types, null params, bad ids, bytes that are not
JSON) under hostile headers (`Last-Event-ID`, `A2A-Version`, `Authorization` with NUL,
content-type variants), against one live `launch --headless --serve` session. Every request
gets an HTTP answer; afterwards the session still runs a task to completion, every file it
wrote reads back, and it said nothing on stderr. (`session/stop` is left out: it ends the
session by design.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import CapsuleFactory
from tests.door.wire import build, exchange, files_intact
from tests.responses import text_response
from tests.served import SLEEP, Served, serve

LONE = st.sampled_from(["\ud800", "\udfff", "a\udc80b", "\ud83d"])
TEXT = st.one_of(st.text(max_size=12), LONE)
IDS = st.one_of(st.integers(), st.integers(min_value=10 ** 30), TEXT, st.none(), st.booleans(),
                st.floats(allow_nan=False, allow_infinity=False), st.lists(st.integers(),
                                                                           max_size=2))
VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(),
              st.floats(allow_nan=False, allow_infinity=False), TEXT),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8)
PART = st.one_of(st.fixed_dictionaries({"text": TEXT}), st.fixed_dictionaries({"data": VALUES}),
                 st.fixed_dictionaries({"url": TEXT}), VALUES)
MESSAGE = st.fixed_dictionaries(
    {"messageId": st.one_of(TEXT, VALUES), "role": st.sampled_from(["ROLE_USER", "user", None]),
     "parts": st.one_of(st.lists(PART, max_size=3), VALUES)},
    optional={"contextId": st.one_of(TEXT, IDS), "taskId": st.one_of(TEXT, IDS),
              "metadata": VALUES, "referenceTaskIds": st.lists(TEXT, max_size=3)})
PARAMS = st.one_of(
    st.none(), VALUES,
    st.fixed_dictionaries({"message": MESSAGE}, optional={"metadata": VALUES}),
    st.fixed_dictionaries({"id": st.one_of(TEXT, IDS)},
                          optional={"contextId": st.one_of(TEXT, IDS), "metadata": VALUES}))
METHODS = st.one_of(st.sampled_from(["SendMessage", "SendStreamingMessage", "GetTask",
                                     "CancelTask", "stream/watch", "GetExtendedAgentCard",
                                     "message/send", "tasks/get", ""]), TEXT)
REQUEST = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", 2]), "method": METHODS, "id": IDS},
    optional={"params": PARAMS}
).filter(lambda request: request["method"] != "session/stop")


def _dumped(value: Any) -> bytes:
    return json.dumps(value).encode()  # ensure_ascii: a lone surrogate goes as "\ud800"


HOSTILE = st.one_of(
    st.integers(128, 200_000).map(lambda n: b"[" * n + b"]" * n),
    st.integers(128, 150_000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
    st.integers(128, 5000).map(lambda n: b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", '
                                         b'"params": {"id": ' + b"[" * n + b"]" * n + b"}}"),
    st.sampled_from([
        b"1e999", b"NaN", b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "x"}',
        b'{"jsonrpc": "2.0", "id": 1e999, "method": "GetTask"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": 1e999}}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": NaN}}',
        b"\xef\xbb\xbf{}", b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "GetTask"}',
        b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "\xed\xa0\x80"}}',
        b"", b"null", b"[]", b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": null}',
    ]),
    st.binary(max_size=64))
BODY = st.one_of(REQUEST.map(_dumped), HOSTILE)

HEADER_BYTES = st.binary(max_size=12).filter(lambda value: b"\n" not in value)
LAST_EVENT_ID = st.one_of(st.none(), st.sampled_from(
    [b"0", b"12", b"7" * 5000, b"\xb2", "\u0663".encode(), b"\xed\xa0\x80", b"x", b"-1"]),
    HEADER_BYTES)
VERSION = st.one_of(st.just(b"1.0"), st.sampled_from([b"1.0.3", b"0.3", b"", b"1.0\x00"]),
                    st.none(), HEADER_BYTES)
AUTHORIZATION = st.one_of(st.none(), st.sampled_from(
    [b"Bearer x", b"Bearer \x00", b"Bearer a\rb", b"Basic Zm9v", b"\xff\xfe"]), HEADER_BYTES)
CONTENT_TYPE = st.sampled_from([b"application/json", b"application/json; charset=utf-8",
                                b"APPLICATION/JSON", b"text/plain", None,
                                b"application/json\x00"])
TARGET = st.sampled_from([(b"POST", b"/")] * 6 + [(b"GET", b"/.well-known/agent-card.json"),
                                                  (b"POST", b"/x"), (b"PUT", b"/")])


def request_bytes(body: bytes, target: tuple[bytes, bytes], headers: dict[bytes, bytes | None]
                  ) -> bytes:
    method, path = target
    return build(body, [(name, value) for name, value in headers.items() if value is not None],
                 method, path)


def test_every_fuzzed_request_is_answered_and_the_session_stays_whole(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    root = make_capsule([text_response(f"answer {n}") for n in range(400)],
                        extra=SLEEP.replace("queue_depth: 4", "queue_depth: 2"))
    door = serve(root)
    served.append(door)
    statuses: set[int] = set()

    @settings(max_examples=200, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                     HealthCheck.large_base_example])
    @given(body=BODY, target=TARGET, last=LAST_EVENT_ID, version=VERSION, auth=AUTHORIZATION,
           content_type=CONTENT_TYPE)
    def one(body: bytes, target: tuple[bytes, bytes], last: bytes | None,
            version: bytes | None, auth: bytes | None, content_type: bytes | None) -> None:
        raw = exchange(door.url, request_bytes(body, target, {
            b"content-type": content_type, b"a2a-version": version, b"last-event-id": last,
            b"authorization": auth}))
        assert raw.startswith(b"HTTP/1.1 "), raw[:200]
        status = int(raw.split(b" ", 2)[1])
        assert status in (200, 400, 404, 408, 413, 431, 501), raw[:300]
        statuses.add(status)
        if status == 200 and b"text/event-stream" not in raw.partition(b"\r\n\r\n")[0]:
            json.loads(raw.partition(b"\r\n\r\n")[2])  # every JSON answer is JSON
        assert door.process.poll() is None, "the session ended"

    one()
    assert {200, 400, 404} <= statuses  # the fuzz reached past the edge, and was held at it
    task = door.send("still there?")
    assert door.until(task["id"], "TASK_STATE_COMPLETED")["artifacts"][0]["parts"][0]["text"]
    assert files_intact(root, murmur_home) >= 3
    door.rpc("session/stop")
    assert door.process.wait(60) == 0
    assert door.process.stderr is not None
    said = door.process.stderr.read()
    assert "Traceback" not in said and "Unhandled" not in said, said[-2000:]

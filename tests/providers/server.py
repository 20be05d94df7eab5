"""A model provider for the tests: real HTTP on loopback, real SSE framing, for the OpenAI
chat-completions and the Anthropic Messages APIs. Each request takes the next scripted reply;
every request is kept (headers and body) for the tests to inspect."""

from __future__ import annotations

import json
import select
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Reply = Callable[["Handler"], None]


@dataclass
class Seen:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class Provider:
    replies: list[Reply] = field(default_factory=list)
    seen: list[Seen] = field(default_factory=list)
    server: ThreadingHTTPServer | None = None
    hung_up: threading.Event = field(default_factory=threading.Event)  # a client went away

    @property
    def url(self) -> str:
        assert self.server is not None
        port = self.server.server_address[1]
        return f"http://127.0.0.1:{port}"

    def start(self) -> Provider:
        provider = self

        class Bound(Handler):
            owner = provider

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Bound)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.shutdown()
            self.server.server_close()


class Handler(BaseHTTPRequestHandler):
    owner: Provider
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # small answers go out at once, as a real server's do

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        return None

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length", "0"))
        raw = self.rfile.read(length)
        self.owner.seen.append(Seen(self.path, {k.lower(): v for k, v in self.headers.items()},
                                    json.loads(raw or b"{}")))
        if not self.owner.replies:
            self.status(500, {"error": {"message": "the test provider has no reply left"}})
            return
        self.owner.replies.pop(0)(self)

    # -- building replies ---------------------------------------------------------------
    def status(self, code: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def sse(self, frames: Iterator[str], cut_after: int | None = None,
            delay: float = 0.0) -> None:
        """A streamed answer; `cut_after` frames then the connection drops mid-stream."""
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("connection", "close")
        self.end_headers()
        for index, frame in enumerate(frames):
            if cut_after is not None and index == cut_after:
                self.wfile.flush()
                self.connection.shutdown(2)  # abrupt: no end of stream
                return
            try:
                self.wfile.write(frame.encode())
                self.wfile.flush()
            except OSError:  # the client went away (a cancel)
                self.owner.hung_up.set()
                return
            if delay:
                time.sleep(delay)
        self.close_connection = True


    def hold(self, headers: bool = False, limit: float = 120.0) -> None:
        """A provider that took the request and answers nothing (or, with `headers`, only the
        start of a stream) until the client hangs up — noted in `owner.hung_up` — or `limit`
        seconds pass."""
        if headers:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.end_headers()
            self.wfile.flush()
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            readable, _, _ = select.select([self.connection], [], [], 0.05)
            if not readable:
                continue
            try:
                if not self.connection.recv(4096):
                    break  # end of stream: the client closed its side
            except OSError:  # reset
                break
        else:
            return
        self.owner.hung_up.set()
        self.close_connection = True


def holding(headers: bool = False) -> Reply:
    return lambda h: h.hold(headers)


# -- OpenAI chat completions -------------------------------------------------------------
def openai_frames(text: str = "", calls: list[tuple[str, str, list[str]]] | None = None,
                  thinking: str = "", usage: tuple[int, int] = (12, 5),
                  pieces: int = 3) -> Iterator[str]:
    def frame(delta: dict[str, Any], finish: str | None = None) -> str:
        chunk = {"id": "cmpl", "object": "chat.completion.chunk",
                 "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        return f"data: {json.dumps(chunk)}\n\n"

    yield frame({"role": "assistant"})
    if thinking:
        yield frame({"reasoning_content": thinking})
    for part in split(text, pieces):
        yield frame({"content": part})
    for index, (call_id, name, arguments) in enumerate(calls or []):
        yield frame({"tool_calls": [{"index": index, "id": call_id, "type": "function",
                                     "function": {"name": name, "arguments": ""}}]})
        for piece in arguments:
            yield frame({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    yield frame({}, "tool_calls" if calls else "stop")
    yield ("data: " + json.dumps({"id": "cmpl", "choices": [], "usage": {
        "prompt_tokens": usage[0], "completion_tokens": usage[1]}}) + "\n\n")
    yield "data: [DONE]\n\n"


def split(text: str, pieces: int) -> list[str]:
    if not text:
        return []
    size = max(1, -(-len(text) // pieces))
    return [text[i:i + size] for i in range(0, len(text), size)]


def openai_answer(text: str, **kwargs: Any) -> Reply:
    return lambda h: h.sse(openai_frames(text, **kwargs))


def openai_call(call_id: str, name: str, arguments: list[str], text: str = "") -> Reply:
    return lambda h: h.sse(openai_frames(text, calls=[(call_id, name, arguments)]))


# -- Anthropic Messages --------------------------------------------------------------------
def anthropic_frames(text: str = "", thinking: str = "",
                     tool: tuple[str, str, list[str]] | None = None,
                     usage: tuple[int, int] = (20, 7)) -> Iterator[str]:
    def frame(name: str, data: dict[str, Any]) -> str:
        return f"event: {name}\ndata: {json.dumps({'type': name, **data})}\n\n"

    yield frame("message_start", {"message": {"id": "msg", "role": "assistant", "content": [],
                                              "usage": {"input_tokens": usage[0],
                                                        "output_tokens": 1}}})
    index = 0
    if thinking:
        yield frame("content_block_start", {"index": index, "content_block": {
            "type": "thinking", "thinking": ""}})
        for part in split(thinking, 2):
            yield frame("content_block_delta", {"index": index, "delta": {
                "type": "thinking_delta", "thinking": part}})
        yield frame("content_block_delta", {"index": index, "delta": {
            "type": "signature_delta", "signature": "sig-1"}})
        yield frame("content_block_stop", {"index": index})
        index += 1
    yield ": keep-alive comment\n\n"
    yield frame("ping", {})
    if text:
        yield frame("content_block_start", {"index": index, "content_block": {
            "type": "text", "text": ""}})
        for part in split(text, 3):
            yield frame("content_block_delta", {"index": index, "delta": {
                "type": "text_delta", "text": part}})
        yield frame("content_block_stop", {"index": index})
        index += 1
    if tool:
        call_id, name, pieces = tool
        yield frame("content_block_start", {"index": index, "content_block": {
            "type": "tool_use", "id": call_id, "name": name, "input": {}}})
        for piece in pieces:
            yield frame("content_block_delta", {"index": index, "delta": {
                "type": "input_json_delta", "partial_json": piece}})
        yield frame("content_block_stop", {"index": index})
    yield frame("message_delta", {"delta": {"stop_reason": "tool_use" if tool else "end_turn"},
                                  "usage": {"output_tokens": usage[1]}})
    yield frame("message_stop", {})


def anthropic_answer(text: str, **kwargs: Any) -> Reply:
    return lambda h: h.sse(anthropic_frames(text, **kwargs))

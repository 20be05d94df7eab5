"""The fake Murmur door every test speaks to: stdlib HTTP on 127.0.0.1:0, in the shapes of each
door generation (tui/core/a2a/card.py: A, Murmur v0.2.0 — or v0.4.0's card with `previous` —;
B, the A2A 0.3 interface; C, the newest), replaying scripted `stream/watch` connections,
answering `GetTask`/`tasks/get` from its task table, serving the extended card to its token
(the public card of a door with a token names no session, as Murmur's does), and recording
every request it got (header names in lower case).

A connection script is a list of steps: `frame(event, data, id)`, `heartbeats(n)` (n
heartbeat periods of nothing but `:heartbeat`), `silence(seconds)` (no byte at all),
`until(gate)` (no byte at all until the test sets the `threading.Event`), `closed()`
(capsule-closed, the end), `raw(bytes)`; a script that runs out ends the stream
without capsule-closed (a lost connection). Connection i plays `scripts[i]`; once they run
out, the last one plays again.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tui.core.a2a.card import CAPSULE_EXT, DOOR_EXT, METHODS, STREAM_EXT, Generation

Step = tuple[str, Any]
SESSION = "ses_0199c4e2f1b7712a9d3e4f50617283ff"
CONTEXT = "ctx_0199c4e2f1b7712a9d3e4f50617283a1"
SERVED = {
    "A": ["message/send", "message/stream", "stream/watch", "tasks/get"],
    "B": ["message/send", "message/stream", "stream/watch", "tasks/get", "tasks/cancel",
          "session/stop"],
    "C": ["SendMessage", "SendStreamingMessage", "stream/watch", "GetTask", "CancelTask",
          "session/stop"],
}
URI = "https://docs.murmur.nexus/reference/"
STATES_C = {"submitted": "TASK_STATE_SUBMITTED", "working": "TASK_STATE_WORKING",
            "input-required": "TASK_STATE_INPUT_REQUIRED", "completed": "TASK_STATE_COMPLETED",
            "failed": "TASK_STATE_FAILED", "canceled": "TASK_STATE_CANCELED",
            "rejected": "TASK_STATE_REJECTED"}


def frame(event: str, data: Any, frame_id: int | str | None = None) -> Step:
    text = data if isinstance(data, str) else json.dumps(data, separators=(",", ":"))
    head = f"id: {frame_id}\n" if frame_id is not None else ""
    return ("raw", f"{head}event: {event}\ndata: {text}\n\n".encode())


def heartbeats(count: int) -> Step:
    return ("heartbeats", count)


def silence(seconds: float) -> Step:
    return ("silence", seconds)


def until(gate: threading.Event) -> Step:
    return ("until", gate)


def closed() -> Step:
    return ("raw+end", b"event: capsule-closed\ndata: {}\n\n")


def raw(data: bytes) -> Step:
    return ("raw", data)


def ack(mode: str = "threaded") -> Step:
    return ("raw", f'event: connection-ack\ndata: {{"role":"observer",'
                   f'"conversation_mode":"{mode}"}}\n\n'.encode())


def status(task: str, state: str, message: str, frame_id: int, *, context: str | None = CONTEXT,
           final: bool = False, response: str | None = None) -> Step:
    data: dict[str, Any] = {"id": task}
    if context is not None:
        data["context_id"] = context
    data["status"] = {"state": state, "message": message}
    if response is not None:
        data["status"]["response"] = response
    data["final"] = final
    return frame("status", data, frame_id)


@dataclass
class Recorded:
    method: str  # the HTTP method
    path: str
    headers: dict[str, str]
    body: Any  # the JSON body (None for a GET)


@dataclass
class Task:
    id: str
    context: str
    state: str
    prompt: str | None = None
    answers: list[str] = field(default_factory=list)
    text: str | None = None  # what it was asked: its history's first user message


class FakeDoor:
    def __init__(self, generation: Generation = "C", scripts: Sequence[Sequence[Step]] = (),
                 *, token: str | None = None, scopes: Sequence[str] | None = None,
                 heartbeat: float = 0.05, session_id: str | None = SESSION,
                 name: str = "fake-capsule", version: str = "0.1.0",
                 previous: bool = False) -> None:
        self.generation: Generation = generation
        self.previous = previous  # door A serves v0.4.0's card: `session_id` and `serves`
        self.scripts = [list(script) for script in scripts]
        self.token = token
        self.scopes = None if scopes is None else set(scopes)
        self.heartbeat = heartbeat
        self.session_id = session_id
        self.name, self.version = name, version
        self.requests: list[Recorded] = []
        self.tasks: dict[str, Task] = {}
        self.watches = 0
        self.stopped = False
        self.stop_answer: dict[str, Any] | None = None  # None: Murmur's, from the tasks held
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._server = _Server(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        daemon=True)
        self.port = self._server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}"

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> FakeDoor:
        self._thread.start()
        return self

    def vanish(self) -> None:
        """The process is gone: the listener closes and every open stream is cut."""
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            for sock in self._sockets:
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

    def rpc(self, method: str) -> list[Recorded]:
        return [r for r in self.requests
                if isinstance(r.body, dict) and r.body.get("method") == method]

    def wait_input(self, task: str, prompt: str, context: str = CONTEXT,
                   text: str | None = None) -> None:
        self.tasks[task] = Task(task, context, "input-required", prompt, text=text)

    def working(self, task: str, text: str | None = None, context: str = CONTEXT) -> None:
        self.tasks[task] = Task(task, context, "working", text=text)

    @property
    def address(self) -> str:
        """`host:port`, as a running record names a door."""
        return f"127.0.0.1:{self.port}"

    @property
    def methods(self) -> list[str]:
        extended = METHODS["extended"][self.generation]
        served = SERVED[self.generation]
        return [*served, extended] if self.token is not None and extended else served

    # -- shapes --------------------------------------------------------------------------
    def card(self, extended: bool = False) -> dict[str, Any]:
        if self.generation == "A":
            card: dict[str, Any] = {
                "name": self.name, "version": self.version, "url": f"localhost:{self.port}",
                "capabilities": {"tools": ["bash"], "shell": True, "network": False,
                                 "streaming": True}}
            if self.previous:
                if self.session_id is not None:
                    card["session_id"] = self.session_id
                card["capabilities"]["cancellation"] = True
                card["serves"] = {"methods": SERVED["A"], "planes": []}
            return card
        version = "1.0" if self.generation == "C" else "0.3"
        capsule: dict[str, Any] = {"tools": ["bash"], "shell": True, "network": False,
                                   "planes": []}
        if self.session_id is not None:
            capsule["sessionId"] = self.session_id
        extensions = [{"uri": URI + "agent-card/" + DOOR_EXT, "required": False,
                       "params": {"methods": self.methods, "peerTasks": False}}]
        if self.token is None or extended:  # an authenticated door's card hides the session
            extensions.append({"uri": URI + "agent-card/" + CAPSULE_EXT, "required": False,
                               "params": capsule})
        extensions.append({"uri": URI + "streaming-protocol/" + STREAM_EXT, "required": False,
                           "params": {"frames": ["status", "artifact", "text"]}})
        return {
            "name": self.name, "description": f"Murmur capsule {self.name} {self.version}",
            "version": self.version,
            "supportedInterfaces": [{"url": self.url, "protocolBinding": "JSONRPC",
                                     "protocolVersion": version}],
            "capabilities": {"streaming": True, "pushNotifications": False,
                             "extendedAgentCard": self.token is not None,
                             "extensions": extensions},
            "securitySchemes": {}, "securityRequirements": [],
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": []}

    def task_body(self, task: Task) -> dict[str, Any]:
        c = self.generation == "C"
        body: dict[str, Any] = {"id": task.id, "contextId": task.context,
                                "status": {"state": STATES_C[task.state] if c else task.state}}
        if task.state == "input-required" and task.prompt is not None:
            artifact: dict[str, Any] = {"name": "prompt", "parts": [{"text": task.prompt}]}
            if c:
                artifact = {"artifactId": "prompt", "name": "prompt",
                            "parts": [{"text": task.prompt, "mediaType": "text/plain"}]}
            body["artifacts"] = [artifact]
        if task.text is not None:
            body["history"] = [{"role": "ROLE_USER" if c else "user",
                                "parts": [{"text": task.text}]}]
        return body

    # -- the server ----------------------------------------------------------------------
    def _handler(self) -> type[BaseHTTPRequestHandler]:
        door = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def log_message(self, fmt: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                door._record(self, None)
                if self.path == "/.well-known/agent-card.json":
                    door._json(self, 200, door.card())
                else:
                    door._json(self, 404, {"error": "not found"})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                data = self.rfile.read(length)
                try:
                    body = json.loads(data)
                except ValueError:
                    body = None
                door._record(self, body)
                door._post(self, body)

        return Handler

    def _record(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        with self._lock:
            self.requests.append(Recorded(handler.command, handler.path,
                                          {k.lower(): v for k, v in handler.headers.items()},
                                          body))

    def _json(self, handler: BaseHTTPRequestHandler, status: int, body: Any,
              extra: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        handler.send_response(status)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(len(data)))
        for key, value in (extra or {}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(data)

    def _ok(self, handler: BaseHTTPRequestHandler, rid: Any, result: Any) -> None:
        self._json(handler, 200, {"jsonrpc": "2.0", "id": rid, "result": result})

    def _err(self, handler: BaseHTTPRequestHandler, rid: Any, code: int, message: str) -> None:
        self._json(handler, 200, {"jsonrpc": "2.0", "id": rid,
                                  "error": {"code": code, "message": message}})

    def _post(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        if self.token is not None:
            auth = handler.headers.get("authorization")
            if auth is None:
                self._json(handler, 401, {"error": "unauthenticated",
                                          "message": "this door requires a bearer token"},
                           {"www-authenticate": f'Bearer realm="{self.name}"'})
                return
            if auth != f"Bearer {self.token}":
                self._json(handler, 401, {"error": "invalid_token",
                                          "message": f"token {auth[7:]} was not minted here"})
                return
        if not isinstance(body, dict):
            self._err(handler, None, -32700, "Invalid JSON payload")
            return
        rid, method = body.get("id"), body.get("method")
        params = body.get("params") or {}
        if self.scopes is not None and method not in self.scopes:
            self._json(handler, 403, {"error": "insufficient_scope",
                                      "message": f"credential 'watcher' does not reach {method}"})
            return
        if self.generation == "C" and handler.headers.get("a2a-version") != "1.0":
            self._err(handler, rid, -32009, "A2A version '' is not supported; this agent "
                      "speaks 1.0")
            return
        if method not in self.methods:
            self._err(handler, rid, -32601, "Method not found")
            return
        if method == METHODS["extended"][self.generation]:
            self._ok(handler, rid, self.card(extended=True))
        elif method == "stream/watch":
            self._watch(handler)
        elif method in ("message/send", "SendMessage"):
            self._send(handler, rid, params)
        elif method in ("tasks/get", "GetTask"):
            task_id = params.get("id")
            task = self.tasks.get(task_id) if task_id else next(
                (t for t in self.tasks.values() if t.state in ("input-required", "working")),
                None)
            if task is None:
                self._err(handler, rid, -32001, "Task not found")
            else:
                self._ok(handler, rid, self.task_body(task))
        elif method in ("tasks/cancel", "CancelTask"):
            task = self.tasks.get(params.get("id"))
            if task is None:
                self._err(handler, rid, -32001, "Task not found")
                return
            task.state = "canceled"
            self._ok(handler, rid, self.task_body(task))
        elif method == "session/stop":
            self.stopped = True
            live = [tid for tid, task in self.tasks.items()
                    if task.state not in ("completed", "failed", "canceled", "rejected")]
            for tid in live:
                self.tasks[tid].state = "canceled"
            self._ok(handler, rid, self.stop_answer or {
                "session_id": "ses_fake", "canceled": live, "residue": []})

    def _send(self, handler: BaseHTTPRequestHandler, rid: Any, params: dict[str, Any]) -> None:
        message = params.get("message") or {}
        text = "\n".join(p.get("text", "") for p in message.get("parts", []))
        c = self.generation == "C"
        if c and message.get("role") != "ROLE_USER":
            self._err(handler, rid, -32602, "message.role must be ROLE_USER")
            return
        waiting = next((t for t in self.tasks.values() if t.state == "input-required"), None)
        named = message.get("taskId")
        if c and named:
            task = self.tasks.get(named)
            if task is None:
                self._err(handler, rid, -32001, "Task not found")
                return
            if task.state != "input-required":
                self._err(handler, rid, -32004, "Task is not waiting for input")
                return
            if message.get("contextId") != task.context:
                self._err(handler, rid, -32602, "contextId does not match the task's")
                return
            waiting = task
        elif c:
            waiting = None  # on door C a message naming no task never reaches a waiting one
        if waiting is not None:  # A/B: whatever arrives is the answer (Murmur's hazard)
            waiting.answers.append(text)
            waiting.state = "working"
            result: Any = self.task_body(waiting)
        else:
            task = Task(f"tsk_{len(self.tasks) + 1:032x}", message.get("contextId") or CONTEXT,
                        "submitted")
            task.answers.append(text)
            self.tasks[task.id] = task
            result = self.task_body(task)
        self._ok(handler, rid, {"task": result} if c else result)

    def _watch(self, handler: BaseHTTPRequestHandler) -> None:
        with self._lock:
            index = self.watches
            self.watches += 1
            self._sockets.append(handler.connection)
        script = self.scripts[min(index, len(self.scripts) - 1)] if self.scripts else []
        handler.send_response(200)
        handler.send_header("content-type", "text/event-stream")
        handler.send_header("cache-control", "no-cache")
        handler.end_headers()
        out = handler.wfile
        try:
            for kind, value in script:
                if kind in ("raw", "raw+end"):
                    out.write(value)
                    out.flush()
                    if kind == "raw+end":
                        break
                elif kind == "heartbeats":
                    for _ in range(value):
                        time.sleep(self.heartbeat)
                        out.write(b":heartbeat\n\n")
                        out.flush()
                elif kind == "silence":
                    time.sleep(value)
                elif kind == "until":
                    value.wait()
        except OSError:
            pass


class _Server(ThreadingHTTPServer):
    request_queue_size = 128  # fifty probes at once
    daemon_threads = True


@contextmanager
def serving(door: FakeDoor) -> Iterator[FakeDoor]:
    door.start()
    try:
        yield door
    finally:
        door.vanish()


def silent_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])

"""A tiny stdlib door on loopback for the fleet tests: serves an agent card in the newest,
the 0.3 or the previous (v0.4.0 and earlier) shape, the extended card to a bearer token, and
`GetTask` / `tasks/get` answers from a table the test fills."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Shape = Literal["newest", "0.3", "previous"]
CAPSULE_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-capsule-v1"
DOOR_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1"


@dataclass
class Door:
    session_id: str
    shape: Shape = "newest"
    token: str | None = None  # set: the door authenticates; the capsule extension moves
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)
    active: dict[str, Any] | None = None  # what `tasks/get` without an id answers (0.3)
    requests: list[tuple[str, dict[str, str], Any]] = field(default_factory=list)
    port: int = 0

    @property
    def url(self) -> str:
        return f"127.0.0.1:{self.port}"

    def card(self, extended: bool = False) -> dict[str, Any]:
        if self.shape == "previous":
            return {"name": "demo", "version": "0.1.0", "url": f"localhost:{self.port}",
                    "session_id": self.session_id,
                    "capabilities": {"tools": [], "shell": False, "network": False,
                                     "streaming": True, "cancellation": True},
                    "serves": {"methods": ["message/send", "tasks/get"], "planes": []}}
        capsule = {"uri": CAPSULE_URI, "required": False,
                   "params": {"sessionId": self.session_id, "tools": [], "shell": False,
                              "network": False, "planes": []}}
        door = {"uri": DOOR_URI, "required": False, "params": {"methods": [], "peerTasks": False}}
        extensions = [door, capsule] if self.token is None or extended else [door]
        return {"name": "demo", "description": "Murmur capsule demo 0.1.0", "version": "0.1.0",
                "supportedInterfaces": [{"url": f"http://localhost:{self.port}",
                                         "protocolBinding": "JSONRPC",
                                         "protocolVersion": "1.0" if self.shape == "newest"
                                         else "0.3"}],
                "capabilities": {"streaming": True, "pushNotifications": False,
                                 "extendedAgentCard": self.token is not None,
                                 "extensions": extensions},
                "skills": []}


def _handler(door: Door) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            return

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            door.requests.append(("GET " + self.path, dict(self.headers), None))
            if self.path == "/.well-known/agent-card.json":
                self._send(200, door.card())
            else:
                self._send(404, {})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length", "0"))
            body = json.loads(self.rfile.read(length) or b"null")
            door.requests.append(("POST " + self.path, dict(self.headers), body))
            if door.token is not None:
                given = self.headers.get("Authorization")
                if given is None:
                    return self._send(401, {"error": "unauthenticated", "message": "no token"})
                if given != f"Bearer {door.token}":
                    return self._send(401, {"error": "invalid_token", "message": "bad token"})
            method = body.get("method")
            newest = door.shape == "newest"
            if newest and self.headers.get("A2A-Version") != "1.0":
                return self._send(200, {"jsonrpc": "2.0", "id": body.get("id"),
                                        "error": {"code": -32009, "message": "version"}})
            if method == ("GetExtendedAgentCard" if newest
                          else "agent/getAuthenticatedExtendedCard"):
                return self._send(200, {"jsonrpc": "2.0", "id": body.get("id"),
                                        "result": door.card(extended=True)})
            if method == ("GetTask" if newest else "tasks/get"):
                task_id = (body.get("params") or {}).get("id")
                task = door.tasks.get(task_id) if task_id else door.active
                if task is not None:
                    return self._send(200, {"jsonrpc": "2.0", "id": body.get("id"),
                                            "result": task})
                return self._send(200, {"jsonrpc": "2.0", "id": body.get("id"),
                                        "error": {"code": -32001, "message": "no task"}})
            return self._send(200, {"jsonrpc": "2.0", "id": body.get("id"),
                                    "error": {"code": -32601, "message": "Method not found"}})

    return Handler


@contextmanager
def serving(door: Door) -> Iterator[Door]:
    class Server(ThreadingHTTPServer):
        request_queue_size = 128  # fifty probes at once

    server = Server(("127.0.0.1", 0), _handler(door))
    server.daemon_threads = True
    door.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield door
    finally:
        server.shutdown()
        server.server_close()


def silent_port() -> int:
    """A loopback port nothing listens on (bound, then closed)."""
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])

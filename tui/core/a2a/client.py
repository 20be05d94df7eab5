"""A client for a running session's A2A door (Murmur's JSON-RPC 2.0 over HTTP).

Three generations of the door are in use (docs/fleet.md): A, Murmur v0.2.0 (`message/send`,
`tasks/get`, a card with `url` and no `supportedInterfaces`); B, an A2A v1.0 card declaring
`protocolVersion` "0.3" with the 0.3 method names; C, the newest (`SendMessage`, `GetTask`,
`CancelTask`, the `A2A-Version: 1.0` header on every request, a reply naming its `taskId`).
`DoorClient.card()` tells them apart; every call is then made in the shape its generation
expects. Every refusal — Murmur's 401/403 bodies, a JSON-RPC error, a connection refused, a
timeout — is one `DoorError` naming the door and what it refused. httpx loads on first use.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tui.core.errors import DoorError
from tui.core.text.secrets import remember

if TYPE_CHECKING:
    import httpx

Generation = Literal["A", "B", "C"]
CARD_PATH = "/.well-known/agent-card.json"
MAX_BODY_BYTES = 16 * 1024 * 1024  # no door answer comes near this
DEFAULT_TIMEOUT = 10.0

DOOR_EXT = "#murmur-door-v1"
CAPSULE_EXT = "#murmur-capsule-v1"
STREAM_EXT = "#murmur-stream-v1"

# The method each call uses, per generation (None: that door has no such method).
_METHODS: dict[str, dict[Generation, str | None]] = {
    "send": {"A": "message/send", "B": "message/send", "C": "SendMessage"},
    "get": {"A": "tasks/get", "B": "tasks/get", "C": "GetTask"},
    "cancel": {"A": None, "B": "tasks/cancel", "C": "CancelTask"},
    "stop": {"A": None, "B": "session/stop", "C": "session/stop"},
    "extended": {"A": None, "B": "agent/getAuthenticatedExtendedCard",
                 "C": "GetExtendedAgentCard"},
}
_DEFAULT_METHODS: dict[Generation, tuple[str, ...]] = {
    "A": ("message/send", "message/stream", "stream/watch", "tasks/get"),
    "B": ("message/send", "message/stream", "stream/watch", "tasks/get", "tasks/cancel",
          "session/stop"),
    "C": ("SendMessage", "SendStreamingMessage", "stream/watch", "GetTask", "CancelTask",
          "session/stop"),
}


@dataclass(frozen=True)
class Card:
    """What a door's agent card says, whatever its generation."""

    generation: Generation
    name: str
    version: str
    url: str
    session_id: str | None  # None: the card does not say (door A, or an authenticated door)
    methods: tuple[str, ...]
    streaming: bool
    authenticated: bool = False
    conversation_mode: str | None = None

    @property
    def protocol(self) -> str:
        return {"A": "Murmur v0.2.0", "B": "A2A 0.3", "C": "A2A 1.0"}[self.generation]


@dataclass(frozen=True)
class RemoteTask:
    """A task as a door reports it, in Murmur's words for its state (`input-required`, …)."""

    id: str
    context_id: str
    state: str
    prompt: str | None = None  # the question it waits on (the `prompt` artifact)
    response: str | None = None  # a completed task's answer (the `response` artifact)
    message: str | None = None  # a terminal task's status message
    text: str | None = None  # what it was asked: its history's first user message


def _text(value: Any, limit: int = 4096) -> str:
    """A value from a door, as a short readable string."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def _extension(card: Mapping[str, Any], suffix: str) -> Mapping[str, Any] | None:
    capabilities = card.get("capabilities")
    extensions = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    if not isinstance(extensions, list):
        return None
    for item in extensions:
        if isinstance(item, Mapping) and str(item.get("uri", "")).endswith(suffix):
            params = item.get("params")
            return params if isinstance(params, Mapping) else {}
    return None


def _strings(value: Any) -> tuple[str, ...] | None:
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return tuple(value)
    return None


def parse_card(card: Any, url: str) -> Card:
    """The generation and facts of an agent card (door A: `url` and no
    `supportedInterfaces`; B/C: the JSONRPC interface's `protocolVersion`)."""
    if not isinstance(card, Mapping):
        raise DoorError(f"the door at {url} served an agent card that is not a JSON object")
    name, version = card.get("name"), card.get("version")
    if not isinstance(name, str) or not isinstance(version, str):
        raise DoorError(f"the door at {url} served an agent card without a name and version")
    capabilities = card.get("capabilities")
    capabilities = capabilities if isinstance(capabilities, Mapping) else {}
    streaming = capabilities.get("streaming") is True
    interfaces = card.get("supportedInterfaces")
    if interfaces is None:
        if not isinstance(card.get("url"), str):
            raise DoorError(f"the door at {url} served an agent card with neither "
                            "supportedInterfaces nor url: not a Murmur door")
        serves = card.get("serves")
        methods = _strings(serves.get("methods")) if isinstance(serves, Mapping) else None
        session = card.get("session_id")
        return Card("A", name, version, url, session if isinstance(session, str) else None,
                    methods or _DEFAULT_METHODS["A"], streaming)
    if not isinstance(interfaces, list):
        raise DoorError(f"the door at {url} served an agent card whose supportedInterfaces "
                        "is not a list")
    versions = [str(item.get("protocolVersion", "")) for item in interfaces
                if isinstance(item, Mapping) and item.get("protocolBinding") == "JSONRPC"]
    generation: Generation
    if any(v == "1.0" or v.startswith("1.0.") for v in versions):
        generation = "C"
    elif "0.3" in versions or any(v.startswith("0.3.") for v in versions):
        generation = "B"
    else:
        said = ", ".join(repr(v) for v in versions) or "no JSONRPC interface"
        raise DoorError(f"the door at {url} speaks {_text(said, 200)}; murmur-tui speaks A2A "
                        "1.0, 0.3 and Murmur v0.2.0's door")
    door = _extension(card, DOOR_EXT) or {}
    capsule = _extension(card, CAPSULE_EXT) or {}
    session = capsule.get("sessionId")
    return Card(generation, name, version, url,
                session if isinstance(session, str) and session else None,
                _strings(door.get("methods")) or _DEFAULT_METHODS[generation], streaming,
                authenticated=capabilities.get("extendedAgentCard") is True)


def task_state(value: Any) -> str:
    """Murmur's word for a task state: `TASK_STATE_INPUT_REQUIRED` → `input-required`."""
    text = str(value or "")
    if text.startswith("TASK_STATE_"):
        text = text[len("TASK_STATE_"):].lower().replace("_", "-")
    return text


def _artifact_text(task: Mapping[str, Any], name: str) -> str | None:
    artifacts = task.get("artifacts")
    if not isinstance(artifacts, list):
        return None
    for item in artifacts:
        if not isinstance(item, Mapping):
            continue
        if item.get("artifactId") != name and item.get("name") != name:
            continue
        parts = item.get("parts")
        if isinstance(parts, list):
            return "\n".join(part["text"] for part in parts
                             if isinstance(part, Mapping) and isinstance(part.get("text"), str))
    return None


def parse_task(value: Any, url: str) -> RemoteTask:
    """A door's task (a bare task on A/B, `{"task": …}` on C) as a RemoteTask."""
    task = value.get("task", value) if isinstance(value, Mapping) else value
    if not isinstance(task, Mapping) or not isinstance(task.get("id"), str):
        raise DoorError(f"the door at {url} answered with something that is not a task")
    status = task.get("status")
    status = status if isinstance(status, Mapping) else {}
    message = status.get("message")
    if isinstance(message, Mapping):  # C: a ROLE_AGENT message with one text part
        parts = message.get("parts")
        message = "\n".join(p["text"] for p in parts if isinstance(p, Mapping)
                            and isinstance(p.get("text"), str)) if isinstance(parts, list) else None
    context = task.get("contextId")
    return RemoteTask(task["id"], context if isinstance(context, str) else "",
                      task_state(status.get("state")), _artifact_text(task, "prompt"),
                      _artifact_text(task, "response"),
                      message if isinstance(message, str) else None, first_user_text(task))


def first_user_text(task: Mapping[str, Any]) -> str | None:
    """The text of a task's first user message (`history`, either generation's role)."""
    history = task.get("history")
    for message in history if isinstance(history, list) else []:
        if isinstance(message, Mapping) and message.get("role") in ("user", "ROLE_USER"):
            parts = message.get("parts")
            texts = [part["text"] for part in parts if isinstance(part, Mapping)
                     and isinstance(part.get("text"), str)] if isinstance(parts, list) else []
            return "\n".join(texts) if texts else None
    return None


_TLS: Any = None
_TLS_LOCK = threading.Lock()


def shared_tls() -> Any:
    """One TLS context for every door client: httpx builds one per client otherwise, ~0.9 MB
    each, and a fleet holds two clients a session (tests/benchmarks/fleet.py)."""
    global _TLS
    with _TLS_LOCK:
        if _TLS is None:
            import httpx

            _TLS = httpx.create_ssl_context()
        return _TLS


class DoorClient:
    """Calls one door. Thread-safe: the fleet shares one per session between its threads."""

    def __init__(self, url: str, token: str | None = None, timeout: float = DEFAULT_TIMEOUT
                 ) -> None:
        url = url.strip()
        if "://" not in url:  # door A's card says "localhost:P"
            url = f"http://{url}"
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        remember(token)  # never shown, in any encoding
        self._ids = itertools.count(1)
        self._messages = itertools.count(1)
        self._lock = threading.Lock()
        self._client: httpx.Client | None = None
        self._card: Card | None = None

    # -- plumbing -------------------------------------------------------------------------
    def _http(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                import httpx

                self._client = httpx.Client(timeout=self.timeout, follow_redirects=False,
                                            verify=shared_tls())
            return self._client

    def close(self) -> None:
        with self._lock:
            client, self._client = self._client, None
        if client is not None:
            client.close()

    def headers(self, generation: Generation | None) -> dict[str, str]:
        """The headers every JSON-RPC request to this door carries."""
        headers = {"content-type": "application/json", "accept": "application/json"}
        if generation == "C":
            headers["A2A-Version"] = "1.0"
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        return headers

    def envelope(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": next(self._ids), "method": method}
        if params is not None:
            body["params"] = dict(params)
        return body

    def _read(self, response: httpx.Response, what: str) -> bytes:
        data = bytearray()
        for chunk in response.iter_bytes():
            data += chunk
            if len(data) > MAX_BODY_BYTES:
                raise DoorError(f"the door at {self.url} answered {what} with more than "
                                f"{MAX_BODY_BYTES // (1024 * 1024)} MiB")
        return bytes(data)

    def _exchange(self, method: str, what: str, *, path: str = "/",
                  body: Mapping[str, Any] | None = None,
                  headers: Mapping[str, str] | None = None) -> Any:
        import httpx

        try:
            with self._http().stream(method, self.url + path, headers=headers,
                                     content=None if body is None else json.dumps(body)
                                     ) as response:
                data = self._read(response, what)
                status = response.status_code
        except httpx.TimeoutException as exc:
            raise DoorError(f"the door at {self.url} did not answer {what} within "
                            f"{self.timeout:g} s") from exc
        except httpx.ConnectError as exc:
            raise DoorError(f"cannot reach the door at {self.url}: {_reason(exc)}") from exc
        except httpx.HTTPError as exc:
            raise DoorError(f"the connection to the door at {self.url} broke during "
                            f"{what}: {_reason(exc)}") from exc
        try:
            parsed = json.loads(data) if data else None
        except ValueError:
            parsed = None
        if status in (401, 403):
            raise refusal(self.url, what, status, parsed)
        if status != 200:
            raise DoorError(f"the door at {self.url} answered {what} with HTTP {status}",
                            status=status)
        if parsed is None:
            raise DoorError(f"the door at {self.url} answered {what} with a body that is not "
                            "JSON")
        return parsed

    def call(self, method: str, params: Mapping[str, Any] | None = None,
             generation: Generation | None = None) -> Any:
        """One JSON-RPC call; its `result`, or a DoorError for its `error`."""
        generation = generation or self.card().generation
        answer = self._exchange("POST", method, body=self.envelope(method, params),
                                headers=self.headers(generation))
        if not isinstance(answer, Mapping):
            raise DoorError(f"the door at {self.url} answered {method} with a body that is not "
                            "a JSON-RPC response")
        error = answer.get("error")
        if error is not None:
            raise rpc_error(self.url, method, error)
        if "result" not in answer:
            raise DoorError(f"the door at {self.url} answered {method} with neither a result "
                            "nor an error")
        return answer["result"]

    def method(self, call: str) -> str:
        """The method name for `call` on this door, or a DoorError when it has none."""
        card = self.card()
        name = _METHODS[call][card.generation]
        if name is None or name not in card.methods:
            wanted = {"send": "tasks", "get": "reading tasks", "cancel": "canceling a task",
                      "stop": "stopping the session",
                      "extended": "an extended card"}[call]
            raise DoorError(f"the door at {self.url} ({card.protocol}) does not serve "
                            f"{wanted}")
        return name

    # -- the calls ------------------------------------------------------------------------
    def card(self, refresh: bool = False) -> Card:
        """The door's card (read once, then kept; `refresh` reads it again)."""
        if self._card is not None and not refresh:
            return self._card
        raw = self._exchange("GET", "the agent card", path=CARD_PATH,
                             headers={"accept": "application/json"})
        card = parse_card(raw, self.url)
        if card.session_id is None and card.authenticated and self.token:
            extended = _METHODS["extended"][card.generation]
            if extended is not None and extended in card.methods:
                self._card = card
                full = parse_card(self.call(extended, None, card.generation), self.url)
                card = Card(card.generation, card.name, card.version, card.url,
                            full.session_id, card.methods, card.streaming, True)
        self._card = card
        return card

    def _message(self, text: str, generation: Generation, task_id: str | None = None,
                 context_id: str | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {
            "messageId": f"mtui-{next(self._messages)}",
            "role": "ROLE_USER" if generation == "C" else "user",
            "parts": [{"text": text}],
        }
        if task_id is not None:
            message["taskId"] = task_id
        if context_id:
            message["contextId"] = context_id
        return {"message": message}

    def active_task(self) -> RemoteTask | None:
        """Doors A/B: the task the door holds now (`tasks/get` without an id), if any."""
        card = self.card()
        if card.generation == "C":
            return None
        try:
            return parse_task(self.call(self.method("get"), {}, card.generation), self.url)
        except DoorError as exc:
            if exc.rpc_code == -32001:  # no task
                return None
            raise

    def send_task(self, text: str, context_id: str | None = None,
                  waiting: str | None = None) -> RemoteTask:
        """A new task. On doors A/B a message sent while a task waits for input becomes that
        task's answer: refused then (`waiting`: a task the caller knows is waiting)."""
        card = self.card()
        method = self.method("send")
        if card.generation != "C":
            if waiting is None:
                active = self.active_task()
                waiting = active.id if active and active.state == "input-required" else None
            if waiting is not None:
                raise DoorError(
                    f"not sent: task {waiting} on the door at {self.url} waits for an answer, "
                    f"and this door ({card.protocol}) would take a new task as that answer; "
                    "answer the question first")
        return parse_task(self.call(method, self._message(text, card.generation, None,
                                                          context_id), card.generation),
                          self.url)

    def answer(self, task_id: str, context_id: str | None, text: str) -> RemoteTask:
        """Answer the question task `task_id` waits on, in the shape its door expects: A/B a
        plain message (after checking that this task is the one waiting), C a message naming
        the task and its context."""
        card = self.card()
        method = self.method("send")
        if card.generation != "C":
            task = self.get_task(task_id)
            if task.state != "input-required":
                raise DoorError(f"not sent: task {task_id} on the door at {self.url} is "
                                f"{task.state or 'unknown'}, not waiting for an answer")
            return parse_task(self.call(method, self._message(text, card.generation),
                                        card.generation), self.url)
        if not context_id:
            context_id = self.get_task(task_id).context_id
        return parse_task(self.call(method, self._message(text, "C", task_id, context_id),
                                    "C"), self.url)

    def get_task(self, task_id: str) -> RemoteTask:
        return parse_task(self.call(self.method("get"), {"id": task_id}), self.url)

    def cancel(self, task_id: str) -> RemoteTask:
        return parse_task(self.call(self.method("cancel"), {"id": task_id}), self.url)

    def stop(self) -> Any:
        """Stop the session (`session/stop`): cancels every live task."""
        return self.call(self.method("stop"), {})


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    if "refused" in text.lower() or "errno 111" in text.lower():
        return "connection refused"
    return _text(text, 300)


def refusal(url: str, what: str, status: int, body: Any) -> DoorError:
    """Murmur's 401/403 refusal (`{"error": code, "message": …}`) as a DoorError."""
    code = body.get("error") if isinstance(body, Mapping) else None
    message = body.get("message") if isinstance(body, Mapping) else None
    code = code if isinstance(code, str) else ("unauthenticated" if status == 401
                                               else "forbidden")
    hint = {"unauthenticated": "it needs a token (--token or the session's token file)",
            "invalid_token": "the token was not accepted",
            "insufficient_scope": "the token does not reach this method",
            "peer_not_accepted": "it does not accept tasks from peer capsules"}.get(code, "")
    said = f": {_text(message, 500)}" if isinstance(message, str) and message else ""
    tail = f" ({hint})" if hint else ""
    return DoorError(f"the door at {url} refused {what}: HTTP {status} {_text(code, 100)}"
                     f"{said}{tail}", status=status, reason=code)


def rpc_error(url: str, method: str, error: Any) -> DoorError:
    """A JSON-RPC `error` member as a DoorError."""
    if not isinstance(error, Mapping):
        return DoorError(f"the door at {url} answered {method} with an error: {_text(error)}")
    code = error.get("code")
    message = error.get("message")
    said = _text(message, 500) if isinstance(message, str) else "(no message)"
    number = code if isinstance(code, int) and not isinstance(code, bool) else None
    return DoorError(f"the door at {url} refused {method}: {said} (JSON-RPC {number})",
                     rpc_code=number)

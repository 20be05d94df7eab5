"""A client for a running session's A2A door (Murmur's JSON-RPC 2.0 over HTTP).

`DoorClient.card()` reads the door's agent card with the one card parser
(tui/core/a2a/card.py), which tells the three generations apart; every call is then made in the
shape its generation expects, through the one JSON-RPC exchange (tui/core/a2a/rpc.py). Every
refusal — Murmur's 401/403 bodies, a JSON-RPC error, a connection refused, a timeout — is one
`DoorError` naming the door and what it refused. httpx loads on first use.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tui.core.a2a import rpc
from tui.core.a2a.card import CARD_PATH, METHODS, VERSION_HEADER, Card, Generation, parse_card
from tui.core.a2a.rpc import refusal, rpc_error, shared_tls
from tui.core.a2a.task import (
    RemoteTask,
    Stopped,
    first_user_text,
    parse_stop,
    parse_task,
    task_state,
)
from tui.core.errors import DoorError
from tui.core.text.secrets import remember

if TYPE_CHECKING:
    import httpx

__all__ = ["CARD_PATH", "Card", "DoorClient", "DoorError", "Generation", "RemoteTask",
           "first_user_text", "parse_card", "parse_task", "refusal", "rpc_error", "shared_tls",
           "task_state"]

DEFAULT_TIMEOUT = 10.0


class DoorClient:
    """Calls one door. Thread-safe: the fleet shares one per session between its threads."""

    def __init__(self, url: str, token: str | None = None, timeout: float = DEFAULT_TIMEOUT,
                 extra: Mapping[str, str] | None = None, extended: bool = True) -> None:
        url = url.strip()
        if "://" not in url:  # door A's card says "localhost:P"
            url = f"http://{url}"
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self.extra = dict(extra or {})  # sent on every JSON-RPC request (origin `peer`)
        # whether the token may read the extended card (a formation token may not: §7.5)
        self.extended = extended
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
        return {**rpc.headers(VERSION_HEADER[generation] if generation else None, self.token),
                **self.extra}

    def envelope(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        return rpc.envelope(method, params, next(self._ids))

    def _exchange(self, verb: str, what: str, *, path: str = "/",
                  body: Mapping[str, Any] | None = None,
                  headers: Mapping[str, str] | None = None) -> Any:
        status, data = rpc.exchange(self._http(), verb, self.url + path, what, door=self.url,
                                    body=None if body is None else json.dumps(body).encode(),
                                    sent=headers)
        return rpc.answer_json(status, data, door=self.url, what=what)

    def call(self, method: str, params: Mapping[str, Any] | None = None,
             generation: Generation | None = None) -> Any:
        """One JSON-RPC call; its `result`, or a DoorError for its `error`."""
        generation = generation or self.card().generation
        answer = self._exchange("POST", method, body=self.envelope(method, params),
                                headers=self.headers(generation))
        return rpc.result_of(answer, door=self.url, method=method)

    def method(self, call: str) -> str:
        """The method name for `call` on this door, or a DoorError when it has none."""
        card = self.card()
        name = METHODS[call][card.generation]
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
        if card.session_id is None and card.authenticated and self.token and self.extended:
            extended = METHODS["extended"][card.generation]
            if extended is not None and extended in card.methods:
                self._card = card
                full = parse_card(self.call(extended, None, card.generation), self.url)
                card = Card(card.generation, card.name, card.version, card.url,
                            full.session_id, card.methods, card.streaming, True,
                            session_name=full.session_name)
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

    def stop(self) -> Stopped:
        """Stop the session (`session/stop`): cancels every live task. Murmur's answer and an
        earlier murmur-tui's alike (`parse_stop`)."""
        return parse_stop(self.call(self.method("stop"), {}))

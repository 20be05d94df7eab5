"""Sending a task to a peer capsule's A2A door: the host side of `murmur:message/send@0.1.0`.

`send(peer_url, message, rules)` does, in order:

1. checks the peer against `capabilities.network.allow` before any connection (a peer without
   a scheme is `http://`), refused with Murmur's words;
2. reads the peer's agent card (`GET /.well-known/agent-card.json`) with the one card parser
   (tui/core/a2a/card.py) to learn its door's generation; no card at all (HTTP 404) is
   Murmur v0.2.0's door, A;
3. posts the JSON-RPC request that generation expects to the peer's `/` (never to a URL the
   card names: only the peer the policy allowed is reached) — A/B `message/send` with
   `role: "user"`; C `SendMessage` with `role: "ROLE_USER"` and the header `A2A-Version: 1.0` —
   through the one JSON-RPC exchange (tui/core/a2a/rpc.py), with the peer's bearer token when
   `token_at` (the caller's: tui/core/running/tokens.py reads the running records) knows one;
4. returns the peer's immediate task: its id, context id and state in Murmur's lower-case words.

Every failure is a `DelegationError` whose text names the peer and carries no secret: a refusal
by policy, no connection within `CONNECT_SECONDS`, no answer within `READ_SECONDS` (the whole
answer, not each read), an answer over `MAX_RESPONSE_BYTES`, a redirect, HTTP 401/403 with
Murmur's error code, another HTTP status, a JSON-RPC error, or an answer that is not the task
it should be. httpx is imported only when a task is sent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tui.core import ids
from tui.core.a2a import net_policy, rpc
from tui.core.a2a.card import CARD_PATH, METHODS, VERSION_HEADER, Generation, parse_card
from tui.core.errors import DelegationError, DoorError
from tui.core.text.printable import printable
from tui.core.text.secrets import redact, remember
from tui.core.text.strict_json import loads_line

if TYPE_CHECKING:
    import httpx

CONNECT_SECONDS = 5.0
READ_SECONDS = 30.0
MAX_RESPONSE_BYTES = 1 << 20
MAX_ID_CHARS = 512
# Murmur's door refusals (agent-card.md "Security"): the codes its 401/403 bodies carry
AUTH_CODES = frozenset({"unauthenticated", "invalid_token", "insufficient_scope",
                        "peer_not_accepted"})
STATES = frozenset({"submitted", "working", "input-required", "auth-required", "completed",
                    "canceled", "failed", "rejected"})
TokenAt = Callable[[str, int], "str | None"]  # the bearer token of the door at (host, port)


@dataclass(frozen=True)
class Outgoing:
    message_id: str
    context_id: str | None
    text: str


@dataclass(frozen=True)
class TaskResult:
    task_id: str
    context_id: str
    state: str


@dataclass(frozen=True)
class Peer:
    shown: str  # as the capsule named it
    base: str  # scheme://authority, the only place requests go
    target: net_policy.Target | None


def peer(peer_url: str) -> Peer:
    text = peer_url.strip()
    full = text if "://" in text else f"http://{text}"
    try:
        parts = urlsplit(full)
        authority = parts.netloc
    except ValueError:
        return Peer(peer_url, "", None)
    scheme = parts.scheme.lower()
    if scheme not in net_policy.DEFAULT_PORTS or not authority or "@" in authority:
        return Peer(peer_url, "", None)
    return Peer(peer_url, f"{scheme}://{authority}", net_policy.target(scheme, authority))


def refusal(peer_url: str) -> str:
    """Murmur's words, with the peer as the capsule wrote it."""
    return f"network policy: '{peer_url}' not in capabilities.network.allow"


def send(peer_url: str, message: Outgoing, rules: tuple[net_policy.Rule, ...],
         token_at: TokenAt | None = None) -> TaskResult:
    """Send `message` to the peer and return its immediate task (module docstring)."""
    to = peer(peer_url)
    if not net_policy.allowed(rules, to.target):
        raise DelegationError(refusal(peer_url))
    shown = _shown(peer_url)
    token = peer_token(to, token_at)
    import httpx

    timeout = httpx.Timeout(READ_SECONDS, connect=CONNECT_SECONDS)
    with httpx.Client(timeout=timeout, follow_redirects=False, trust_env=False) as client:
        generation = _generation(client, to, shown, token)
        body, headers = request(generation, message)
        if token is not None:
            headers["authorization"] = f"Bearer {token}"
        status, data = _exchange(client, "POST", to.base + "/", shown, headers,
                                 json.dumps(body, ensure_ascii=False).encode())
    _refused(status, data, shown)
    if not 200 <= status < 300:
        raise DelegationError(f"peer {shown} answered HTTP {status} to {body['method']}")
    return task_result(_json(data, shown, "its answer"), generation, shown)


def request(generation: Generation, message: Outgoing
            ) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON-RPC body and headers `generation` expects."""
    wire: dict[str, Any] = {"messageId": message.message_id,
                            "role": "ROLE_USER" if generation == "C" else "user",
                            "parts": [{"text": message.text}]}
    if message.context_id is not None:
        wire["contextId"] = message.context_id
    method = METHODS["send"][generation] or "message/send"
    body = rpc.envelope(method, {"message": wire}, ids.mint("req"))
    return body, rpc.headers(VERSION_HEADER[generation])


def task_result(answer: Any, generation: Generation, shown: str) -> TaskResult:
    if not isinstance(answer, dict):
        raise DelegationError(f"peer {shown} answered with JSON that is not a JSON-RPC reply")
    error = answer.get("error")
    if error is not None:
        code = error.get("code") if isinstance(error, dict) else None
        text = error.get("message") if isinstance(error, dict) else None
        detail = f" ({_shown(str(text), 200)})" if isinstance(text, str) and text else ""
        shown_code = f" {code}" if isinstance(code, int) else ""
        raise DelegationError(f"peer {shown} refused the task: JSON-RPC error"
                              f"{shown_code}{detail}")
    result = answer.get("result")
    if generation == "C" and isinstance(result, dict):
        if "task" not in result and "message" in result:
            raise DelegationError(f"peer {shown} answered with a message, not a task")
        result = result.get("task")
    if not isinstance(result, dict):
        raise DelegationError(f"peer {shown} answered without a task")
    task_id, context_id = result.get("id"), result.get("contextId")
    status = result.get("status")
    state = status.get("state") if isinstance(status, dict) else None
    for name, value in (("id", task_id), ("contextId", context_id), ("status.state", state)):
        if not isinstance(value, str) or not value or len(value) > MAX_ID_CHARS:
            raise DelegationError(f"peer {shown} answered with a task without a readable "
                                  f"{name}")
    assert isinstance(task_id, str) and isinstance(context_id, str) and isinstance(state, str)
    word = state_word(state)
    if word is None:
        raise DelegationError(f"peer {shown} answered with a task in an unknown state "
                              f"{_shown(state, 64)!r}")
    return TaskResult(printable(task_id, False), printable(context_id, False), word)


def state_word(state: str) -> str | None:
    """`TASK_STATE_INPUT_REQUIRED` and `input-required` alike -> "input-required"."""
    word = state.removeprefix("TASK_STATE_").lower().replace("_", "-")
    return word if word in STATES else None


def peer_token(to: Peer, token_at: TokenAt | None) -> str | None:
    """The bearer token of the running session at `to` (plain http only: a running record's
    door speaks no TLS), when `token_at` knows one."""
    if token_at is None or to.target is None or to.target.scheme != "http" or \
            to.target.port is None:
        return None
    token = token_at(to.target.host, to.target.port)
    if token:
        remember(token)  # never shown, even when a peer echoes it
    return token or None


def _generation(client: httpx.Client, to: Peer, shown: str, token: str | None) -> Generation:
    headers = {"accept": "application/json"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    status, data = _exchange(client, "GET", to.base + CARD_PATH, shown, headers, None)
    _refused(status, data, shown)
    if status == 404:
        return "A"  # Murmur's first doors answer message/send and may serve no card
    if not 200 <= status < 300:
        raise DelegationError(f"peer {shown} answered HTTP {status} for its agent card")
    try:
        return parse_card(_json(data, shown, "its agent card"), to.base).generation
    except DoorError:
        raise DelegationError(f"peer {shown} has an agent card of no A2A door murmur-tui "
                              "knows (protocol versions 1.0 and 0.3, or Murmur v0.2.0's)"
                              ) from None


def _exchange(client: httpx.Client, method: str, url: str, shown: str,
              headers: dict[str, str], body: bytes | None) -> tuple[int, bytes]:
    """One request through the one exchange (tui/core/a2a/rpc.py): its status and at most
    `MAX_RESPONSE_BYTES` of body, all within `READ_SECONDS` of the connection; a redirect is
    refused, never followed."""
    try:
        status, data = rpc.exchange(client, method, url, "the request", door=shown, body=body,
                                    sent=headers, max_bytes=MAX_RESPONSE_BYTES,
                                    deadline=CONNECT_SECONDS + READ_SECONDS)
    except DoorError as exc:
        raise DelegationError(_exchange_failure(exc, shown)) from None
    if 300 <= status < 400:
        raise DelegationError(f"peer {shown} answered with a redirect (HTTP {status}); it is "
                              "not followed")
    return status, data


def _exchange_failure(exc: DoorError, shown: str) -> str:
    """What a failed exchange says, in delegation's words."""
    if exc.cause == "too-large":
        return f"peer {shown} answered with more than {MAX_RESPONSE_BYTES >> 20} MiB"
    if exc.cause == "timeout":
        cause = exc.__cause__
        if type(cause).__name__ == "ConnectTimeout":
            return f"peer {shown} did not accept a connection within {CONNECT_SECONDS:g} s"
        return f"peer {shown} did not answer within {READ_SECONDS:g} s"
    if exc.cause == "connect":
        return f"cannot connect to peer {shown}: {exc.text.rpartition(': ')[2]}"
    return f"peer {shown}: {exc.text.rpartition(': ')[2]}"


def _refused(status: int, data: bytes, shown: str) -> None:
    """A 401/403 from the door, with Murmur's error code when its body carries one."""
    if status not in (401, 403):
        return
    code = None
    try:
        body = loads_line(data)
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("error") in AUTH_CODES:
        code = body["error"]
    reason = code or ("unauthenticated" if status == 401 else "forbidden")
    raise DelegationError(f"peer {shown} refused the request: HTTP {status} {reason}")


def _json(data: bytes, shown: str, what: str) -> Any:
    try:
        return loads_line(data)
    except ValueError:
        raise DelegationError(f"peer {shown} sent {what} that is not JSON") from None


def _shown(text: str, limit: int = 300) -> str:
    """A text from outside, fit for a message: redacted, printable, at most `limit` chars."""
    clean = printable(redact(text), False)
    return clean if len(clean) <= limit else clean[:limit] + "…"

"""Sending a task to a peer capsule's A2A door: the host side of `murmur:message/send@0.1.0`.

`send(peer_url, message, rules)` does, in order:

1. checks the peer against `capabilities.network.allow` before any connection (a peer without
   a scheme is `http://`), refused with Murmur's words;
2. reads the peer's agent card (`GET /.well-known/agent-card.json`) to learn its door's
   generation — C: `supportedInterfaces[0].protocolVersion` "1.0"; B: "0.3"; A (Murmur
   v0.2.0): a card with a top-level `url` and no `supportedInterfaces`, or no card at all;
3. posts the JSON-RPC request that generation expects to the peer's `/` (never to a URL the
   card names: only the peer the policy allowed is reached) — A/B `message/send` with
   `role: "user"`; C `SendMessage` with `role: "ROLE_USER"` and the header `A2A-Version: 1.0` —
   with the peer's bearer token when a running record under `$MURMUR_HOME/running/` names the
   peer and has `<session_id>.token` beside it;
4. returns the peer's immediate task: its id, context id and state in Murmur's lower-case words.

Every failure is a `DelegationError` whose text names the peer and carries no secret: a refusal
by policy, no connection within `CONNECT_SECONDS`, no answer within `READ_SECONDS` (the whole
answer, not each read), an answer over `MAX_RESPONSE_BYTES`, a redirect, HTTP 401/403 with
Murmur's error code, another HTTP status, a JSON-RPC error, or an answer that is not the task
it should be. httpx is imported only when a task is sent.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from tui.core import ids
from tui.core.a2a import net_policy
from tui.core.errors import DelegationError
from tui.core.text.printable import printable
from tui.core.text.secrets import redact, remember
from tui.core.text.strict_json import loads_line

if TYPE_CHECKING:
    import httpx

CONNECT_SECONDS = 5.0
READ_SECONDS = 30.0
MAX_RESPONSE_BYTES = 1 << 20
MAX_TOKEN_BYTES = 4096
MAX_RECORD_BYTES = 64 << 10
MAX_ID_CHARS = 512
CARD_PATH = "/.well-known/agent-card.json"
A2A_VERSION = "1.0"
LOOPBACK = frozenset({"localhost", "127.0.0.1", "[::1]"})
# Murmur's door refusals (agent-card.md "Security"): the codes its 401/403 bodies carry
AUTH_CODES = frozenset({"unauthenticated", "invalid_token", "insufficient_scope",
                        "peer_not_accepted"})
STATES = frozenset({"submitted", "working", "input-required", "auth-required", "completed",
                    "canceled", "failed", "rejected"})
_WORD = re.compile(r"^[A-Za-z0-9_.:-]{1,64}$")


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
         home: Path | None = None) -> TaskResult:
    """Send `message` to the peer and return its immediate task (module docstring)."""
    to = peer(peer_url)
    if not net_policy.allowed(rules, to.target):
        raise DelegationError(refusal(peer_url))
    shown = _shown(peer_url)
    token = peer_token(to, home) if home is not None else None
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


def request(generation: str, message: Outgoing) -> tuple[dict[str, Any], dict[str, str]]:
    """The JSON-RPC body and headers `generation` ("A", "B" or "C") expects."""
    wire: dict[str, Any] = {"messageId": message.message_id,
                            "role": "ROLE_USER" if generation == "C" else "user",
                            "parts": [{"text": message.text}]}
    if message.context_id is not None:
        wire["contextId"] = message.context_id
    headers = {"content-type": "application/json", "accept": "application/json",
               "accept-encoding": "identity"}
    if generation == "C":
        headers["a2a-version"] = A2A_VERSION
    body = {"jsonrpc": "2.0", "id": ids.mint("req"),
            "method": "SendMessage" if generation == "C" else "message/send",
            "params": {"message": wire}}
    return body, headers


def generation(card: Any) -> str | None:
    """The door generation an agent card shows ("A", "B", "C"), None when it shows none."""
    if not isinstance(card, dict):
        return None
    interfaces = card.get("supportedInterfaces")
    if isinstance(interfaces, list) and interfaces:
        first = interfaces[0]
        version = first.get("protocolVersion") if isinstance(first, dict) else None
        if version == "1.0":
            return "C"
        if version == "0.3":
            return "B"
        return None
    serves = card.get("serves")  # cards of Murmur v0.4.0 and earlier
    if isinstance(serves, dict) and isinstance(serves.get("methods"), list):
        return "C" if "SendMessage" in serves["methods"] else "A"
    if "url" in card or isinstance(card.get("capabilities"), dict):
        return "A"
    return None


def task_result(answer: Any, generation: str, shown: str) -> TaskResult:
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


def peer_token(to: Peer, home: Path) -> str | None:
    """The bearer token of the running session at `to`, when its record says so: the first
    `$MURMUR_HOME/running/<session_id>.json` whose `url` is the peer, and a
    `<session_id>.token` beside it. Unreadable records are passed over."""
    if to.target is None:
        return None
    running = home / "running"
    try:
        names = sorted(os.listdir(running))
    except OSError:
        return None
    for name in names:
        if not name.endswith(".json"):
            continue
        record = _read_small(running / name, MAX_RECORD_BYTES)
        try:
            data = loads_line(record) if record is not None else None
        except ValueError:
            continue
        if not isinstance(data, dict) or not isinstance(data.get("url"), str):
            continue
        if not _same_place(peer(data["url"]).target, to.target):
            continue
        session = data.get("session_id")
        if not isinstance(session, str) or not _WORD.match(session):
            continue
        raw = _read_small(running / f"{session}.token", MAX_TOKEN_BYTES)
        token = raw.decode("utf-8", errors="replace").strip() if raw is not None else ""
        if token and token.isprintable() and " " not in token:
            remember(token)  # never shown, even when a peer echoes it
            return token
    return None


def _same_place(a: net_policy.Target | None, b: net_policy.Target) -> bool:
    if a is None or a.scheme != b.scheme or a.port != b.port:
        return False
    return a.host == b.host or (a.host in LOOPBACK and b.host in LOOPBACK)


def _read_small(path: Path, limit: int) -> bytes | None:
    """A running record or token file: a regular file (never a link, never waited on), at
    most `limit` bytes; None for anything else."""
    from tui.core.errors import FileRefused
    from tui.core.fs.safe_read import read_bounded

    try:
        read = read_bounded(path, limit)
    except FileRefused:
        return None
    return None if read.truncated else read.data


def _generation(client: httpx.Client, to: Peer, shown: str, token: str | None) -> str:
    headers = {"accept": "application/json", "accept-encoding": "identity"}
    if token is not None:
        headers["authorization"] = f"Bearer {token}"
    status, data = _exchange(client, "GET", to.base + CARD_PATH, shown, headers, None)
    _refused(status, data, shown)
    if status == 404:
        return "A"  # Murmur's first doors answer message/send and may serve no card
    if not 200 <= status < 300:
        raise DelegationError(f"peer {shown} answered HTTP {status} for its agent card")
    found = generation(_json(data, shown, "its agent card"))
    if found is None:
        raise DelegationError(f"peer {shown} has an agent card of no A2A door murmur-tui "
                              "knows (protocol versions 1.0 and 0.3, or Murmur v0.2.0's)")
    return found


def _exchange(client: httpx.Client, method: str, url: str, shown: str,
              headers: dict[str, str], body: bytes | None) -> tuple[int, bytes]:
    """One request; its status and at most `MAX_RESPONSE_BYTES` of body, all within
    `READ_SECONDS` of the connection."""
    import httpx

    started = time.monotonic()
    try:
        with client.stream(method, url, headers=headers, content=body) as response:
            if response.is_redirect:
                raise DelegationError(f"peer {shown} answered with a redirect "
                                      f"(HTTP {response.status_code}); it is not followed")
            chunks: list[bytes] = []
            size = 0
            for chunk in response.iter_raw():
                size += len(chunk)
                if size > MAX_RESPONSE_BYTES:
                    raise DelegationError(f"peer {shown} answered with more than "
                                          f"{MAX_RESPONSE_BYTES >> 20} MiB")
                if time.monotonic() - started > CONNECT_SECONDS + READ_SECONDS:
                    raise httpx.ReadTimeout("answer too slow")
                chunks.append(chunk)
            return response.status_code, b"".join(chunks)
    except httpx.ConnectTimeout:
        raise DelegationError(f"peer {shown} did not accept a connection within "
                              f"{CONNECT_SECONDS:g} s") from None
    except (httpx.ReadTimeout, httpx.WriteTimeout, httpx.PoolTimeout):
        raise DelegationError(f"peer {shown} did not answer within {READ_SECONDS:g} s"
                              ) from None
    except httpx.ConnectError as exc:
        raise DelegationError(f"cannot connect to peer {shown}: "
                              f"{_shown(str(exc) or 'connection failed', 200)}") from None
    except httpx.HTTPError as exc:
        raise DelegationError(f"peer {shown}: {type(exc).__name__}: "
                              f"{_shown(str(exc), 200)}") from None


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

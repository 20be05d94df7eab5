"""The one JSON-RPC exchange with a Murmur door, which the door client (tui/core/a2a/client.py),
the running-record probe (tui/core/running/probe.py), `murmur-tui ps` and delegation
(tui/core/a2a/send.py) all speak through: the envelope and its headers, one bounded HTTP
exchange, and the reading of what came back — Murmur's 401/403 bodies, another HTTP status, a
body that is not JSON, a JSON-RPC error — as one `DoorError` carrying what went wrong in fields
(`cause`, `status`, `reason`, `rpc_code`), so each caller words it for its own reader.

httpx is imported only when a request is made.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tui.core.errors import DoorError, NotJson
from tui.core.text.strict_json import loads_line

if TYPE_CHECKING:
    import httpx

MAX_BODY_BYTES = 16 * 1024 * 1024  # no door answer comes near this
def shown_text(value: Any, limit: int = 4096) -> str:
    """A value from a door, as a short readable string."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


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


def envelope(method: str, params: Mapping[str, Any] | None, request_id: int | str
             ) -> dict[str, Any]:
    """A JSON-RPC 2.0 request (`params` left out when None)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        body["params"] = dict(params)
    return body


def headers(version: str | None, token: str | None = None) -> dict[str, str]:
    """The headers a JSON-RPC request carries: `A2A-Version` when the door's generation wants
    one (tui/core/a2a/card.py, VERSION_HEADER), the bearer token when there is one."""
    sent = {"content-type": "application/json", "accept": "application/json"}
    if version is not None:
        sent["A2A-Version"] = version
    if token:
        sent["authorization"] = f"Bearer {token}"
    return sent


def exchange(http: httpx.Client, verb: str, url: str, what: str, *, door: str,
             body: bytes | None = None, sent: Mapping[str, str] | None = None,
             max_bytes: int = MAX_BODY_BYTES, deadline: float | None = None
             ) -> tuple[int, bytes]:
    """One request: its HTTP status and body (at most `max_bytes`, all of it within `deadline`
    seconds when given). A timeout, no connection, a broken connection or an answer too large
    is a DoorError naming `door` (the door's address as the reader knows it) and `what`."""
    import httpx

    started = time.monotonic()
    try:
        # identity: the bound is on the bytes that travel, never on what they unpack to
        with http.stream(verb, url, headers={"accept-encoding": "identity", **(sent or {})},
                         content=body) as response:
            data = bytearray()
            for chunk in response.iter_raw():
                data += chunk
                if len(data) > max_bytes:
                    raise DoorError(f"the door at {door} answered {what} with more than "
                                    f"{_size(max_bytes)}", cause="too-large")
                if deadline is not None and time.monotonic() - started > deadline:
                    raise httpx.ReadTimeout("answer too slow")
            return response.status_code, bytes(data)
    except httpx.TimeoutException as exc:
        timeout = http.timeout.read if deadline is None else deadline
        raise DoorError(f"the door at {door} did not answer {what} within {timeout or 0:g} s",
                        cause="timeout") from exc
    except httpx.ConnectError as exc:
        raise DoorError(f"cannot reach the door at {door}: {reason(exc)}",
                        cause="connect") from exc
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:  # ValueError: a bad address
        raise DoorError(f"the connection to the door at {door} broke during {what}: "
                        f"{reason(exc)}", cause="broken") from exc


def answer_json(status: int, data: bytes, *, door: str, what: str) -> Any:
    """The JSON of a 200 answer; a DoorError for a refusal, another status, or a body that is
    not JSON (read without recursion: tui/core/text/strict_json.py)."""
    try:
        parsed: Any = loads_line(data) if data else None
    except NotJson:
        parsed = None
        problem = "a body that is not JSON"
    else:
        problem = "an empty body"
    if status in (401, 403):
        raise refusal(door, what, status, parsed)
    if status != 200:
        raise DoorError(f"the door at {door} answered {what} with HTTP {status}", status=status,
                        cause="status")
    if parsed is None:
        raise DoorError(f"the door at {door} answered {what} with {problem}", cause="not-json")
    return parsed


def result_of(answer: Any, *, door: str, method: str) -> Any:
    """A JSON-RPC response's `result`, or a DoorError for its `error` (or for neither)."""
    if not isinstance(answer, Mapping):
        raise DoorError(f"the door at {door} answered {method} with a body that is not a "
                        "JSON-RPC response")
    error = answer.get("error")
    if error is not None:
        raise rpc_error(door, method, error)
    if "result" not in answer:
        raise DoorError(f"the door at {door} answered {method} with neither a result nor an "
                        "error")
    return answer["result"]


def call(http: httpx.Client, url: str, method: str, params: Mapping[str, Any] | None, *,
         door: str, request_id: int | str, sent: Mapping[str, str]) -> Any:
    """One JSON-RPC call to `url`: its `result`, or a DoorError."""
    status, data = exchange(http, "POST", url, method, door=door,
                            body=json.dumps(envelope(method, params, request_id)).encode(),
                            sent=sent)
    return result_of(answer_json(status, data, door=door, what=method), door=door,
                     method=method)


def reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    if "refused" in text.lower() or "errno 111" in text.lower():
        return "connection refused"
    return shown_text(text.splitlines()[0] if text.strip() else text, 300)


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MiB" if limit % (1024 * 1024) == 0 else f"{limit} bytes"


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
    said = f": {shown_text(message, 500)}" if isinstance(message, str) and message else ""
    tail = f" ({hint})" if hint else ""
    return DoorError(f"the door at {url} refused {what}: HTTP {status} {shown_text(code, 100)}"
                     f"{said}{tail}", status=status, reason=code, cause="refused")


def rpc_error(url: str, method: str, error: Any) -> DoorError:
    """A JSON-RPC `error` member as a DoorError."""
    if not isinstance(error, Mapping):
        return DoorError(f"the door at {url} answered {method} with an error: "
                         f"{shown_text(error)}", cause="rpc")
    code = error.get("code")
    message = error.get("message")
    said = shown_text(message, 500) if isinstance(message, str) else "(no message)"
    number = code if isinstance(code, int) and not isinstance(code, bool) else None
    return DoorError(f"the door at {url} refused {method}: {said} (JSON-RPC {number})",
                     rpc_code=number, cause="rpc")

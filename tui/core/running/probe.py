"""Layer 3 of a running record's check: its door, probed as Murmur probes it
(`crates/capsule-runtime/src/running.rs`; docs/fleet.md, "A record is a hint").

`verify` runs all three layers (the process ones are tui/core/running/records.py's). The agent
card at
the record's address must name the record's session: the public card, read without a token;
on a door that asks for one, the extended card, read with the token only once the socket
listening at that address is found among the record's process's own open files
(tui/core/running/listening.py) — and then from that checked address alone (`Verdict.address`).
Every later call that carries a token (`rpc`, and `door_url` for the attached screen and the
fleet) goes there too. Nothing a door answers, and no address a record holds, raises.

No Textual, no Rich; httpx is imported only when a door is probed.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from tui.core.errors import NotJson, ProbeRefused
from tui.core.running.address import door_host_port
from tui.core.running.records import (
    OPERATOR,
    Door,
    RunningRecord,
    Verdict,
    bare_address,
    process_state,
)
from tui.core.text.strict_json import loads_line

if TYPE_CHECKING:
    import httpx

    from tui.core.running.listening import Tables

MAX_CARD_BYTES = 1024 * 1024
PROBE_TIMEOUT = 2.0  # seconds, per request: `ps` of 50 sessions stays quick when some are silent
MAX_PROBES = 32  # doors probed at once
CAPSULE_EXTENSION = "#murmur-capsule-v1"


def verify(record: RunningRecord, timeout: float = PROBE_TIMEOUT, *,
           token: str | None = None, client: httpx.Client | None = None,
           credential: str = OPERATOR) -> Verdict:
    """All three layers. `token` (default: the record's `door_token`), the token of
    `credential`, reads the extended card of a door that authenticates, once the door is
    found to be the record's process's. Never raises for what a door or a record holds."""
    local = process_state(record)
    if local is not None:
        return local
    token = token or record.door_token
    if client is None:
        import httpx

        with httpx.Client(timeout=timeout, trust_env=False) as own:
            return _probe(record, own, token, credential)
    return _probe(record, client, token, credential)


def verify_all(records: Sequence[RunningRecord], timeout: float = PROBE_TIMEOUT, *,
               tokens: Sequence[str | None] | None = None,
               credential: str = OPERATOR) -> list[Verdict]:
    """`verify` of every record, the doors probed concurrently (at most MAX_PROBES at once),
    in the records' order. `tokens`, when given, are exactly the tokens presented (None: none),
    else each record's `door_token`."""
    if not records:
        return []
    chosen = list(tokens) if tokens is not None else [r.door_token for r in records]
    verdicts: list[Verdict | None] = [process_state(record) for record in records]
    pending = [index for index, verdict in enumerate(verdicts) if verdict is None]
    if pending:
        import httpx

        from tui.core.running.listening import Tables

        tables = Tables()  # the kernel's socket tables, read once for the whole round
        limits = httpx.Limits(max_connections=MAX_PROBES, max_keepalive_connections=0)
        with httpx.Client(timeout=timeout, trust_env=False, limits=limits) as client, \
                ThreadPoolExecutor(max_workers=min(MAX_PROBES, len(pending))) as pool:
            results = pool.map(
                lambda index: _probe(records[index], client, chosen[index], credential,
                                     tables), pending)
            for index, verdict in zip(pending, results, strict=True):
                verdicts[index] = verdict
    return [verdict for verdict in verdicts if verdict is not None]


def door_address(url: str) -> str:
    """`http://host:port` for a record's url (`host:port`, or a url with a scheme)."""
    return f"http://{bare_address(url)}"


def door_url(record: RunningRecord, verdict: Verdict) -> str:
    """Where to speak to a verified record's door: the address checked to be its process's
    socket when there is one (the only place its token goes), else the record's."""
    return f"http://{verdict.address}" if verdict.address else door_address(record.url)


def door_generation(card: dict[str, Any]) -> Door:
    """`1.0` (newest), `0.3`, or `legacy` (a card without supportedInterfaces: v0.4.0 and
    earlier)."""
    interfaces = card.get("supportedInterfaces")
    if isinstance(interfaces, list) and interfaces and isinstance(interfaces[0], dict):
        version = interfaces[0].get("protocolVersion")
        if version == "0.3":
            return "0.3"
        return "1.0"
    return "legacy"


def card_session_id(card: dict[str, Any]) -> str | None:
    """The session a card names: its capsule extension's `params.sessionId` (found by uri),
    else the previous card's top-level `session_id`."""
    capabilities = card.get("capabilities")
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    if isinstance(extensions, list):
        for extension in extensions:
            if not isinstance(extension, dict):
                continue
            uri = extension.get("uri")
            params = extension.get("params")
            if isinstance(uri, str) and uri.endswith(CAPSULE_EXTENSION) and \
                    isinstance(params, dict) and isinstance(params.get("sessionId"), str):
                return str(params["sessionId"])
    session = card.get("session_id")
    return session if isinstance(session, str) else None


def _probe(record: RunningRecord, client: httpx.Client, token: str | None,
           credential: str = OPERATOR, tables: Tables | None = None) -> Verdict:
    """Layer 3, in the order that keeps a token safe: the public card (no token); then, only
    for a door that asks for one and names no other session, the socket check; then the
    extended card, with the token, at the checked address alone."""
    import httpx

    try:
        host, port = door_host_port(record.url)
    except ValueError as exc:
        return Verdict("unreachable", f"its url is not a door address: {exc}")
    address = f"{host}:{port}"
    base = f"http://{address}"
    try:
        card = _get_json(client, f"{base}/.well-known/agent-card.json", address)
        if not isinstance(card, dict):
            return Verdict("unreachable", f"the agent card from {address} is not a JSON object")
        door = door_generation(card)
        session = card_session_id(card)
        held: str | None = None
        if session is None and _extended(card):
            if not token:
                known = "no token" if credential == OPERATOR else \
                    f"no token of credential '{credential}'"
                return Verdict("unreachable", f"the door at {address} authenticates and "
                               f"{known} is known for this session", door)
            checked = _held(record, host, port, tables)
            if isinstance(checked, Verdict):
                return Verdict(checked.state, checked.reason, door)
            held = checked
            extended = _extended_card(client, held, address, door, token)
            if isinstance(extended, Verdict):
                return extended
            card, session = extended, card_session_id(extended)
    except httpx.TimeoutException:
        return Verdict("unreachable", f"{address} did not answer within the probe's timeout")
    except httpx.HTTPError as exc:
        return Verdict("unreachable", f"nothing answered at {address}: {_why(exc)}")
    except (httpx.InvalidURL, ValueError) as exc:  # an address httpx will not take after all
        return Verdict("unreachable", f"{address} cannot be reached: {_why(exc)}")
    except ProbeRefused as exc:
        return Verdict("unreachable", str(exc))
    if session is None:
        return Verdict("unreachable", f"the agent card from {address} names no session", door)
    if session != record.session_id:
        return Verdict("unreachable", f"the capsule at {address} answers for session "
                                      f"{session}", door)
    return Verdict("live", None, door, card, held)


def _held(record: RunningRecord, host: str, port: int, tables: Tables | None
          ) -> str | Verdict:
    """The address (an IP literal) at which the record's process holds the listening socket,
    or why its token will not be sent there."""
    from tui.core.errors import AddressNotHeld
    from tui.core.running.listening import held_by

    try:
        return held_by(record.pid, host, port, tables)
    except AddressNotHeld as exc:
        return Verdict("unreachable", f"the door at {host}:{port} could not be tied to the "
                                      f"session's process ({exc}); its token was not sent")


def _extended(card: dict[str, Any]) -> bool:
    capabilities = card.get("capabilities")
    return isinstance(capabilities, dict) and capabilities.get("extendedAgentCard") is True


def _extended_card(client: httpx.Client, held: str, address: str, door: Door, token: str
                   ) -> dict[str, Any] | Verdict:
    """The extended card from the checked address `held` (the record's `address` in the Host
    header): `GetExtendedAgentCard` with `A2A-Version: 1.0` on the newest door,
    `agent/getAuthenticatedExtendedCard` on a 0.3 door."""
    method = "agent/getAuthenticatedExtendedCard" if door == "0.3" else "GetExtendedAgentCard"
    headers = {"Authorization": f"Bearer {token}", "Host": address}
    if door != "0.3":
        headers["A2A-Version"] = "1.0"
    reply = _post_json(client, f"http://{held}", address,
                       {"jsonrpc": "2.0", "id": 1, "method": method}, headers)
    result = reply.get("result") if isinstance(reply, dict) else None
    if not isinstance(result, dict):
        return Verdict("unreachable", f"the door at {address} gave no extended card", door)
    return result


def rpc(client: httpx.Client, record: RunningRecord, verdict: Verdict, method: str,
        params: dict[str, Any] | None, token: str | None) -> Any:
    """One JSON-RPC call to a verified record's door, with the header its generation expects;
    the token goes only to the address checked to be the session's socket (`verdict.address`).
    The reply's `result`, or None for an error reply or a failed call."""
    import httpx

    address = bare_address(record.url)
    headers: dict[str, str] = {"Host": address}
    if token and verdict.address:
        headers["Authorization"] = f"Bearer {token}"
    if verdict.door == "1.0":
        headers["A2A-Version"] = "1.0"
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
    if params is not None:
        body["params"] = params
    try:
        reply = _post_json(client, door_url(record, verdict), address, body, headers)
    except (httpx.HTTPError, httpx.InvalidURL, ValueError, ProbeRefused):
        return None
    return reply.get("result") if isinstance(reply, dict) else None


def _get_json(client: httpx.Client, url: str, address: str) -> Any:
    with client.stream("GET", url, headers={"Accept": "application/json"}) as response:
        return _json_body(response, address, "the agent-card request")


def _post_json(client: httpx.Client, base: str, address: str, body: dict[str, Any],
               headers: dict[str, str]) -> Any:
    import json

    with client.stream("POST", f"{base}/", content=json.dumps(body).encode(),
                       headers={"Content-Type": "application/json", **headers}) as response:
        return _json_body(response, address, f"`{body['method']}`")


def _json_body(response: httpx.Response, address: str, what: str) -> Any:
    if response.status_code in (401, 403):
        raise ProbeRefused(f"{address} refused {what} with {response.status_code}"
                           f"{_refusal(response)}")
    if response.status_code != 200:
        raise ProbeRefused(f"{address} answered {what} with {response.status_code}")
    data = bytearray()
    for chunk in response.iter_bytes():
        data += chunk
        if len(data) > MAX_CARD_BYTES:
            raise ProbeRefused(f"{address} answered {what} with more than "
                               f"{MAX_CARD_BYTES} bytes")
    try:
        return loads_line(bytes(data))
    except NotJson as exc:
        raise ProbeRefused(f"the answer from {address} to {what} is not JSON ({exc})"
                           ) from None


def _refusal(response: httpx.Response) -> str:
    """` (invalid_token)`: the `error` of Murmur's refusal body, when it has one."""
    import httpx

    try:
        value = loads_line(response.read()[:4096])
    except (NotJson, httpx.HTTPError):
        return ""
    error = value.get("error") if isinstance(value, dict) else None
    return f" ({error})" if isinstance(error, str) and error.isidentifier() else ""


def _why(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0][:200]

"""Layer 3 of a running record's check: its door, probed as Murmur probes it
(`crates/capsule-runtime/src/running.rs`; docs/fleet.md, "A record is a hint").

`verify` runs all three layers (the process ones are tui/core/running/liveness.py's). The agent
card at the record's address — read with the one card parser (tui/core/a2a/card.py), every
request made through the one JSON-RPC exchange (tui/core/a2a/rpc.py) — must name the record's
session: the public card, read without a token;
on a door that asks for one, the extended card, read with the token only once the socket
listening at that address is found among the record's process's own open files
(tui/core/running/listening.py) — and then from that checked address alone (`Verdict.address`).
Every later call that carries a token (`rpc_call`, and `door_url` for the attached screen and the
fleet) goes there too. Nothing a door answers, and no address a record holds, raises.

No Textual, no Rich; httpx is imported only when a door is probed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from tui.core.a2a import rpc
from tui.core.a2a.card import CARD_PATH, METHODS, VERSION_HEADER, Generation, parse_card
from tui.core.errors import DoorError
from tui.core.running.address import door_host_port
from tui.core.running.liveness import Verdict, process_state
from tui.core.running.records import RunningRecord, bare_address
from tui.core.running.tokens import OPERATOR

if TYPE_CHECKING:
    import httpx

    from tui.core.running.listening import Tables

MAX_CARD_BYTES = 1024 * 1024
PROBE_TIMEOUT = 2.0  # seconds, per request: `ps` of 50 sessions stays quick when some are silent
MAX_PROBES = 32  # doors probed at once


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

        # one TLS context for every probe: a client of its own would load the CA bundle anew
        with httpx.Client(timeout=timeout, trust_env=False, verify=rpc.shared_tls()) as own:
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
        with httpx.Client(timeout=timeout, trust_env=False, limits=limits,
                          verify=rpc.shared_tls()) as client, \
                ThreadPoolExecutor(max_workers=min(MAX_PROBES, len(pending))) as pool:
            results = pool.map(
                lambda index: _probe(records[index], client, chosen[index], credential,
                                     tables), pending)
            for index, verdict in zip(pending, results, strict=True):
                verdicts[index] = verdict
    return [verdict for verdict in verdicts if verdict is not None]


def door_address(url: str | None) -> str:
    """`http://host:port` for a record's url (`host:port`, or a url with a scheme); "" for a
    record with no door."""
    return f"http://{bare_address(url)}" if url is not None else ""


def door_url(record: RunningRecord, verdict: Verdict) -> str:
    """Where to speak to a verified record's door: the address checked to be its process's
    socket when there is one (the only place its token goes), else the record's."""
    return f"http://{verdict.address}" if verdict.address else door_address(record.url)


def _probe(record: RunningRecord, client: httpx.Client, token: str | None,
           credential: str = OPERATOR, tables: Tables | None = None) -> Verdict:
    """Layer 3, in the order that keeps a token safe: the public card (no token); then, only
    for a door that asks for one and names no other session, the socket check; then the
    extended card, with the token, at the checked address alone. A record with no door
    (`url: null`, Murmur v0.9.0 onward) has no third layer: the first two decided it."""
    if record.url is None:
        return Verdict("live")
    try:
        host, port = door_host_port(record.url)
    except ValueError as exc:
        return Verdict("unreachable", f"its url is not a door address: {exc}")
    address = f"{host}:{port}"
    base = f"http://{address}"
    door: Generation | None = None
    held: str | None = None
    try:
        raw = _json(client, "GET", f"{base}{CARD_PATH}", address, "the agent-card request",
                    {"accept": "application/json"})
        if not isinstance(raw, dict):
            return Verdict("unreachable", f"the agent card from {address} is not a JSON object")
        card = parse_card(raw, address)
        door = card.generation
        session = card.session_id
        if session is None and card.authenticated:
            if not token:
                known = "no token" if credential == OPERATOR else \
                    f"no token of credential '{credential}'"
                return Verdict("unreachable", f"the door at {address} authenticates and "
                               f"{known} is known for this session", door)
            checked = _held(record, host, port, tables)
            if isinstance(checked, Verdict):
                return Verdict(checked.state, checked.reason, door)
            held = checked
            method = METHODS["extended"][door] or "GetExtendedAgentCard"
            reply = _json(client, "POST", f"http://{held}/", address, f"`{method}`",
                          {**rpc.headers(VERSION_HEADER[door], token), "Host": address},
                          rpc.envelope(method, None, 1))
            extended = reply.get("result") if isinstance(reply, dict) else None
            if not isinstance(extended, dict):
                return Verdict("unreachable", f"the door at {address} gave no extended card",
                               door)
            raw, session = extended, parse_card(extended, address).session_id
    except DoorError as exc:
        return Verdict("unreachable", _reason(exc, address), door)
    if session is None:
        return Verdict("unreachable", f"the agent card from {address} names no session", door)
    if session != record.session_id:
        return Verdict("unreachable", f"the capsule at {address} answers for session "
                                      f"{session}", door)
    return Verdict("live", None, door, raw, held)


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


def rpc_call(client: httpx.Client, record: RunningRecord, verdict: Verdict, method: str,
             params: dict[str, Any] | None, token: str | None) -> Any:
    """One JSON-RPC call to a verified record's door, with the header its generation expects;
    the token goes only to the address checked to be the session's socket (`verdict.address`).
    The reply's `result`, or None for an error reply or a failed call."""
    if record.url is None:
        return None
    address = bare_address(record.url)
    version = VERSION_HEADER[verdict.door] if verdict.door else None
    sent = {**rpc.headers(version, token if verdict.address else None), "Host": address}
    try:
        reply = _json(client, "POST", f"{door_url(record, verdict)}/", address, f"`{method}`",
                      sent, rpc.envelope(method, params, 1))
        return rpc.result_of(reply, door=address, method=method)
    except DoorError:
        return None


def _json(client: httpx.Client, verb: str, url: str, address: str, what: str,
          sent: dict[str, str], body: dict[str, Any] | None = None) -> Any:
    """One request through the one exchange (tui/core/a2a/rpc.py), its JSON answer."""
    status, data = rpc.exchange(client, verb, url, what, door=address,
                                body=None if body is None else json.dumps(body).encode(),
                                sent=sent, max_bytes=MAX_CARD_BYTES)
    return rpc.answer_json(status, data, door=address, what=what)


def _reason(exc: DoorError, address: str) -> str:
    """Why a door did not confirm its session, in the words `ps` has always used."""
    if exc.cause == "timeout":
        return f"{address} did not answer within the probe's timeout"
    if exc.cause in ("connect", "broken"):
        return f"nothing answered at {address}: {exc.text.rpartition(': ')[2]}"
    if exc.cause == "refused":  # Murmur's code alone: the door's own message is not repeated
        code = f" ({exc.reason})" if exc.reason and exc.reason.isidentifier() else ""
        return f"{address} refused the request with {exc.status}{code}"
    return exc.text

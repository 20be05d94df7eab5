"""A host's `discover:` command and what it prints (docs/fleet.md, "Hosts").

Its stdout lists the host's sessions in either of two shapes, told apart per object:

- murmur-tui's `ps --json`: one JSON array of the objects `tui/commands/ps.py`
  (`SessionRow.to_json`) writes — `session_id`, `url`, `status`, `name`, `capsule_name`, …;
  a session whose `status` is `gone` is not listed;
- Murmur's running records themselves (`mur ps` has no JSON form in v0.11), as
  `cat ~/.murmur/running/*.json` prints them — objects one after another (one a line, or
  pretty-printed) or an array — with `session_id`, `url`, `capsule_name`, `capsule_version`,
  `started_at` (tui/core/running/records.py). A `door_token` in one is never used (a token
  comes from the host's token source) and is remembered by the redaction, never shown.

Everything printed is hostile input: not JSON, too much, nested too deep, control characters,
wrong types — the whole listing, or one entry, is refused with a reason, never a traceback.
An entry that is not a session is passed over, named by its place; the others are listed.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tui.core.errors import ListingRefused, NotJson
from tui.core.hosts.run import run_bounded
from tui.core.running.address import door_host_port, token_problem
from tui.core.running.record_keys import safe_session_id
from tui.core.text.printable import printable
from tui.core.text.secrets import remember
from tui.core.text.strict_json import loads

DISCOVER_TIMEOUT = 10.0  # an ssh round trip and a `ps --json` fit well inside
MAX_LISTING = 1024 * 1024  # 50 sessions of `ps --json` are ~50 KB
MAX_SESSIONS = 1000
MAX_TEXT = 200  # a name, capsule, version: cut to this
LISTED_TOKEN = 16  # the shortest door_token a listing is taken to hold (mdt1.…, 43 url-safe)
WILDCARD = frozenset({"0.0.0.0", "[::]"})


@dataclass(frozen=True)
class ListedSession:
    """One session a host's discovery lists. `url` is `http://host:port`, None for a session
    with no door."""

    session_id: str
    url: str | None
    name: str = ""
    capsule: str = ""
    version: str = ""
    started_at: str = ""


@dataclass(frozen=True)
class HostListing:
    sessions: tuple[ListedSession, ...]
    problems: tuple[str, ...] = ()  # entries passed over, and why


def discover(argv: Sequence[str], address: str = "",
             timeout: float = DISCOVER_TIMEOUT) -> HostListing:
    """Run the host's discovery; its listing, or HostCommandFailed saying why there is none."""
    ran = run_bounded(argv, timeout, MAX_LISTING)
    return parse_listing(ran.stdout, address)


def parse_listing(data: bytes, address: str = "") -> HostListing:
    """The sessions `data` lists (either shape); ListingRefused when it is not a listing."""
    values = json_values(data)
    if len(values) == 1 and isinstance(values[0], list):
        values = values[0]
    if len(values) > MAX_SESSIONS:
        raise ListingRefused(f"lists {len(values)} sessions; at most {MAX_SESSIONS} are read")
    sessions: list[ListedSession] = []
    problems: list[str] = []
    seen: set[str] = set()
    for index, value in enumerate(values):
        try:
            listed = entry(value, address)
        except ValueError as exc:
            problems.append(f"entry {index + 1}: {exc}")
            continue
        if listed is not None and listed.session_id not in seen:
            seen.add(listed.session_id)
            sessions.append(listed)
    return HostListing(tuple(sessions), tuple(problems))


def json_values(data: bytes) -> list[Any]:
    """The JSON values of `data`: one value, or objects one after another (whitespace between
    them, as `cat *.json` prints them). ListingRefused when it is anything else."""
    if not data.strip():
        return []
    pieces = _split(data)
    values = []
    for number, piece in enumerate(pieces, 1):
        try:
            values.append(loads(piece))
        except NotJson as exc:
            where = f" (value {number})" if len(pieces) > 1 else ""
            raise ListingRefused(f"printed what is not JSON{where}: "
                                 f"{printable(exc.text, keep_newlines=False)[:200]}") from None
    return values


def _split(data: bytes) -> list[bytes]:
    """`data` cut between top-level JSON values (brackets counted outside strings)."""
    pieces: list[bytes] = []
    depth, start, in_string, escaped = 0, None, False, False
    for index, byte in enumerate(data):
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:  # backslash
                escaped = True
            elif byte == 0x22:
                in_string = False
            continue
        if start is None:
            if byte in b" \t\r\n":
                continue
            start = index
        if byte == 0x22:
            in_string = True
        elif byte in b"[{":
            depth += 1
        elif byte in b"]}":
            depth -= 1
            if depth < 0:
                raise ListingRefused("printed what is not JSON: a bracket closes that was "
                                     "never opened")
        elif depth == 0 and byte in b" \t\r\n":
            pieces.append(data[start:index])
            start = None
            continue
        if depth == 0 and byte in b"]}":
            pieces.append(data[start:index + 1])
            start = None
    if start is not None:
        pieces.append(data[start:])
    return pieces


def entry(value: Any, address: str) -> ListedSession | None:
    """One object of either shape; None for a session listed as gone; ValueError saying why it
    is not a session."""
    if not isinstance(value, dict):
        raise ValueError("not a JSON object")
    token = value.get("door_token")
    if isinstance(token, str) and LISTED_TOKEN <= len(token) <= 4096 and \
            token_problem(token) is None:
        remember(token)  # never used, never shown (a shorter value is no door's token, and
        # remembered it would redact every word it matches: "http" in every URL)
    session_id = value.get("session_id")
    if not isinstance(session_id, str) or not safe_session_id(session_id):
        raise ValueError("session_id: expected a session id (letters, digits, _ and -)")
    if value.get("status") == "gone":
        return None
    url = value.get("url")
    if url is not None:
        if not isinstance(url, str):
            raise ValueError(f"{session_id}: url: expected host:port or null")
        url = reach(url, address, session_id)
    return ListedSession(session_id, url, _text(value, "name"), _text(value, "capsule_name"),
                  _text(value, "capsule_version"), _text(value, "started_at"))


def reach(url: str, address: str, session_id: str) -> str:
    """Where to speak to a listed door: `http://host:port`; a door bound to a wildcard address
    is reached at the host's `address` (ValueError without one)."""
    try:
        host, port = door_host_port(url)
    except ValueError as exc:
        raise ValueError(f"{session_id}: url: {exc}") from None
    if host in WILDCARD:
        if not address:
            raise ValueError(f"{session_id}: its door is bound to {host}: give the host an "
                             "address (fleet.yaml) to reach it")
        host = f"[{address}]" if ":" in address else address
    return f"http://{host}:{port}"


def _text(value: dict[str, Any], key: str) -> str:
    text = value.get(key)
    if not isinstance(text, str):
        return ""
    return printable(text, keep_newlines=False)[:MAX_TEXT]

"""What one member knows of its formation (spec murmur-newest §7.3–7.5): the formation's id, its
own name, whether it is the entry, the key its door verifies `mft1.` tokens with, and whom it may
call — each callee's name, the token for that edge and, once every peer's door answers, the
callee's door URL.

The launcher hands a member its seat on the formation channel (`MURMUR_FORMATION_CHANNEL`, an
inherited fd), one JSON object per line:

    {"formation_id": "frm_…", "member": "coder", "entry": false,
     "verify_key": "<base64url Ed25519 public key>",
     "callees": [{"name": "reviewer", "token": "mft1.…"}]}        # first, within 10 s
    {"urls": {"reviewer": "http://127.0.0.1:40123"}}              # once every peer is ready

A token is a credential: it is never printed, logged, traced or told (`Callee.__repr__` hides it).
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from typing import Any

from tui.core.errors import SeatError
from tui.core.ids import FORMATION_ID


@dataclass(frozen=True)
class Callee:
    name: str
    token: str = field(repr=False)  # mft1.<payload>.<signature>, for the edge member → name


@dataclass(eq=False)
class Seat:
    formation_id: str
    member: str
    entry: bool
    verify_key: str  # base64url of the launcher's Ed25519 public key
    callees: tuple[Callee, ...] = ()  # roster order
    _urls: dict[str, str] = field(default_factory=dict, repr=False)
    _ready: threading.Event = field(default_factory=threading.Event, repr=False)

    @property
    def callee_names(self) -> tuple[str, ...]:
        return tuple(callee.name for callee in self.callees)

    def callee(self, name: str) -> Callee | None:
        return next((callee for callee in self.callees if callee.name == name), None)

    def know_urls(self, urls: dict[str, str]) -> None:
        """The second channel line: the callees' door URLs."""
        self._urls.update(urls)
        self._ready.set()

    def url(self, name: str, timeout: float) -> str | None:
        """The callee's door URL, waiting up to `timeout` seconds for the launcher to send it."""
        self._ready.wait(timeout)
        return self._urls.get(name)

    def first_line(self) -> str:
        """The channel's first line for this seat (the launcher writes it)."""
        return json.dumps({"formation_id": self.formation_id, "member": self.member,
                           "entry": self.entry, "verify_key": self.verify_key,
                           "callees": [{"name": c.name, "token": c.token}
                                       for c in self.callees]}, separators=(",", ":")) + "\n"


def urls_line(urls: dict[str, str]) -> str:
    """The channel's second line: every callee's door URL."""
    return json.dumps({"urls": urls}, separators=(",", ":")) + "\n"


def parse_first(line: str) -> Seat:
    """A seat from the channel's first line (SeatError names what is wrong)."""
    data = _object(line)
    formation_id, member = data.get("formation_id"), data.get("member")
    key, entry, callees = data.get("verify_key"), data.get("entry", False), data.get("callees", [])
    if not isinstance(formation_id, str) or not FORMATION_ID.fullmatch(formation_id):
        raise SeatError("the formation channel's first line has no formation id")
    if not isinstance(member, str) or not member:
        raise SeatError("the formation channel's first line names no member")
    if not isinstance(key, str) or not key:
        raise SeatError("the formation channel's first line has no verifying key")
    if not isinstance(entry, bool) or not isinstance(callees, list):
        raise SeatError("the formation channel's first line is not a seat")
    seat = []
    for item in callees:
        if not (isinstance(item, dict) and isinstance(item.get("name"), str)
                and isinstance(item.get("token"), str)):
            raise SeatError("the formation channel names a callee without a name and token")
        seat.append(Callee(item["name"], item["token"]))
    return Seat(formation_id, member, entry, key, tuple(seat))


def parse_urls(line: str) -> dict[str, str]:
    """The callees' URLs from the channel's second line (SeatError names what is wrong)."""
    urls = _object(line).get("urls")
    if not isinstance(urls, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                             for k, v in urls.items()):
        raise SeatError("the formation channel's second line has no callee URLs")
    return dict(urls)


def _object(line: str) -> dict[str, Any]:
    try:
        data = json.loads(line)
    except ValueError:
        raise SeatError("a formation channel line is not JSON") from None
    if not isinstance(data, dict):
        raise SeatError("a formation channel line is not a JSON object")
    return data

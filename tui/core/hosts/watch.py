"""One host, looked at on a thread of its own (docs/fleet.md, "Hosts"): its sessions found —
by its discovery command, or by the cards of its doors — each with the token its door takes,
and reported; a host that cannot be reached reported once per try, with why and when it is
tried again (tui/core/hosts/backoff.py). Nothing here waits on the screen, or the screen on it.

A token goes only to a door whose public card names the session the host listed there (or,
for a door whose public card names none, an authenticated door, to the door the host lists),
as the local records' tokens go only to the session's own socket.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from tui.core.a2a.card import Card
from tui.core.errors import MurmurTuiError
from tui.core.hosts.backoff import retry_after
from tui.core.hosts.config import HostConfig
from tui.core.hosts.discovery import discover

CHECKS_AT_ONCE = 16  # new sessions of one host checked at once (cards, token commands)
CARD_TIMEOUT = 3.0  # a door that does not answer its card within it is not answering


@dataclass(frozen=True)
class HostSession:
    """A session of the host, ready to be watched: its door and the token it takes."""

    session_id: str
    url: str
    name: str = ""
    capsule: str = ""
    version: str = ""
    token: str | None = field(default=None, repr=False)


@dataclass(frozen=True)
class HostReport:
    """One look at a host: `found` its sessions (None: it could not be reached, `why`); `why`
    also names what was passed over on a host that answered."""

    name: str
    found: tuple[HostSession, ...] | None
    why: str = ""
    failures: int = 0  # tries in a row that failed
    retry_at: float | None = None  # monotonic: the next try of a host that failed


Report = Callable[[HostReport], None]


def said(notes: list[str], shown: int = 3) -> str:
    """What was passed over on a host, in one line of a few notes (a host may list a thousand
    entries that are not sessions: the screen gets three and how many more)."""
    more = len(notes) - shown
    return "; ".join(notes[:shown]) + (f"; and {more} more" if more > 0 else "")


class HostWatcher:
    def __init__(self, host: HostConfig, report: Report,
                 card_timeout: float = CARD_TIMEOUT) -> None:
        self.host = host
        self.report = report
        self.card_timeout = card_timeout
        self.failures = 0
        self._closed = threading.Event()
        self._poke = threading.Event()
        self._known: dict[str, tuple[str, str | None]] = {}  # session → (url, token) checked

    def start(self) -> None:
        threading.Thread(target=self._run, name=f"host {self.host.name}", daemon=True).start()

    def close(self) -> None:
        self._closed.set()
        self._poke.set()

    def _run(self) -> None:
        while not self._closed.is_set():
            report = self.look()
            if self._closed.is_set():
                return
            self.report(report)
            wait = self.host.interval if report.found is not None else \
                max(0.0, (report.retry_at or 0.0) - time.monotonic())
            self._poke.wait(wait)
            self._poke.clear()

    def look(self) -> HostReport:
        """One look at the host, never raising: its sessions, or why there are none."""
        try:
            found, notes = self._discovered() if self.host.discover else self._doors()
        except MurmurTuiError as exc:
            return self._failed(exc.text)
        except Exception as exc:  # a look never takes the watcher down; said, and tried again
            return self._failed(f"{type(exc).__name__}: {exc}"[:200])
        self.failures = 0
        return HostReport(self.host.name, tuple(found), said(notes))

    def _failed(self, why: str) -> HostReport:
        self.failures += 1
        return HostReport(self.host.name, None, why, self.failures,
                          time.monotonic() + retry_after(self.failures))

    # -- a discovered host ------------------------------------------------------------------
    def _discovered(self) -> tuple[list[HostSession], list[str]]:
        listing = discover(self.host.discover, self.host.address)
        notes = list(listing.problems)
        found: list[HostSession] = []
        listed = {item.session_id for item in listing.sessions}
        self._known = {key: value for key, value in self._known.items() if key in listed}
        # a session with no door has nothing to watch from another machine
        doors = [item for item in listing.sessions if item.url is not None]
        checked = self._check_all([(item.session_id, str(item.url)) for item in doors])
        for item, (token, problem) in zip(doors, checked, strict=True):
            if problem is not None:
                notes.append(f"{item.session_id}: {problem}")
                continue
            found.append(HostSession(item.session_id, str(item.url), item.name, item.capsule,
                                     item.version, token))
        return found, notes

    def _check_all(self, doors: list[tuple[str, str]]) -> list[tuple[str | None, str | None]]:
        """`_checked` for every (session, url), those not known yet at once on a few threads
        (a card each, and a token command's run): a host's fifty new sessions take about as
        long as its slowest, not as all of them one after another. (token, problem) each."""
        def check(door: tuple[str, str]) -> tuple[str | None, str | None]:
            try:
                return self._checked(*door), None
            except MurmurTuiError as exc:
                return None, exc.text

        new = sum(1 for session_id, url in doors if self._known.get(session_id, ("",))[0] != url)
        if new <= 1:
            return [check(door) for door in doors]
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(min(CHECKS_AT_ONCE, new), thread_name_prefix="host check") \
                as pool:
            return list(pool.map(check, doors))

    def _checked(self, session_id: str, url: str) -> str | None:
        """The token for a listed session's door, once its public card was found to name no
        other session (checked once per session and door)."""
        known = self._known.get(session_id)
        if known is not None and known[0] == url:
            return known[1]
        card = self._card(url, None)
        if card.session_id is not None and card.session_id != session_id:
            raise MurmurTuiError(f"the door at {url} serves session {card.session_id}, not "
                                 "the one listed there: not watched, no token sent")
        token = self.host.token.read(session_id)
        self._known[session_id] = (url, token)
        return token

    # -- a host of doors --------------------------------------------------------------------
    def _doors(self) -> tuple[list[HostSession], list[str]]:
        found: list[HostSession] = []
        notes: list[str] = []
        for url in self.host.doors:
            try:
                found.append(self._door(url))
            except MurmurTuiError as exc:
                notes.append(exc.text)
        if not found and notes:
            raise MurmurTuiError("no door answers: " + said(notes))
        return found, notes

    def _door(self, url: str) -> HostSession:
        card = self._card(url, None)
        session_id = card.session_id
        known = self._known.get(url)
        if session_id is not None:  # a public door names its session: its token, if any
            token = known[1] if known is not None and known[0] == session_id else \
                self.host.token.read(session_id)
        else:  # an authenticated door names it only to a token (its extended card)
            token = known[1] if known is not None else None
            if token is None:
                token = self.host.token.read(None)
            try:
                session_id = self._card(url, token).session_id
            except MurmurTuiError:
                if known is None:
                    raise
                token = self.host.token.read(None)  # the token may have changed: once more
                session_id = self._card(url, token).session_id
            if session_id is None:
                raise MurmurTuiError(f"the door at {url} names no session, even to its token")
        self._known[url] = (session_id, token)
        return HostSession(session_id, url, capsule=card.name, version=card.version, token=token)

    def _card(self, url: str, token: str | None) -> Card:
        from tui.core.a2a.client import DoorClient

        door = DoorClient(url, token, timeout=self.card_timeout)
        try:
            return door.card()
        finally:
            door.close()

"""The fleet's hosts beyond this machine (docs/fleet.md, "Hosts"): those `fleet.yaml` lists,
then those `fleet --host` adds, each looked at by a HostWatcher on its own thread
(tui/core/hosts/watch.py) whose reports the app takes here, on its own thread:

- a host that answers is `ok`; each session it lists becomes a row (`FleetSession.host`),
  watched over a `Link` with the token its host gave, as this machine's are; a session it no
  longer lists is *gone* (its watcher closed), or stays *ended* when its end came first;
- a host that cannot be reached is `unreachable`, with why and when it is tried again; its
  rows leave the list (the host's one row says why) and come back when it answers again.

A session already shown (this machine's, or another host's) stays under the host that found it
first.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from queue import Empty, SimpleQueue
from typing import TYPE_CHECKING

from tui.app.fleet.links import Link
from tui.app.fleet.model import FleetSession
from tui.core import names
from tui.core.hosts.config import HostConfig, load_hosts
from tui.core.hosts.status import LOCAL, HostState, HostStatus
from tui.core.hosts.watch import HostReport, HostSession, HostWatcher
from tui.core.text.printable import printable

if TYPE_CHECKING:
    from tui.app.fleet.owner import FleetOwner


READ_ONLY = ("Other hosts are not shown on the read-only link: the tokens their hosts give "
             "would let it answer and send, not only watch.")


class FleetHosts:
    def __init__(self, app: FleetOwner, given: Sequence[HostConfig] = ()) -> None:
        """`given`: the `--host` ones, after fleet.yaml's (a name fleet.yaml has is refused)."""
        self.app = app
        loaded = load_hosts(app.home)
        self.problems = list(loaded.problems)
        self.configs = list(loaded.hosts)
        for host in given:
            if any(config.name == host.name for config in self.configs):
                self.problems.append(f"--host {printable(host.name)}: a host of this name is "
                                     "listed in fleet.yaml; the --host one is not shown")
                continue
            self.configs.append(host)
        if app.credential != "operator" and self.configs:  # the read-only link (tui/web)
            self.problems.append(READ_ONLY)
            self.configs = []
        self.reports: SimpleQueue[HostReport] = SimpleQueue()
        self.watchers: list[HostWatcher] = []
        self.starting: list[Link] = []  # watchers of rows just made, not started yet
        app.hosts[LOCAL] = HostStatus(LOCAL, state="ok")
        for config in self.configs:
            app.hosts[config.name] = HostStatus(config.name, config.where)

    def start(self) -> None:
        for config in self.configs:
            watcher = HostWatcher(config, self.reports.put)
            self.watchers.append(watcher)
            watcher.start()

    def close(self) -> None:
        for watcher in self.watchers:
            watcher.close()

    def start_links(self) -> None:
        """The watchers of the rows the last reports made: a host's fifty new links starting
        at once (a thread, a card and a stream each) would hold the screen's loop back from
        drawing the rows they belong to, so the rows are drawn first."""
        starting, self.starting = self.starting, []
        for link in starting:
            if self.app.links.get(link.session_id) is link:  # not given up meanwhile
                link.start()

    def take_reports(self) -> None:
        while True:
            try:
                report = self.reports.get_nowait()
            except Empty:
                return
            self.take(report)

    def take(self, report: HostReport) -> None:
        status = self.app.hosts.get(report.name)
        if status is None:
            return
        now = time.monotonic()
        state: HostState = "ok" if report.found is not None else "unreachable"
        if state != status.state:
            status.since = now
            if state == "unreachable":
                self.app.notify(f"{status.label} cannot be reached: {report.why}",
                                severity="warning", timeout=8)
            elif status.state == "unreachable":
                self.app.notify(f"{status.label} answers again.", timeout=5)
        status.state, status.why = state, report.why
        status.failures, status.retry_at = report.failures, report.retry_at
        if report.found is None:
            self._leave(report.name, lambda _session: True)
        else:
            listed = {found.session_id for found in report.found}
            for found in report.found:
                self._row(report.name, found)
            self._leave(report.name, lambda session: session.session_id not in listed,
                        gone=f"no longer found on {status.label}")
        self.app.changed()

    def _row(self, host: str, found: HostSession) -> None:
        app = self.app
        known = app.sessions.get(found.session_id)
        if known is not None and known.host != host:
            return  # another host (or this machine) shows it
        if known is not None and known.connection != "gone" and found.session_id in app.links:
            # its host's listing names it, else its door's card (a door URL lists no name)
            name = found.name or names.valid(app.links[found.session_id].card_name) or ""
            if name and name != known.name:
                known.name = name
            return
        session = FleetSession(found.session_id, found.url, host=host, name=found.name,
                               capsule=found.capsule, version=found.version)
        app.sessions[found.session_id] = session
        given_up = app.links.pop(found.session_id, None)  # the watcher of the row it replaces
        if given_up is not None:
            threading.Thread(target=given_up.close, name="close link", daemon=True).start()
        link = Link(app.home, found.session_id, found.url, None, app.arrived,
                    token=found.token, text=False, heartbeat=app.heartbeat)
        app.links[found.session_id] = link
        self.starting.append(link)  # started once the new rows are drawn (start_links)

    def _leave(self, host: str, which: Callable[[FleetSession], bool], gone: str = "") -> None:
        """The host's rows `which` picks: marked gone (`gone`, why) or, with no reason, taken
        off the list; their watchers closed either way. A row whose watcher gave up (gone) is
        made anew when its host lists it again."""
        for key, session in list(self.app.sessions.items()):
            if session.host != host or not which(session):
                continue
            if gone:
                if session.dead:
                    continue
                if session.exit_status is None:  # one that ended says so, not "gone"
                    session.connect("gone", gone, dead=True)
                else:
                    session.dead = True
            else:
                del self.app.sessions[key]
            link = self.app.links.pop(key, None)
            if link is not None:
                threading.Thread(target=link.close, name="close link", daemon=True).start()

"""The fleet's list when its sessions run on more than one host (no Textual here): a section per
host, in the order the hosts are listed (this machine first), each a heading that names the host
and sums it (tui/app/fleet/host_totals.py), then that host's Needs you, Working and Done — only
the groups that have a row — with its formations and delegated children as trees inside it.

A host that cannot be reached is its heading and one row saying why and when it is tried again
(`unreachable: connection refused · retry in 0:08`); one tried for the first time, `connecting…`;
one reached with nothing running, `no sessions running`. With this machine alone the list is the
one-host list of tree_rows.py, unchanged.

Sessions are numbered in the order they show, across the sections; the row the highlight starts
on is the one that has waited longest under Needs you on any host (else the first session).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from tui.app.fleet.host_totals import fitted, heading, heading_parts, host_totals
from tui.app.fleet.model import FleetSession, Group
from tui.app.fleet.tree import RosterOf, Top, build, grouped
from tui.app.fleet.tree_rows import Line, clock, first_line, lines
from tui.core.hosts.status import LOCAL, HostStatus
from tui.core.text.printable import printable

INDENT = "   "  # a host's own row sits where the group headings do


@dataclass(frozen=True)
class Drawn:
    """What the list shows: its lines; every group across the hosts (Needs you's order is the
    longest-waiting first, whatever its host); the key the highlight starts on; and the
    sessions listed (an unreachable host's are not)."""

    lines: list[Line]
    groups: list[tuple[Group, list[Top]]]
    first: str | None
    sessions: list[FleetSession]


def many_hosts(sessions: Sequence[FleetSession], hosts: Sequence[HostStatus]) -> bool:
    """Whether the list is in sections: a host other than this machine is listed, or a session
    runs on one."""
    return any(host.name != LOCAL for host in hosts) or \
        any(session.host != LOCAL for session in sessions)


def sections_of(sessions: Sequence[FleetSession],
                hosts: Sequence[HostStatus]) -> list[HostStatus]:
    """The hosts in listed order; a host a session names that is not listed comes after them
    (this machine before them, when it has sessions)."""
    order = list(hosts)
    named = {host.name for host in order}
    for session in sessions:
        if session.host not in named:
            named.add(session.host)
            found = HostStatus(session.host, state="ok")
            if session.host == LOCAL:
                order.insert(0, found)
            else:
                order.append(found)
    return order


def draw(sessions: Sequence[FleetSession], hosts: Sequence[HostStatus],
         roster: RosterOf | None, opened: Collection[str], now: float, wall: float,
         width: int | None = None) -> Drawn:
    """The list: in one piece for this machine alone, else a section per host (module
    docstring); `width`: the headings are fitted to it."""
    if not many_hosts(sessions, hosts):
        groups = grouped(build(sessions, roster))
        shown = lines(groups, opened, now, wall)
        return Drawn(shown, groups, _first(shown, groups), list(sessions))
    out: list[Line] = []
    tops: list[Top] = []
    listed: list[FleetSession] = []
    order = sections_of(sessions, hosts)
    sums = {host.name: host_totals([s for s in sessions if s.host == host.name], now)
            for host in order if host.state != "unreachable"}
    # every heading says the same parts, as far as the widest of them can
    least = max((fitted(heading_parts(printable(host.label), sums[host.name]), width)[1]
                 for host in order if host.name in sums), default=0)
    for host in order:
        mine = [session for session in sessions if session.host == host.name]
        label = printable(host.label)
        if host.state == "unreachable":
            out.append(_heading(host, f"▪ {label}" + (f" · {printable(host.where)}"
                                                       if host.where else "")))
            out.append(Line(f"hostwhy:{host.name}", [INDENT + unreachable(host, now)], "red",
                            span=True, detail=unreachable(host, now)))
            continue
        listed += mine
        totals = sums[host.name]
        out.append(_heading(host, heading(label, totals, width, least),
                            heading(label, totals, None)))
        if not mine:
            said = "connecting…" if host.state == "connecting" else "no sessions running"
            out.append(Line(f"hostwhy:{host.name}", [INDENT + said], "", span=True,
                            detail=f"{label}: {said}"))
            continue
        placed = build(mine, roster)
        tops += placed
        numbered = sum(line.session is not None for line in out)
        out += lines([(group, members) for group, members in grouped(placed) if members],
                     opened, now, wall, numbered=numbered, host=host.name)
    groups = grouped(tops)
    return Drawn(out, groups, _first(out, groups), listed)


def _heading(host: HostStatus, text: str, whole: str = "") -> Line:
    where = f" · {printable(host.where)}" if host.where else ""
    return Line(f"host:{host.name}", [text], "bold", span=True,
                detail=f"{printable(host.label)}{where} · {host.state}\n{whole or text}")


def unreachable(host: HostStatus, now: float) -> str:
    """`unreachable: connection refused · retry in 0:08` (`· retrying…` once it is due)."""
    why = first_line(host.why, 120)
    said = f"unreachable: {why}" if why else "unreachable"
    if host.retry_at is None:
        return said
    left = host.retry_at - now
    return f"{said} · retry in {clock(left)}" if left >= 1 else f"{said} · retrying…"


def heading_key(key: str | None) -> bool:
    """Whether the row with `key` is a heading, or a host's own row: no session is on it."""
    return key is None or key.startswith(("group:", "host:", "hostwhy:"))


def _first(shown: Sequence[Line], groups: Sequence[tuple[Group, Sequence[Top]]]) -> str | None:
    """The row the highlight starts on: the top of Needs you across every host (the one
    waiting longest), else the first session or formation shown."""
    keys = {line.key for line in shown}
    needs = next((members for group, members in groups if group == "needs"), [])
    top = next((member.key for member in needs if member.key in keys), None)
    return top or next((line.key for line in shown if not heading_key(line.key)), None)

"""The fleet as a tree (no Textual here): a formation is one entry that opens into its members,
and a delegated child hangs under the session that started it.

- A formation's members come entry first, then in call order — the order in which they were
  first called by any member (`MemberCallStarted`, the caller's clock) —, then those never
  called in roster order (`roster`: the launcher's roster when it is found, else by when each
  member started).
- An edge is a member's outstanding `call-member` call: whom it waits on, since when. A caller
  whose events are not read (a headless entry serves no door) is known by its callee: the task
  the callee runs names the member that sent it (`TaskStarted.caller_member`), since it started.
- The member that blocks the formation: the deepest member (counted from the entry along the
  edges) with a question open; with none, the one member where every wait ends — waited on,
  directly or through others, and waiting on no one itself (two such ends: none is marked).
  The formation is under *Needs you* when that member has a question, *Working* when one of
  its members works, *Done* otherwise.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tui.app.fleet.model import GROUPS, FleetSession, Group

if TYPE_CHECKING:
    from tui.core.running.records import RunningRecord

RosterOf = Callable[[str], Sequence[str] | None]


def record_membership(record: RunningRecord) -> dict[str, Any]:
    """A session's place as its running record gives it: FleetSession's keyword arguments."""
    member, entry = record.kept.get("formation_member"), record.kept.get("formation_entry")
    spawner = record.kept.get("spawned_by")
    return {"formation_id": record.formation_id,
            "member": member if isinstance(member, str) else "",
            "entry": entry is True, "spawned_by": spawner if isinstance(spawner, str) else None,
            "started_at": record.started_at}


@dataclass
class Node:
    """A session and the children it delegated to."""

    session: FleetSession
    children: list[Node] = field(default_factory=list)

    @property
    def key(self) -> str:
        return self.session.session_id

    def walk(self) -> Iterable[FleetSession]:
        yield self.session
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class Edge:
    callee: str  # the member waited on
    since: float  # Unix seconds


@dataclass
class FormationTree:
    formation_id: str
    members: list[Node]  # entry first, then call order, then roster order
    edges: dict[str, list[Edge]]  # session id → its outstanding calls
    blocker: FleetSession | None

    @property
    def key(self) -> str:
        return f"frm:{self.formation_id}"

    @property
    def entry(self) -> FleetSession:
        return next((n.session for n in self.members if n.session.entry),
                    self.members[0].session)

    def sessions(self) -> list[FleetSession]:
        return [session for node in self.members for session in node.walk()]

    @property
    def group(self) -> Group:
        if self.blocker is not None and self.blocker.question is not None:
            return "needs"
        groups = {s.group for s in self.sessions()}
        return "needs" if "needs" in groups else "working" if "working" in groups else "done"

    @property
    def since(self) -> float:
        if self.group == "needs" and self.blocker is not None and \
                self.blocker.group == "needs":
            return self.blocker.since
        group = self.group
        return min((s.since for s in self.sessions() if s.group == group),
                   default=min(s.since for s in self.sessions()))

    @property
    def status(self) -> str:
        """What it does, naming the member that blocks it: `reviewer asks` (`+1` when another
        asks too), `waits on reviewer`; else its members counted, `2 working · 1 gone`, or
        `idle` / `ended` when none does anything."""
        members = [node.session for node in self.members]
        blocker = self.blocker
        if blocker is not None:
            name = blocker.member or "a member"
            if blocker.question is None:
                return f"waits on {name}"
            more = sum(s.status == "asks" for s in members) - 1
            return f"{name} asks" + (f" +{more}" if more > 0 else "")
        counts = [(sum(s.status == "working" for s in members), "working"),
                  (sum(s.status == "stalled?" for s in members), "stalled?"),
                  (sum(s.connection == "gone" and s.status != "stalled?" for s in members),
                   "gone")]
        said = [f"{n} {word}" for n, word in counts if n]
        if said:
            return " · ".join(said)
        return "ended" if all(s.exit_status is not None for s in members) else "idle"


Top = Node | FormationTree


def build(sessions: Iterable[FleetSession], roster: RosterOf | None = None) -> list[Top]:
    """Every session placed: formations (their members under them), sessions on their own,
    and each delegated child under the session that started it when that one is listed."""
    listed = list(sessions)
    nodes = {s.session_id: Node(s) for s in listed}
    tops: list[Top] = []
    by_formation: dict[str, list[Node]] = {}
    for session in listed:
        node = nodes[session.session_id]
        parent = nodes.get(session.spawned_by or "")
        if parent is not None and parent is not node and not _under(parent, node, nodes):
            parent.children.append(node)
        elif session.formation_id:
            by_formation.setdefault(session.formation_id, []).append(node)
        else:
            tops.append(node)
    for formation_id, members in by_formation.items():
        order = roster(formation_id) if roster is not None else None
        tops.append(formation(formation_id, members, order))
    return tops


def _under(parent: Node, child: Node, nodes: Mapping[str, Node]) -> bool:
    """Whether `parent` is (through `spawned_by`) a child of `child`: a loop is not a tree."""
    seen: set[str] = set()
    at: FleetSession | None = parent.session
    while at is not None and at.session_id not in seen:
        if at.session_id == child.key:
            return True
        seen.add(at.session_id)
        found = nodes.get(at.spawned_by or "")
        at = found.session if found is not None else None
    return False


def formation(formation_id: str, members: list[Node],
              roster: Sequence[str] | None = None) -> FormationTree:
    by_name = {node.session.member: node.session for node in members if node.session.member}
    first: dict[str, float] = {}
    for node in members:
        for callee, when in node.session.first_called.items():
            first[callee] = min(when, first.get(callee, when))
    place = {name: index for index, name in enumerate(roster or ())}

    def order(node: Node) -> tuple[int, float, int, str, str]:
        s = node.session
        if s.entry:
            return (0, 0.0, 0, "", s.session_id)
        if s.member in first:
            return (1, first[s.member], 0, "", s.session_id)
        return (2, 0.0, place.get(s.member, len(place)), s.started_at or s.member, s.session_id)

    edges = {node.key: [Edge(call.member, call.started) for call in
                        sorted(node.session.calls.values(), key=lambda c: c.started)]
             for node in members if node.session.calls}
    for node in members:  # a caller whose own events are not read (no door): its callee's word
        caller = by_name.get(node.session.sent_by[0]) if node.session.sent_by else None
        if caller is not None and node.session.sent_by is not None and \
                node.session.member not in {e.callee for e in edges.get(caller.session_id, [])}:
            edges.setdefault(caller.session_id, []).append(Edge(node.session.member,
                                                                node.session.sent_by[1]))
        sent = node.session.first_sent
        if sent is not None and node.session.member:  # called once: it keeps its place
            first[node.session.member] = min(sent, first.get(node.session.member, sent))
    members.sort(key=order)
    return FormationTree(formation_id, members, edges, blocker([n.session for n in members],
                                                           edges, by_name))


def blocker(members: Sequence[FleetSession], edges: Mapping[str, list[Edge]],
            by_name: Mapping[str, FleetSession]) -> FleetSession | None:
    """The member that blocks: the deepest with a question, else the one all waiting members
    wait on (module docstring)."""
    if not members:
        return None
    waits = {s.session_id: [by_name[e.callee] for e in edges.get(s.session_id, ())
                            if e.callee in by_name] for s in members}
    entry = next((s for s in members if s.entry), members[0])
    depth = {entry.session_id: 0}
    frontier = [entry]
    while frontier:  # breadth first along the edges, from the entry
        later = []
        for session in frontier:
            for callee in waits[session.session_id]:
                if callee.session_id not in depth:
                    depth[callee.session_id] = depth[session.session_id] + 1
                    later.append(callee)
        frontier = later
    asking = [s for s in members if answerable(s)]
    if asking:
        return max(asking, key=lambda s: (depth.get(s.session_id, -1),
                                          -s.question.asked_at if s.question else 0.0))
    waiting = [s for s in members if waits[s.session_id]]
    if not waiting:
        return None
    reached = set.union(*(_reach(s, waits) for s in waiting))
    # where every wait ends: one member, and it waits on no one — all others wait on it
    sinks = [s for s in members if s.session_id in reached and not waits[s.session_id]]
    return sinks[0] if len(sinks) == 1 else None


def _reach(start: FleetSession, waits: Mapping[str, list[FleetSession]]) -> set[str]:
    seen: set[str] = set()
    stack = list(waits[start.session_id])
    while stack:
        session = stack.pop()
        if session.session_id not in seen:
            seen.add(session.session_id)
            stack.extend(waits.get(session.session_id, ()))
    return seen


def grouped(tops: Sequence[Top]) -> list[tuple[Group, list[Top]]]:
    """The groups in screen order, each sorted by how long its entries have waited."""
    out: list[tuple[Group, list[Top]]] = []
    for group, _ in GROUPS:
        members = [top for top in tops if top_group(top) == group]
        members.sort(key=lambda top: (top_since(top), top.key))
        out.append((group, members))
    return out


def top_group(top: Top) -> Group:
    """A formation's group, or a session's — `needs` when a child it delegated to asks."""
    if isinstance(top, FormationTree):
        return top.group
    groups = {s.group for s in top.walk()}
    return "needs" if "needs" in groups else top.session.group


def top_since(top: Top) -> float:
    if isinstance(top, FormationTree):
        return top.since
    group = top_group(top)
    return min((s.since for s in top.walk() if s.group == group), default=top.session.since)


def asking(top: Top) -> list[FleetSession]:
    """The sessions of `top` whose question waits: a formation's blocking member first."""
    if isinstance(top, FormationTree):
        found = [s for s in top.sessions() if answerable(s)]
        found.sort(key=lambda s: s is not top.blocker)
        return found
    return [s for s in top.walk() if answerable(s)]


def answerable(session: FleetSession) -> bool:
    """Its question waits, and its process is there to take an answer."""
    return session.question is not None and session.group == "needs" and not session.dead

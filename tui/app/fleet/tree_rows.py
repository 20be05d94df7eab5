"""The fleet's tree as the lines of its list (no Textual here): a heading per group, a row per
session or formation, a formation's members under it once it is opened, and each delegated
child under the session that started it.

A formation's row: `▸ frm_…` (`▾` opened), its entry member's capsule, what it does naming the
member that blocks it (`reviewer asks`, `waits on reviewer`, else `2 working`), how long it has
waited, its tokens, and `3 members · ? the question` (or the entry's task).
A member's row is a session's row, named by the member (`├ coder`); its status says when it
blocks the formation (`◆ blocks · asks`) and whom it waits on, for how long (`⇢ reviewer ·
0:12`, its outstanding `call-member` calls).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from tui.app.fleet.model import GROUPS, FleetSession, Group, age
from tui.app.fleet.tree import Edge, FormationTree, Node, Top, top_group
from tui.core.text.printable import printable

GROUP_TITLES = dict(GROUPS)
BLOCKS = "◆ blocks"


@dataclass(frozen=True)
class Line:
    key: str
    cells: list[str]
    style: str = ""
    session: FleetSession | None = None  # the session on this row (None: a heading, a formation)
    formation: FormationTree | None = None  # the formation on this row
    span: bool = False  # one text over the whole row (a host's heading), not in columns
    detail: str = ""  # a heading's whole say, for the line under the list


def first_line(text: str, limit: int = 200) -> str:
    line = printable(text.strip().splitlines()[0] if text.strip() else "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def short_id(session_id: str, width: int = 14) -> str:
    """`ses_…4d28f58b`: the end of an id is what `attach` and `ps` take (4+ characters)."""
    keep = max(4, width - 5)
    return session_id if len(session_id) <= width else f"{session_id[:4]}…{session_id[-keep:]}"


def clock(seconds: float) -> str:
    """`0:12`, `3:05`, `1:02:03`: how long a call has been waited on."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def lines(groups: Sequence[tuple[Group, Sequence[Top]]], opened: Collection[str], now: float,
          wall: float, *, numbered: int = 0, host: str | None = None) -> list[Line]:
    """Every line of the list: `now` is the monotonic clock (how long in a group), `wall` Unix
    time (how long a call has waited). Sessions are numbered in the order they show, after the
    `numbered` sessions of the lines above; `host`: the host whose section these lines are
    (its group headings are its own)."""
    out: list[Line] = []
    numbers: list[int] = [numbered]
    suffix = f"@{host}" if host is not None else ""

    def session(s: FleetSession, label: str, status: str = "", what: str = "") -> None:
        numbers[0] += 1
        out.append(session_line(numbers[0], s, label, now, status, what))

    def children(node: Node, depth: int) -> None:
        for child in node.children:
            session(child.session, "  " * (depth - 1) + "↳ " +
                    (printable(child.session.name) or short_id(child.key, 12 - 2 * (depth - 1))))
            children(child, depth + 1)

    for group, tops in groups:
        out.append(Line(f"group:{group}{suffix}", [
            "", f"{GROUP_TITLES[group]} ({len(tops)})", "", "", "", "", ""], "bold"))
        for top in tops:
            if isinstance(top, Node):
                session(top.session, printable(top.session.name) or short_id(top.key))
                children(top, 1)
                continue
            is_open = top.key in opened
            out.append(formation_line(top, is_open, now))
            if not is_open:
                continue
            for index, node in enumerate(top.members):
                last = index == len(top.members) - 1
                name = printable(node.session.member) or short_id(node.key, 12)
                session(node.session, ("└ " if last else "├ ") + name,
                        *member_marks(node.session is top.blocker,
                                      top.edges.get(node.key, []), wall))
                children(node, 2)
    return out


def member_marks(blocks: bool, edges: Sequence[Edge], wall: float) -> tuple[str, str]:
    """A member's status when it blocks (`◆ blocks · asks`) or waits on others (`⇢ coder ·
    0:12`, `⇢ coder +1 · 0:12`: the call waited on longest), and every edge before its task
    when it waits on more than one ("" when the session's own status says it all)."""
    said = [f"⇢ {printable(edge.callee)} · {clock(wall - edge.since)}" for edge in edges]
    if blocks:
        return BLOCKS, "  ".join(said)
    if not edges:
        return "", ""
    more = f" +{len(edges) - 1}" if len(edges) > 1 else ""
    return (f"⇢ {printable(edges[0].callee)}{more} · {clock(wall - edges[0].since)}",
            "  ".join(said) if more else "")


def alarm_cell(session: FleetSession, now: float) -> str | None:
    """The status of a row under Needs you for a stall or a death, with how long: `stalled?
    · 1:02` (since its door was last heard), `gone · 0:15` (since its death was seen); None
    for any other row (docs/fleet.md, "Stalls and deaths")."""
    if session.group != "needs":
        return None
    if session.lost:
        return f"gone · {clock(now - session.since)}"
    if session.stalled and session.heard is not None:
        return f"stalled? · {clock(now - session.heard)}"
    return None


def session_line(number: int, session: FleetSession, label: str, now: float,
                 status: str = "", marks: str = "") -> Line:
    if session.question is not None:
        again = "(asked before the restart) " if session.question.before_restart else ""
        what = f"? {again}{first_line(session.question.prompt)}"
        style = "red" if session.connection == "gone" else "yellow"
    elif session.stalled and session.group == "needs":
        what, style = first_line(session.task), "yellow"
    else:
        what = first_line(session.task)
        style = "cyan" if session.group == "working" else (
            "red" if session.connection == "gone" or session.exit_status not in
            (None, "ok") else "")
    if session.sending:
        what = f"[{session.sending}]  {what}"
    if marks:
        what = f"{marks}  {what}"
    if session.delegations:
        what += f"  → asked {', '.join(session.delegations[-2:])}"
    alarm = alarm_cell(session, now)
    return Line(session.session_id, [
        str(number) if number < 10 else "", label,
        printable(session.capsule) + (" ·new" if session.origin == "launched" else ""),
        f"{status} · {alarm or session.status}" if status == BLOCKS else
        alarm or status or session.status,
        age(now - session.since),
        f"{session.tokens_in + session.tokens_out:,}" if session.tokens_known else "–", what],
        style, session=session)


def formation_line(top: FormationTree, is_open: bool, now: float) -> Line:
    members = [node.session for node in top.members]
    count = f"{len(members)} member{'s' if len(members) != 1 else ''}"
    blocker = top.blocker
    if blocker is not None and blocker.question is not None:
        what = f"{count} · ? {first_line(blocker.question.prompt)}"
    else:
        what = f"{count} · {first_line(top.entry.task)}" if top.entry.task else count
    group = top_group(top)
    sessions = top.sessions()
    style = {"needs": "yellow", "working": "cyan"}.get(group, "")
    return Line(top.key, [
        "", ("▾ " if is_open else "▸ ") + short_id(top.formation_id, 12),
        printable(top.entry.capsule), top.status, age(now - top.since),
        f"{sum(s.tokens_in + s.tokens_out for s in sessions):,}", what], style,
        formation=top)

"""The fleet's sums, per host and in all (no Textual here): sessions, tokens in and out, their
cost (the price table, tui/core/cost), tasks run and running, questions waiting and how long the
longest has waited — and the line that says them, fitted to a width.

A line is made of parts, each with a long and a short form, and a priority. When the whole line
does not fit, the parts least needed first take their short form, then are left out, one at a
time, until it fits: a host's name and its questions waiting are the last to go.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len

from tui.app.fleet.model import FleetSession
from tui.app.fleet.tree_rows import clock
from tui.core.cost import Spend

SEPARATOR = " · "


@dataclass(frozen=True)
class HostTotals:
    sessions: int
    needs: int  # sessions under Needs you: a question of theirs waits
    working: int
    tokens_in: int
    tokens_out: int
    tool_calls: int
    cost: str  # `$0.0123`; "" when a session called a model that has no price
    tasks: int  # tasks started, ended ones included
    running: int  # tasks running now (one waiting on its question too)
    longest: float | None  # seconds the longest-waiting question has waited; None: none waits

    @property
    def questions(self) -> int:
        return self.needs


def host_totals(sessions: Iterable[FleetSession], now: float) -> HostTotals:
    """The sums of `sessions` at `now` (the monotonic clock questions are stamped with)."""
    listed = list(sessions)
    spend = Spend()
    for session in listed:
        spend += session.ledger.session
    asked = [now - s.question.asked_at for s in listed
             if s.group == "needs" and s.question is not None]
    return HostTotals(
        sessions=len(listed), needs=sum(s.group == "needs" for s in listed),
        working=sum(s.group == "working" for s in listed),
        tokens_in=sum(s.tokens_in for s in listed), tokens_out=sum(s.tokens_out for s in listed),
        tool_calls=sum(s.tool_calls for s in listed), cost=spend.cost,
        tasks=sum(len(s.started_tasks) for s in listed),
        running=sum(s.in_task and s.group != "done" for s in listed),
        longest=max(asked) if asked else None)


def compact(count: int) -> str:
    """`950`, `12.3k`, `4.5M`: a count in a few cells."""
    if count < 1000:
        return str(count)
    if count < 1_000_000:
        return f"{count / 1000:.1f}k".replace(".0k", "k")
    return f"{count / 1_000_000:.1f}M".replace(".0M", "M")


@dataclass(frozen=True)
class Part:
    long: str
    short: str
    rank: int  # 0 is kept longest; the highest rank goes first


def fit(parts: Sequence[Part], width: int | None) -> str:
    """The parts joined by ` · `, in their order, fitted into `width` cells (None: all of
    them, long): the highest ranks take their short form first, then are left out."""
    shown: list[str | None] = [part.long for part in parts]

    def text() -> str:
        return SEPARATOR.join(item for item in shown if item)

    if width is None or cell_len(text()) <= width:
        return text()
    order = sorted(range(len(parts)), key=lambda i: -parts[i].rank)
    for index in order:
        shown[index] = parts[index].short
        if cell_len(text()) <= width:
            return text()
    for index in order[:-1]:  # the first part (its name) stays, cut if it must be
        shown[index] = None
        if cell_len(text()) <= width:
            return text()
    return text()


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def waiting(totals: HostTotals) -> Part | None:
    if not totals.needs:
        return None
    longest = clock(totals.longest) if totals.longest is not None else ""
    said = f"{plural(totals.needs, 'question')} waiting"
    return Part(f"{said}, longest {longest}" if longest else said,
                f"{totals.needs} ? {longest}".rstrip(), 1)


def tokens(totals: HostTotals, word: str = "tokens ") -> Part:
    return Part(f"{word}{totals.tokens_in:,} in / {totals.tokens_out:,} out",
                f"{compact(totals.tokens_in + totals.tokens_out)} tokens", 3)


def tasks(totals: HostTotals) -> Part:
    return Part(f"tasks {totals.tasks:,} ({totals.running:,} running)",
                f"{totals.running}/{totals.tasks} tasks", 5)


def heading(label: str, totals: HostTotals, width: int | None) -> str:
    """A host's heading: `▪ build-3 · 4 sessions · 1 question waiting, longest 0:41 · tasks 5
    (2 running) · tokens 12,345 in / 3,210 out · $0.0412`, fitted to `width`."""
    parts = [Part(f"▪ {label}", f"▪ {label}", 0), Part(plural(totals.sessions, "session"),
                                                         f"{totals.sessions} ses.", 2)]
    asks = waiting(totals)
    if asks is not None:
        parts.append(asks)
    parts += [tasks(totals), tokens(totals)]
    if totals.cost:
        parts.append(Part(totals.cost, totals.cost, 4))
    return fit(parts, width)


def fleet_line(totals: HostTotals, width: int | None = None) -> str:
    """The line over the list: `3 sessions · 1 need you, longest 0:41 · 1 working · tasks 4
    (2 running) · tokens 1,234 in / 567 out · $0.0123 · 7 tool calls`, fitted to `width`."""
    need = f"{totals.needs:,} need you"
    waited = clock(totals.longest) if totals.longest is not None else ""
    parts = [Part(plural(totals.sessions, "session"), plural(totals.sessions, "session"), 0),
             Part(f"{need}, longest {waited}" if waited else need,
                  f"{totals.needs} ? {waited}" if waited else need, 1),
             Part(f"{totals.working:,} working", f"{totals.working} working", 2),
             tasks(totals), tokens(totals)]
    if totals.cost:
        parts.append(Part(totals.cost, totals.cost, 4))
    parts.append(Part(f"{totals.tool_calls:,} tool calls", f"{totals.tool_calls} calls", 6))
    return fit(parts, width)

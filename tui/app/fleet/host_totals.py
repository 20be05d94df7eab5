"""The fleet's sums, per host and in all (no Textual here): sessions, tokens in and out, their
cost (the price table, tui/core/cost), tasks run and running, questions waiting and how long the
longest has waited — and the line that says them, fitted to a width.

A line is made of parts, each with a long and a short form, and a priority. When the whole line
does not fit, the parts least needed first take their short form, then are left out, one at a
time, until it fits: a host's name and its questions waiting are shortened and left out last.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.cells import cell_len

from tui.app.fleet.model import FleetSession, spent
from tui.app.fleet.tree import answerable
from tui.app.fleet.tree_rows import clock

SEPARATOR = " · "
VITAL = 1  # parts of this rank and under are shortened and left out last
MAX_RANK = 9


@dataclass(frozen=True)
class HostTotals:
    sessions: int
    needs: int  # sessions whose question waits for an answer (one that can still be given)
    working: int
    tokens_in: int
    tokens_out: int
    tool_calls: int
    cost: str  # `$0.0123`; "" when a session called a model that has no price
    tasks: int  # tasks started, ended ones included
    running: int  # tasks running now (one waiting on its question too)
    longest: float | None  # seconds the longest-waiting question has waited; None: none waits
    attention: int = 0  # sessions under Needs you: a question, a stall, a death

    @property
    def questions(self) -> int:
        return self.needs


def host_totals(sessions: Iterable[FleetSession], now: float) -> HostTotals:
    """The sums of `sessions` at `now` (the monotonic clock questions are stamped with)."""
    listed = list(sessions)
    waiting = [s for s in listed
               if s.group == "needs" and s.question is not None and answerable(s)]
    asked = [now - s.question.asked_at for s in waiting if s.question is not None]
    return HostTotals(
        sessions=len(listed), needs=len(waiting),
        attention=sum(s.group == "needs" for s in listed),
        working=sum(s.group == "working" for s in listed),
        tokens_in=sum(s.tokens_in for s in listed), tokens_out=sum(s.tokens_out for s in listed),
        tool_calls=sum(s.tool_calls for s in listed), cost=spent(listed),
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


def _steps() -> list[tuple[int, bool]]:
    """Every step of fitting, in order: (the rank of the part it changes, True to shorten it
    or False to leave it out)."""
    others, vital = range(MAX_RANK, VITAL, -1), range(VITAL, -1, -1)
    return [*((rank, True) for rank in others), *((rank, False) for rank in others),
            *((rank, True) for rank in vital), *((rank, False) for rank in vital if rank)]


STEPS = _steps()


def fitted(parts: Sequence[Part], width: int | None, least: int = 0) -> tuple[str, int]:
    """The parts joined by ` · `, in their order, fitted into `width` cells (None: all of
    them, long), and how many steps that took (at least `least`: lines that share a look take
    the same steps). Least needed first, the parts take their short form, then are left out;
    the vital ones (rank 0 and 1: the name, the questions waiting) only once all others are
    gone, and the first part (rank 0) never (a row too narrow for it cuts it)."""
    shown: list[str | None] = [part.long for part in parts]
    at = {part.rank: index for index, part in enumerate(parts)}

    def text() -> str:
        return SEPARATOR.join(item for item in shown if item)

    taken = 0
    while taken < len(STEPS) and (taken < least or (
            width is not None and cell_len(text()) > width)):
        rank, shorten = STEPS[taken]
        index = at.get(rank)
        if index is not None:
            shown[index] = parts[index].short if shorten else None
        taken += 1
    return text(), taken


def fit(parts: Sequence[Part], width: int | None) -> str:
    """`fitted`'s line alone."""
    return fitted(parts, width)[0]


def plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def waiting(totals: HostTotals) -> Part | None:
    if not totals.needs:
        return None
    longest = clock(totals.longest) if totals.longest is not None else ""
    said = f"{plural(totals.needs, 'question')} waiting"
    if longest:  # one question: how long it has waited; more: the longest wait
        said += f" {longest}" if totals.needs == 1 else f", longest {longest}"
    return Part(said,
                f"{totals.needs} ? {longest}".rstrip(), 1)


def tokens(totals: HostTotals, word: str = "tokens ") -> Part:
    return Part(f"{word}{totals.tokens_in:,} in / {totals.tokens_out:,} out",
                f"{compact(totals.tokens_in + totals.tokens_out)} tokens", 3)


def tasks(totals: HostTotals) -> Part:
    return Part(f"tasks {totals.tasks:,} ({totals.running:,} running)",
                plural(totals.tasks, "task"), 5)


def heading_parts(label: str, totals: HostTotals) -> list[Part]:
    """A host's heading: `▪ build-3 · 4 sessions · 2 questions waiting, longest 0:41 · tasks
    5 (2 running) · tokens 12,345 in / 3,210 out · $0.0412` (no questions when none waits,
    no cost when a model has no price)."""
    sessions = plural(totals.sessions, "session")
    parts = [Part(f"▪ {label}", f"▪ {label}", 0), Part(sessions, sessions, 2)]
    asks = waiting(totals)
    if asks is not None:
        parts.append(asks)
    parts += [tasks(totals), tokens(totals)]
    if totals.cost:
        parts.append(Part(totals.cost, totals.cost, 4))
    return parts


def heading(label: str, totals: HostTotals, width: int | None, least: int = 0) -> str:
    """A host's heading fitted to `width` (`fitted`, module docstring)."""
    return fitted(heading_parts(label, totals), width, least)[0]


def fleet_line(totals: HostTotals, width: int | None = None) -> str:
    """The line over the list: `3 sessions · 1 need you, longest 0:41 · 1 working · tasks 4
    (2 running) · tokens 1,234 in / 567 out · $0.0123 · 7 tool calls`, fitted to `width`."""
    need = f"{totals.attention:,} need you"
    waited = clock(totals.longest) if totals.longest is not None else ""
    parts = [Part(plural(totals.sessions, "session"), plural(totals.sessions, "session"), 0),
             Part(f"{need}, longest {waited}" if waited else need,
                  f"{totals.attention} ? {waited}" if waited else need, 1),
             Part(f"{totals.working:,} working", f"{totals.working} working", 2),
             tasks(totals), tokens(totals)]
    if totals.cost:
        parts.append(Part(totals.cost, totals.cost, 4))
    parts.append(Part(f"{totals.tool_calls:,} tool calls", f"{totals.tool_calls} calls", 6))
    return fit(parts, width)

"""`murmur-tui trace diff A B`: two sessions side by side, as `mur trace diff` prints them
(Murmur v0.11, spec §6.5; the table, its `(A better)`/`(B better)` marks and the "Prefix
divergence" section from `crates/murmur-cli/src/commands/trace.rs`).

The metric table compares what `trace` shows of each session (`details.load`); lower is better
for every count, token and time, higher for the tool success rate; `compaction` and `exit
status` are not compared (`—`). The prefix section compares the wire hashes the agent loop's own
turns recorded (`system_sha`, `tools_sha`, `message_shas`; a hook's completion, with an
`origin`, is not a turn): where the two runs' prompts stopped agreeing — and with them any
provider cache resting on the shared prefix. It has no better or worse. Turns are numbered
from 1, as everywhere a person reads them (`show.shown_turn`); a message's place in a request
stays Murmur's index from 0.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tui.core.text.printable import printable
from tui.core.text.secrets import redact
from tui.core.trace.details import TraceDetails
from tui.core.trace.fields import TraceLine
from tui.core.trace.reader import TraceLines
from tui.core.trace.show import fmt_dur, fmt_thousands, shown_turn
from tui.core.trace.steps import short

LABEL_WIDTH = 22
VALUE_WIDTH = 16
SHA_WIDTH = 12


@dataclass(frozen=True)
class Metrics:
    """What diff and report compare of one session."""

    session_id: str
    exit_status: str
    duration_ms: int
    turns: int
    input_tokens: int
    output_tokens: int
    tool_calls: int
    tool_ok: int
    tool_error: int
    tool_ms: list[int]
    skill_calls: int
    shell_calls: int
    shell_ms: list[int]
    shell_codes: list[int]
    redundant: int
    compaction_turn: int | None
    finished: bool

    @classmethod
    def of(cls, d: TraceDetails) -> Metrics:
        ok = sum(row.status == "ok" for row in d.tool_calls)
        return cls(
            session_id=d.summary.session_id, exit_status=d.summary.exit_status or "not ended",
            duration_ms=d.summary.duration_ms, turns=d.totals.turns,
            input_tokens=d.totals.input_tokens, output_tokens=d.totals.output_tokens,
            tool_calls=d.totals.tool_calls, tool_ok=ok, tool_error=len(d.tool_calls) - ok,
            tool_ms=[row.duration_ms for row in d.tool_calls], skill_calls=len(d.skill_calls),
            shell_calls=d.totals.shell_calls, shell_ms=[row.duration_ms for row in d.shell_calls],
            shell_codes=[row.exit_code for row in d.shell_calls], redundant=len(d.redundant),
            compaction_turn=d.compaction.turn if d.compaction is not None else None,
            finished=d.summary.finished)

    @property
    def tool_success(self) -> float | None:
        rows = self.tool_ok + self.tool_error
        return 100 * self.tool_ok / rows if rows else None

    @property
    def tool_latency(self) -> float | None:
        return sum(self.tool_ms) / len(self.tool_ms) if self.tool_ms else None

    @property
    def shell_latency(self) -> float | None:
        return sum(self.shell_ms) / len(self.shell_ms) if self.shell_ms else None

    def per_turn(self, tokens: int) -> float:
        return tokens / self.turns if self.turns else 0.0


@dataclass(frozen=True)
class WireTurn:
    """One agent-loop turn's wire hashes."""

    turn: int
    system_sha: str | None
    tools_sha: str | None
    message_shas: list[str] = field(default_factory=list)


def wire_turns(path: Path, lines: TraceLines) -> list[WireTurn]:
    """The agent loop's own turns that recorded wire hashes, in file order."""
    found: list[WireTurn] = []
    for number, value in zip(lines.numbers, lines.events, strict=True):
        if value.get("event_type") != "inference" or value.get("origin") is not None:
            continue
        line = TraceLine(path, number, value)
        turn = WireTurn(line.count("turn"), line.maybe_text("system_sha"),
                        line.maybe_text("tools_sha"), line.texts("message_shas"))
        if turn.system_sha or turn.tools_sha or line.maybe_text("response_sha") or \
                turn.message_shas:
            found.append(turn)
    return found


# -- deltas, as Murmur writes them ---------------------------------------------------------------
def _mark(diff: float, lower_is_better: bool) -> str:
    better_b = diff < 0 if lower_is_better else diff > 0
    return " (B better)" if better_b else " (A better)"


def delta_count(a: int, b: int, lower_is_better: bool = True) -> str:
    return "=" if a == b else f"{b - a:+d}{_mark(b - a, lower_is_better)}"


def delta_ms(a: int, b: int) -> str:
    if a == b:
        return "="
    return f"{'-' if b < a else '+'}{fmt_dur(abs(b - a))}{_mark(b - a, True)}"


def delta_float(a: float, b: float, lower_is_better: bool = True) -> str:
    diff = b - a
    return "=" if abs(diff) < 0.05 else f"{diff:+.1f}{_mark(diff, lower_is_better)}"


def _opt_dur(value: float | None) -> str:
    return "—" if value is None else fmt_dur(int(value))


def render_diff(a: Metrics, b: Metrics, wire_a: list[WireTurn], wire_b: list[WireTurn]) -> str:
    return redact(printable("\n".join([*_table(a, b), *_prefix(wire_a, wire_b)]) + "\n"))


def _row(label: str, va: object, vb: object, delta: str) -> str:
    return f"{label:<{LABEL_WIDTH}} {va!s:<{VALUE_WIDTH}} {vb!s:<{VALUE_WIDTH}} {delta}"


def _table(a: Metrics, b: Metrics) -> Iterator[str]:
    yield f"{'Metric':<{LABEL_WIDTH}} {'Run A':<{VALUE_WIDTH}} {'Run B':<{VALUE_WIDTH}} Delta"
    yield " ".join("─" * width for width in (LABEL_WIDTH, VALUE_WIDTH, VALUE_WIDTH, 26))
    yield _row("turns", a.turns, b.turns, delta_count(a.turns, b.turns))
    yield _row("duration", fmt_dur(a.duration_ms), fmt_dur(b.duration_ms),
               delta_ms(a.duration_ms, b.duration_ms))
    yield _row("input tokens", fmt_thousands(a.input_tokens), fmt_thousands(b.input_tokens),
               delta_count(a.input_tokens, b.input_tokens))
    yield _row("output tokens", fmt_thousands(a.output_tokens), fmt_thousands(b.output_tokens),
               delta_count(a.output_tokens, b.output_tokens))
    for label, av, bv in (("input/turn (avg)", a.per_turn(a.input_tokens),
                           b.per_turn(b.input_tokens)),
                          ("output/turn (avg)", a.per_turn(a.output_tokens),
                           b.per_turn(b.output_tokens))):
        yield _row(label, f"{av:.0f}", f"{bv:.0f}", delta_float(av, bv))
    yield _row("tool calls", a.tool_calls, b.tool_calls, delta_count(a.tool_calls, b.tool_calls))
    ra, rb = a.tool_success, b.tool_success
    yield _row("tool success rate", "—" if ra is None else f"{ra:.1f}%",
               "—" if rb is None else f"{rb:.1f}%",
               delta_float(ra, rb, False) if ra is not None and rb is not None else "—")
    la, lb = a.tool_latency, b.tool_latency
    yield _row("avg tool latency", _opt_dur(la), _opt_dur(lb),
               delta_ms(int(la), int(lb)) if la is not None and lb is not None else "—")
    yield _row("skill calls", a.skill_calls, b.skill_calls,
               delta_count(a.skill_calls, b.skill_calls))
    yield _row("shell calls", a.shell_calls, b.shell_calls,
               delta_count(a.shell_calls, b.shell_calls))
    sa, sb = a.shell_latency, b.shell_latency
    yield _row("avg shell latency", _opt_dur(sa), _opt_dur(sb),
               delta_ms(int(sa), int(sb)) if sa is not None and sb is not None else "—")
    yield _row("compaction", _compaction(a), _compaction(b), "—")
    yield _row("exit status", a.exit_status, b.exit_status, "—")


def _compaction(m: Metrics) -> str:
    return "none" if m.compaction_turn is None else f"turn {shown_turn(m.compaction_turn)}"


def _first_and_change(turns: list[WireTurn], system: bool
                      ) -> tuple[str | None, tuple[int, str] | None]:
    """A piece fixed across the session: its first value, and the first turn that changed it."""
    first: str | None = None
    changed: tuple[int, str] | None = None
    for turn in turns:
        value = turn.system_sha if system else turn.tools_sha
        if value is None:
            continue
        if first is None:
            first = value
        elif value != first and changed is None:
            changed = (turn.turn, value)
    return first, changed


def _piece(label: str, a: str | None, b: str | None) -> str:
    sha = short
    if a is not None and b is not None:
        body = f"{'identical':<10} {sha(a)}" if a == b else \
            f"{'differs':<10} A {sha(a)}  B {sha(b)}"
    elif a is not None:
        body = f"{'only in A':<10} A {sha(a)}  B not recorded"
    elif b is not None:
        body = f"{'only in B':<10} A not recorded  B {sha(b)}"
    else:
        body = f"{'not recorded':<10}"
    return f"{label:<15}{body}"


def _prefix(a: list[WireTurn], b: list[WireTurn]) -> Iterator[str]:
    yield ""
    yield "── Prefix divergence ────────────────────────────"
    if not a or not b:
        yield ("runs A and B recorded no content hashes — both ran under trace.capture: none"
               if not a and not b else
               f"run {'A' if not a else 'B'} recorded no content hashes — it ran under "
               "trace.capture: none")
        return
    sys_a, changed_a = _first_and_change(a, True)
    sys_b, changed_b = _first_and_change(b, True)
    yield _piece("system prompt:", sys_a, sys_b)
    yield _piece("tool schemas:", _first_and_change(a, False)[0], _first_and_change(b, False)[0])
    for run, changed in (("A", changed_a), ("B", changed_b)):
        if changed is not None:
            yield (f"note:          run {run} changes its system prompt at turn "
                   f"{shown_turn(changed[0])} ({short(changed[1])})")
    for number in sorted({turn.turn for turn in a} | {turn.turn for turn in b}):
        in_a = next((turn for turn in a if turn.turn == number), None)
        in_b = next((turn for turn in b if turn.turn == number), None)
        if in_a is None or in_b is None:
            yield f"turn {shown_turn(number)}:  only in run {'A' if in_b is None else 'B'}"
            continue
        ma, mb = in_a.message_shas, in_b.message_shas
        at = next((i for i, (x, y) in enumerate(zip(ma, mb, strict=False)) if x != y), None)
        if at is not None:
            said = f"diverges at message {at}  A {short(ma[at])}  B {short(mb[at])}"
        elif len(ma) == len(mb):
            said = f"identical  ({len(ma)} message{'s' if len(ma) != 1 else ''})"
        else:
            said = (f"diverges at message {min(len(ma), len(mb))}  (A has {len(ma)} messages, "
                    f"B has {len(mb)})")
        yield f"turn {shown_turn(number)}:  {said}"

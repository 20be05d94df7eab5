"""The transcript's model written out without a screen: as plain lines (`text_lines`: what
the screen shows, line for line in words — the session, each task's header and text, its turn
headers, the answer, a line per call and question, the task's end — for tests and for holding
two transcripts side by side) and as Markdown (`markdown`, `write_markdown`: the export,
`e` on the supervisor screen). No Textual or Rich here."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from tui.app.models.transcript import TaskBlock, TranscriptModel, TurnModel
from tui.core.fs.private_files import write_private


def session_line(model: TranscriptModel) -> str:
    """The transcript's top line: the session, where it went on from, how many tasks (the
    screen's header names its capsule and model)."""
    session = model.session
    count = model.block.number if model.block is not None else 0
    tasks = f"{count} task{'s' if count != 1 else ''}"
    if not session.session_id:
        return f"Session · {tasks}"
    parts = [f"Session {session.session_id}"]
    if session.resumed_from:
        parts.append(f"goes on from {session.resumed_from}")
    if session.sessions > 1:
        parts.append(f"{session.sessions - 1} follow-up session"
                     f"{'s' if session.sessions > 2 else ''}")
    ended = [session.formation_ended] if session.formation_ended else []
    return " · ".join([*parts, tasks, *ended])


def text_lines(model: TranscriptModel, now_ms: int | None = None) -> Iterator[str]:
    """Every block and turn the model keeps, as lines of text (no thinking: the screen can
    hide it). With `now_ms` (Unix ms) a running call says how long it has run."""
    yield session_line(model)
    seen: set[int] = set()
    for item in model.everything():
        if isinstance(item, TurnModel):
            yield f"turn {item.number}"
            yield from item.text.splitlines()
            for _kind, text in item.entries(now_ms):
                yield from text.splitlines()
        elif item.number not in seen:
            seen.add(item.number)
            yield item.header
            if item.note:
                yield item.note
            yield from item.text.splitlines()
        elif item.result is not None:
            yield item.result.title
            yield from item.result.body.splitlines()


def markdown(model: TranscriptModel) -> str:
    """The transcript as Markdown: a heading per task and per turn, the person's text
    quoted, the answer as the model wrote it, the calls and questions in a text block."""
    out = [f"# {session_line(model)}", ""]
    if model.session.capsule:
        out += [f"Capsule {model.session.capsule} · model {model.session.model}", ""]
    seen: set[int] = set()
    for item in model.everything():
        if isinstance(item, TurnModel):
            out += _turn(item)
        elif item.number not in seen:
            seen.add(item.number)
            out += _header(item)
        elif item.result is not None:
            out += [f"**{item.result.title}**", ""]
            if item.result.body:
                out += [*_fenced(item.result.body.splitlines()), ""]
    return "\n".join(out).rstrip("\n") + "\n"


def write_markdown(model: TranscriptModel, path: Path) -> None:
    """Write the Markdown export to `path` (mode 0600, replaced whole: a transcript is as
    private as the session)."""
    write_private(path, markdown(model))


def _header(block: TaskBlock) -> list[str]:
    out = [f"## {block.header}", ""]
    if block.note:
        out += [f"*{block.note}*", ""]
    out += [f"> {line}".rstrip() for line in block.text.splitlines()]
    return [*out, ""]


def _turn(turn: TurnModel) -> list[str]:
    out = [f"### Turn {turn.number}", ""]
    if turn.thinking.strip():
        out += ["*Thinking:*", ""]
        out += [f"> {line}".rstrip() for line in turn.thinking.strip().splitlines()]
        out.append("")
    if turn.text.strip():
        out += [turn.text.strip(), ""]
    entries = [line for _kind, text in turn.entries() for line in text.splitlines()]
    if entries:
        out += [*_fenced(entries), ""]
    return out


def _fenced(lines: list[str]) -> list[str]:
    """`lines` in a fenced text block, its fence longer than any run of backticks in them."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}text", *lines, fence]

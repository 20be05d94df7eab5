"""Reading a dead session's journal back (docs/tools.md, "Durable questions"): the open turn,
the calls that finished and the interrupted one, with its questions — from the lines of
`journal.jsonl` murmur-tui wrote for that session, in order (journal_seal.py). The file is
opened without following a link or blocking and read up to MAX_JOURNAL_BYTES; each line is
parsed by the strict JSON reader."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.chat import as_message
from tui.core.errors import FileRefused, JournalUnreadable, NotJson
from tui.core.fs.safe_read import open_regular, read_bounded
from tui.core.loop.journal import (
    JOURNAL,
    MAX_JOURNAL_BYTES,
    Interrupted,
    Journal,
    Journaled,
    OpenTurn,
)
from tui.core.loop.journal_seal import Seal, Verified, load, verify
from tui.core.text.strict_json import loads_line


@dataclass
class Found:
    """What a dead session's journal leaves its resume: its last turn (when it had calls) and
    the interrupted call (the turn's, or a script capsule's: the call of its last question)."""

    turn: OpenTurn | None = None
    call: Interrupted | None = None
    empty: bool = False  # the session journaled nothing: no file, or no line in it
    problem: str | None = None  # the journal is there but nothing is taken from it (why)
    warning: str | None = None  # lines were skipped (which, once): the rest is used
    whole: bool = True
    others: list[Interrupted] = field(default_factory=list)  # calls that may have started too

    def carried(self) -> list[Interrupted]:
        """The calls a resume carries: the interrupted one, and when the journal is not whole,
        every later one of its turn."""
        return ([self.call] if self.call is not None else []) + self.others


def _opened(folder: Path, session_id: str, home: Path) -> tuple[Verified, Seal] | Found:
    """The trusted lines of `session_id`'s journal in `folder`, and its seal moved to the
    last of them; or what there is instead (nothing, or why nothing is taken from it)."""
    path = folder / JOURNAL
    try:
        seal = load(home, session_id)
    except JournalUnreadable as why:
        return Found(problem=f"{path} cannot be checked: {why}")
    try:
        size = _size(path)  # a huge file is refused before a byte of it is read
        read = read_bounded(path, MAX_JOURNAL_BYTES + 1) if size <= MAX_JOURNAL_BYTES else None
    except FileRefused as why:
        if str(why) != "no such file":
            return Found(problem=f"{path} is not read: {why}")
        if seal is not None and seal.written:
            return Found(problem=f"{path} is gone, and murmur-tui wrote {seal.written} lines "
                         "to it")
        return Found(empty=True)
    if read is None or read.truncated:
        return Found(problem=f"{path} is {read.size if read else size} bytes, over the "
                     f"{MAX_JOURNAL_BYTES >> 20} MiB a resume reads")
    if seal is None:
        if not read.data.strip():
            return Found(empty=True)
        return Found(problem=f"{path} has no key (none in {Seal(home, session_id).folder}: "
                     "its session predates journal keys, or the key was removed), so none of "
                     "its lines can be shown to be murmur-tui's and nothing is taken from it")
    return verify(read.data, path, seal), seal


def _size(path: Path) -> int:
    fd = open_regular(path)
    try:
        return os.fstat(fd).st_size
    finally:
        os.close(fd)


def read_journal(folder: Path, session_id: str, home: Path) -> Found:
    """The open turn and the interrupted call in `folder`'s journal, from the lines of it that
    verify with `session_id`'s key in `home` (nothing, saying why, for a journal that cannot be
    read, is over MAX_JOURNAL_BYTES or has no key)."""
    opened = _opened(folder, session_id, home)
    if isinstance(opened, Found):
        return opened
    verified, seal = opened
    raws = [body for _, body in verified.lines]
    if not raws:
        if not verified.whole:
            return Found(problem=verified.warning)
        return Found(empty=True, warning=verified.warning)
    journal = Journal(folder / JOURNAL, seal)
    whole = verified.whole
    found: Found | None = None
    for at in range(len(raws) - 1, -1, -1):  # the last turn; the lines after it are its own
        turn = _turn(raws[at], session_id) if b'"turn"' in raws[at] else None
        if turn is not None:
            found = _rest_of_turn(turn, raws[at + 1:], journal, whole)
            break
    if found is None:
        found = Found(call=_last_question_call(raws, session_id, journal, whole))
    found.warning, found.whole = verified.warning, whole
    return found


def continued(folder: Path, session_id: str, home: Path) -> Journal:
    """`session_id`'s journal in `folder`, to write after its last trusted line."""
    opened = _opened(folder, session_id, home)
    if isinstance(opened, Found):
        if not opened.empty:
            raise ValueError(opened.problem)
        return Journal(folder / JOURNAL, load(home, session_id) or Seal(home, session_id))
    return Journal(folder / JOURNAL, opened[1])


def holds_turn(folder: Path, session_id: str, home: Path, message_id: str) -> str | None:
    """Whether `session_id`'s journal in `folder` has a trusted `turn` line for the model's
    message `message_id` (that later session took the turn over): None when it shows it has
    not, "" when it has, else why it cannot tell (then the turn may have been taken over)."""
    opened = _opened(folder, session_id, home)
    if isinstance(opened, Found):
        return opened.problem
    verified, _ = opened
    marker = json.dumps(message_id, ensure_ascii=False).encode("utf-8", "replace")
    for _, raw in verified.lines:
        if marker in raw and b'"turn"' in raw:
            turn = _turn(raw, "")
            if turn is not None and turn.message.get("id") == message_id:
                return ""
    return None if verified.whole else verified.warning


def _rest_of_turn(turn: OpenTurn, raws: list[bytes], journal: Journal, whole: bool) -> Found:
    names = {str(b["id"]): str(b["name"]) for b in turn.calls()}
    for raw in raws:
        value = _line(raw)
        event = value.get("event") if value is not None else None
        if value is None or event not in ("call", "dropped"):
            continue
        if event == "dropped" and value.get("message_id") == turn.message.get("id"):
            return Found()  # it ended without its results, and the session went on
        message, call_id = value.get("message"), value.get("call_id")
        if event == "call" and isinstance(call_id, str) and call_id in names and \
                isinstance(message, dict) and \
                message.get("role") == "tool" and message.get("tool_call_id") == call_id and \
                isinstance(message.get("id"), str) and (result := as_message(message)):
            turn.finished.setdefault(str(call_id), result)
    waiting = [c for c in names if c not in turn.finished]
    turn.whole = whole
    carried = [_questions(Interrupted(turn.session_id, journal, turn.task_id, c, names[c]),
                          raws, whole) for c in waiting[:1 if whole else len(waiting)]]
    turn.interrupted = carried[0] if carried else None
    return Found(turn, turn.interrupted, others=carried[1:])


def _last_question_call(raws: list[bytes], session_id: str, journal: Journal, whole: bool
                        ) -> Interrupted | None:
    """A journal without turns (a script capsule's): the call of its last question."""
    for raw in reversed(raws):
        value = _asked(raw)
        if value is not None:
            call = Interrupted(session_id, journal, value["task_id"], value["call_id"],
                               value["tool_name"])
            return _questions(call, raws, whole)
    return None


def _questions(call: Interrupted, raws: list[bytes], whole: bool) -> Interrupted:
    """`call` with its journaled questions, their answers and whether each was taken (a
    journal that is not whole delivers none of its answers: a `taken` may be missing)."""
    call.answers = whole
    marker = json.dumps(call.call_id, ensure_ascii=False).encode("utf-8", "replace")
    by_id: dict[str, Journaled] = {}
    for raw in raws:  # only the lines that can belong to that call are parsed
        if b'"asked"' in raw and marker in raw:
            v = _asked(raw)
            if v is None or (v["task_id"], v["call_id"]) != (call.task_id, call.call_id) \
                    or v["id"] in by_id:
                continue
            deadline = v.get("deadline_ms")
            q = Journaled(v["id"], v["sequence"], v["prompt_sha256"], v["prompt"],
                          deadline if isinstance(deadline, int) else None)
            by_id[q.qid] = q
            call.questions.append(q)
        elif by_id and (b'"answered"' in raw or b'"taken"' in raw) and \
                any(qid.encode() in raw for qid in by_id):
            value = _line(raw)
            found = by_id.get(value["id"]) if value is not None and \
                isinstance(value.get("id"), str) else None
            if value is None or found is None:
                continue
            if value.get("event") == "answered" and isinstance(value.get("answer"), str):
                found.answer = value["answer"]
            elif value.get("event") == "taken":
                found.taken = True
    return call


def _line(raw: bytes) -> dict[str, Any] | None:
    try:
        value = loads_line(raw)
    except NotJson:
        return None  # no JSON a resume can use (too deep, say)
    return value if isinstance(value, dict) else None


def _turn(raw: bytes, session_id: str) -> OpenTurn | None:
    value = _line(raw)
    if value is None or value.get("event") != "turn":
        return None
    message, task_id, number = value.get("message"), value.get("task_id"), value.get("turn")
    if not isinstance(message, dict) or message.get("role") != "assistant" or \
            not isinstance(message.get("id"), str) or not isinstance(task_id, str):
        return None
    checked = as_message(message)
    if checked is None:
        return None
    return OpenTurn(session_id, task_id, number if isinstance(number, int) else 0, checked,
                    {}, None)


def _asked(raw: bytes) -> dict[str, Any] | None:
    value = _line(raw) if b'"asked"' in raw else None
    if value is None or value.get("event") != "asked" or not isinstance(value.get("id"), str):
        return None
    strings = ("task_id", "call_id", "tool_name", "prompt", "prompt_sha256")
    if not all(isinstance(value.get(k), str) for k in strings) or \
            not isinstance(value.get("sequence"), int):
        return None
    return value

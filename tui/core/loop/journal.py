"""The session's journal (docs/tools.md, "Durable questions"): `<session folder>/journal.jsonl`
(0600, each line synced before it returns) holds the open turn (the model's message with its
calls) before a call runs, each finished call's result, each question before it is shown and
each answer before the tool gets it. Every question has an id that is the same after a restart.

A resumed session reads the journal of the session it resumes when that one died (it never
wrote its end; journal_read.py): its last turn, when some of the turn's calls did not finish or
its messages are not in the record, is rebuilt (rebuild.py); the first call that did not finish
is the interrupted call. Run again, its questions take their journaled answers while the prompt
matches, once: taking one is written in both journals.

The journal is evidence, not authority (tui/core/loop/journal_seal.py): each line is sealed
with the session's key, and a resume reads only the lines that verify and follow one another;
when the journal is not whole, every call of the turn it does not show finished counts as
possibly started and no journaled answer is delivered."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.chat import Message, ToolCallBlock, tool_calls_of
from tui.core.fs.private_files import open_append, write_all
from tui.core.loop.journal_seal import Seal
from tui.core.text.secrets import redact, redact_value

JOURNAL = "journal.jsonl"
# A resume reads at most this much of a journal; a bigger one is not carried over (W-RESUME).
# A turn's journal holds its message and its calls' results, each capped at 1 MiB: 64 MiB is
# far past any real turn, and small enough to read at once.
MAX_JOURNAL_BYTES = 64 << 20


def question_id(context_id: str, task_id: str, call_id: str, sequence: int) -> str:
    """The question's stable id: the same context, task, call and place in the call give the
    same id in any session."""
    key = "\x00".join((context_id, task_id, call_id, str(sequence)))
    return "q_" + hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:24]


def prompt_sha(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8", "replace")).hexdigest()


class Journal:
    """One session's `journal.jsonl`: each line is written and synced before it returns. A
    journal that cannot be written is said once (`failed`) and written no more: the session
    goes on, without durability. Each line is sealed (`seal`): the session's key is minted
    with the first line."""

    def __init__(self, path: Path, seal: Seal,
                 failed: Callable[[str], None] | None = None) -> None:
        self.path = path
        self.seal = seal
        self._failed = failed
        self.broken = False

    def _line(self, value: dict[str, Any]) -> None:
        if self.broken:
            return
        try:
            self._write(value)
        except OSError as exc:
            self.broken = True
            if self._failed is not None:
                self._failed(f"cannot write the journal {self.path}: {exc.strerror or exc}; "
                             "from here on this session's turns and questions do not survive "
                             "a crash")

    def _write(self, value: dict[str, Any]) -> None:
        value = {"ts_ms": time.time_ns() // 1_000_000, **value}
        sealed, mac = self.seal.line(redact_value(value))
        data = sealed + b"\n"
        # no link followed, never blocking on a FIFO, a regular file only, and a line a crash
        # cut is closed off before this one is written
        fd = open_append(self.path)
        try:
            write_all(fd, data)
            os.fdatasync(fd)  # the data and its length: what a reader after a crash needs
        finally:
            os.close(fd)
        self.seal.wrote(mac)

    def turn(self, task_id: str, turn: int, message: Message) -> None:
        """The model's message of a turn with calls, before the first call runs."""
        self._line({"event": "turn", "task_id": task_id, "turn": turn, "message": message})

    def call(self, call_id: str, tool_name: str, message: Message) -> None:
        """A call of the open turn finished: the tool message the model reads."""
        self._line({"event": "call", "call_id": call_id, "tool_name": tool_name,
                    "message": message})

    def dropped(self, message_id: str, why: str) -> None:
        """The open turn ended without its results (canceled, timed out): nothing to rebuild."""
        self._line({"event": "dropped", "message_id": message_id, "why": why})

    def asked(self, qid: str, task_id: str, call_id: str, tool_name: str, sequence: int,
              prompt: str, deadline_ms: int | None) -> None:
        self._line({"event": "asked", "id": qid, "task_id": task_id, "call_id": call_id,
                    "tool_name": tool_name, "sequence": sequence,
                    "prompt_sha256": prompt_sha(prompt), "prompt": prompt,
                    "deadline_ms": deadline_ms})

    def answered(self, qid: str, answer: str, taken_from: str | None = None) -> None:
        line: dict[str, Any] = {"event": "answered", "id": qid, "answer": redact(answer)}
        if taken_from is not None:
            line["taken_from"] = taken_from  # the session whose journal held the answer
        self._line(line)

    def taken(self, qid: str, by_session: str) -> None:
        """In the earlier session's journal: its answer was delivered by `by_session`."""
        self._line({"event": "taken", "id": qid, "by_session": by_session})


@dataclass
class Journaled:
    """A question in an earlier session's journal."""

    qid: str
    sequence: int
    prompt_sha256: str
    prompt: str
    deadline_ms: int | None
    answer: str | None = None
    taken: bool = False


@dataclass
class Interrupted:
    """The call an earlier session died in, with its questions in order; `task_id` is the task
    its questions are numbered under."""

    session_id: str
    journal: Journal
    task_id: str
    call_id: str
    tool_name: str
    questions: list[Journaled] = field(default_factory=list)
    answers: bool = True  # its journaled answers may be delivered (the journal is whole)

    def summary(self) -> str:
        """What the call had asked, for the model."""
        parts = []
        for q in self.questions:
            answer = f"answered {json.dumps(q.answer)}" if q.answer is not None else \
                "not answered"
            parts.append(f"{json.dumps(q.prompt)} ({answer})")
        return "; ".join(parts) if parts else "nothing"


@dataclass
class OpenTurn:
    """The last turn of a session that died: the model's message, the results of the calls
    that finished (by call id) and the first call that did not (None: all finished)."""

    session_id: str
    task_id: str
    turn: int
    message: Message
    finished: dict[str, Message]
    interrupted: Interrupted | None
    whole: bool = True  # the journal holds every line written: calls after `interrupted`
    #                     had not started (else each may have: it is carried too)

    def calls(self) -> list[ToolCallBlock]:
        """The message's call blocks, in the order they run."""
        return [b for b in tool_calls_of(self.message.get("content"))
                if isinstance(b.get("id"), str) and isinstance(b.get("name"), str)]


@dataclass
class Ask:
    """One question about to be put: its id, and what the earlier session left for it."""

    qid: str
    sequence: int
    before_restart: bool = False  # the same question was asked before the restart
    answer: str | None = None  # its journaled answer, not yet delivered
    deadline_ms: int | None = None  # the journaled ask's deadline


class JournaledQuestions:
    """The turn journal's record of questions: the session's journal, the call a question
    belongs to, and the calls of the session it resumes that may have started (each carried
    once, to the first matching call)."""

    def __init__(self, journal: Journal, context_id: str, session_id: str,
                 carried: Sequence[Interrupted] = ()) -> None:
        self.journal = journal
        self.context_id = context_id
        self.session_id = session_id
        self.interrupted = list(carried)
        self._call: tuple[str, str, str] | None = None  # task id (for ids), call id, tool
        self._carried: Interrupted | None = None
        self._sequence = 0
        self.numbering: str | None = None  # a rebuilt turn's task: its calls' ids are its
        self._last: tuple[str, str, int] | None = None  # the call that ended: task, id, next

    def turn(self, task_id: str, turn: int, message: Message) -> None:
        self.journal.turn(self.numbering or task_id, turn, message)

    def finished(self, call_id: str, tool_name: str, message: Message) -> None:
        self.journal.call(call_id, tool_name, message)

    def dropped(self, message_id: str, why: str) -> None:
        self.journal.dropped(message_id, why)

    def carries(self, call_id: str, tool_name: str) -> Interrupted | None:
        """The interrupted call when this call is it run again (taken: it carries once)."""
        for at, found in enumerate(self.interrupted):
            if (found.call_id, found.tool_name) == (call_id, tool_name):
                return self.interrupted.pop(at)
        return None

    def begin(self, task_id: str, call_id: str, tool_name: str,
              carried: Interrupted | None = None, again: bool = False) -> None:
        """A call starts; a carried call numbers its questions under the interrupted task; a
        retry (`again`) goes on from its first attempt's numbers, with nothing carried."""
        numbered = carried.task_id if carried else self.numbering or task_id
        if again and self._last is not None and self._last[1] == call_id:
            numbered, self._sequence = self._last[0], self._last[2]
        else:
            self._sequence = 0
        self._carried = None if again else carried
        self._call = (numbered, call_id, tool_name)

    def end(self) -> None:
        if self._call is not None:
            self._last = (self._call[0], self._call[1], self._sequence)
        self._call = None
        self._carried = None

    def next(self, fallback_task: str, tool_name: str, prompt: str) -> Ask:
        """The next question of the running call (outside a call: its own sequence)."""
        task_id, call_id, _ = self._call or (fallback_task, "", tool_name)
        sequence = self._sequence
        self._sequence += 1
        qid = question_id(self.context_id, task_id, call_id, sequence)
        ask = Ask(qid, sequence)
        carried = self._carried
        if carried is not None:
            earlier = next((q for q in carried.questions if q.qid == qid), None)
            if earlier is not None and earlier.prompt_sha256 == prompt_sha(prompt):
                ask.before_restart = True
                ask.deadline_ms = earlier.deadline_ms
                if earlier.answer is not None and not earlier.taken and carried.answers:
                    ask.answer = earlier.answer
            else:
                self._carried = None  # the call went another way: it asks anew from here
        return ask

    def asked(self, ask: Ask, task_id: str, tool_name: str, prompt: str,
              deadline_ms: int | None) -> None:
        """Journaled under the task its id is numbered under (a carried call's earlier one)."""
        numbered, call_id = (self._call[0], self._call[1]) if self._call else (task_id, "")
        self.journal.asked(ask.qid, numbered, call_id, tool_name, ask.sequence, prompt,
                           deadline_ms)

    def answered(self, ask: Ask, answer: str) -> None:
        self.journal.answered(ask.qid, answer)

    def take(self, ask: Ask) -> str:
        """The journaled answer, delivered now: written in both journals first."""
        assert ask.answer is not None and self._carried is not None
        self.journal.answered(ask.qid, ask.answer, taken_from=self._carried.session_id)
        self._carried.journal.taken(ask.qid, self.session_id)
        for q in self._carried.questions:
            if q.qid == ask.qid:
                q.taken = True
        return ask.answer

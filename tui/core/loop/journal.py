"""The session's journal (docs/tools.md, "Durable questions"): `<session folder>/journal.jsonl`
(0600, each line synced before it returns) holds the open turn (the model's message with its
calls) before a call runs, each finished call's result, each question before it is shown and
each answer before the tool gets it. Every question has an id that is the same after a restart.

A resumed session reads the journal of the session it resumes when that one died (it never
wrote its end): its last turn, when some of the turn's calls did not finish or its messages are
not in the record, is rebuilt (tui/core/loop/rebuild.py); the first call that did not finish is
the interrupted call. Run again, its questions take their journaled answers while the prompt
matches, once: taking one is written in both journals."""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.chat import Message, chat_shape_problem
from tui.core.private import make_private_dirs
from tui.core.secrets import redact, redact_value
from tui.core.strict_json import NotJson, loads_line

JOURNAL = "journal.jsonl"
MAX_JOURNAL_BYTES = 64 << 20  # a bigger journal is not carried over (the resume warns)


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
    goes on, without durability."""

    def __init__(self, path: Path, failed: Callable[[str], None] | None = None) -> None:
        self.path = path
        self._whole = False  # the file is known to end with a whole line
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
        data = (json.dumps(redact_value(value), ensure_ascii=False, separators=(",", ":"))
                + "\n").encode("utf-8", "replace")
        make_private_dirs(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            if not self._whole:  # a crash may have cut the last line: never write onto it
                size = os.fstat(fd).st_size
                if size and os.pread(fd, 1, size - 1) != b"\n":
                    data = b"\n" + data
                self._whole = True
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fdatasync(fd)  # the data and its length: what a reader after a crash needs
        finally:
            os.close(fd)

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

    def calls(self) -> list[dict[str, Any]]:
        """The message's call blocks, in the order they run."""
        content = self.message.get("content")
        return [b for b in content if isinstance(b, dict) and b.get("type") == "tool_call"
                and isinstance(b.get("id"), str) and isinstance(b.get("name"), str)] \
            if isinstance(content, list) else []


@dataclass
class Found:
    """What a dead session's journal leaves its resume: its last turn (when it had calls) and
    the interrupted call (the turn's, or a script capsule's: the call of its last question)."""

    turn: OpenTurn | None = None
    call: Interrupted | None = None
    empty: bool = False  # the session journaled nothing: no file, or no line in it
    problem: str | None = None  # the journal is there but was not read (why)


def read_journal(folder: Path, session_id: str) -> Found:
    """The open turn and the interrupted call in `folder`'s journal (nothing, saying why, for a
    journal that is unreadable or over MAX_JOURNAL_BYTES)."""
    path = folder / JOURNAL
    try:
        size = path.stat().st_size
        if size > MAX_JOURNAL_BYTES:
            return Found(problem=f"{path} is {size} bytes, over the {MAX_JOURNAL_BYTES >> 20} "
                         "MiB a resume reads")
        data = path.read_bytes()
    except FileNotFoundError:
        return Found(empty=True)
    except OSError as exc:
        return Found(problem=f"{path} cannot be read: {exc.strerror or exc}")
    raws = [raw for raw in data.split(b"\n") if raw.strip()]
    if not raws:
        return Found(empty=True)
    journal = Journal(path)
    for at in range(len(raws) - 1, -1, -1):  # the last turn; the lines after it are its own
        turn = _turn(raws[at], session_id) if b'"turn"' in raws[at] else None
        if turn is not None:
            return _rest_of_turn(turn, raws[at + 1:], journal)
    return Found(call=_last_question_call(raws, session_id, journal))


def holds_turn(folder: Path, message_id: str) -> bool:
    """`folder`'s journal has a `turn` line for the model's message `message_id` (a later
    session took that turn over)."""
    try:
        if (folder / JOURNAL).stat().st_size > MAX_JOURNAL_BYTES:
            return False
        data = (folder / JOURNAL).read_bytes()
    except OSError:
        return False
    marker = json.dumps(message_id, ensure_ascii=False).encode("utf-8", "replace")
    for raw in data.split(b"\n"):
        if marker in raw and b'"turn"' in raw:
            turn = _turn(raw, "")
            if turn is not None and turn.message.get("id") == message_id:
                return True
    return False


def _rest_of_turn(turn: OpenTurn, raws: list[bytes], journal: Journal) -> Found:
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
                isinstance(message.get("id"), str) and chat_shape_problem(message) is None:
            turn.finished.setdefault(str(call_id), message)
    waiting = next((c for c in names if c not in turn.finished), None)
    if waiting is not None:
        turn.interrupted = _questions(Interrupted(turn.session_id, journal, turn.task_id,
                                                  waiting, names[waiting]), raws)
    return Found(turn, turn.interrupted)


def _last_question_call(raws: list[bytes], session_id: str, journal: Journal
                        ) -> Interrupted | None:
    """A journal without turns (a script capsule's): the call of its last question."""
    for raw in reversed(raws):
        value = _asked(raw)
        if value is not None:
            call = Interrupted(session_id, journal, value["task_id"], value["call_id"],
                               value["tool_name"])
            return _questions(call, raws)
    return None


def _questions(call: Interrupted, raws: list[bytes]) -> Interrupted:
    """`call` with its journaled questions, their answers and whether each was taken."""
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
        return None  # a line cut by the crash
    return value if isinstance(value, dict) else None


def _turn(raw: bytes, session_id: str) -> OpenTurn | None:
    value = _line(raw)
    if value is None or value.get("event") != "turn":
        return None
    message, task_id, number = value.get("message"), value.get("task_id"), value.get("turn")
    if not isinstance(message, dict) or message.get("role") != "assistant" or \
            not isinstance(message.get("id"), str) or chat_shape_problem(message) is not None \
            or not isinstance(task_id, str):
        return None
    return OpenTurn(session_id, task_id, number if isinstance(number, int) else 0, message,
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


@dataclass
class Ask:
    """One question about to be put: its id, and what the earlier session left for it."""

    qid: str
    sequence: int
    before_restart: bool = False  # the same question was asked before the restart
    answer: str | None = None  # its journaled answer, not yet delivered
    deadline_ms: int | None = None  # the journaled ask's deadline


class Questions:
    """The session's journal, the call a question belongs to, and the interrupted call of the
    session it resumes (carried once, to the first matching call)."""

    def __init__(self, journal: Journal, context_id: str, session_id: str,
                 interrupted: Interrupted | None = None) -> None:
        self.journal = journal
        self.context_id = context_id
        self.session_id = session_id
        self.interrupted = interrupted
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
        found = self.interrupted
        if found is None or (found.call_id, found.tool_name) != (call_id, tool_name):
            return None
        self.interrupted = None
        return found

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
                if earlier.answer is not None and not earlier.taken:
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

"""Durable questions (docs/tools.md, "Durable questions"): every question a tool asks has an id
that is the same after a restart, and `<session folder>/questions.jsonl` (0600, fsync per line)
holds each question before it is shown and each answer before the tool gets it.

A resumed session reads the journal of the session it resumes when that one died (it never
wrote its end): the call of its last question is the interrupted call. When the resumed turn
runs that call again (same call id and tool), its questions take their journaled answers while
the prompt matches, once: taking one is written in both journals."""

from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui.core.private import make_private_dirs
from tui.core.secrets import redact, redact_value
from tui.core.strict_json import NotJson, loads_line

JOURNAL = "questions.jsonl"
MAX_JOURNAL_BYTES = 64 << 20  # a bigger journal is not carried over (the resume warns)


def question_id(context_id: str, task_id: str, call_id: str, sequence: int) -> str:
    """The question's stable id: the same context, task, call and place in the call give the
    same id in any session."""
    key = "\x00".join((context_id, task_id, call_id, str(sequence)))
    return "q_" + hashlib.sha256(key.encode("utf-8", "replace")).hexdigest()[:24]


def prompt_sha(prompt: str) -> str:
    return hashlib.sha256(prompt.encode("utf-8", "replace")).hexdigest()


class QuestionJournal:
    """One session's `questions.jsonl`: each line is written and fsynced before it returns."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._whole = False  # the file is known to end with a whole line

    def _line(self, value: dict[str, Any]) -> None:
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
    """The call an earlier session died in, with its questions in order."""

    session_id: str
    journal: QuestionJournal
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


def read_interrupted(folder: Path, session_id: str) -> Interrupted | None:
    """The interrupted call in `folder`'s journal (the call of its last question), or None."""
    path = folder / JOURNAL
    try:
        if path.stat().st_size > MAX_JOURNAL_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    raws = [raw for raw in data.split(b"\n") if raw.strip()]
    last = None
    for raw in reversed(raws):  # the last question names the interrupted call
        value = _asked(raw)
        if value is not None:
            last = value
            break
    if last is None:
        return None
    call = Interrupted(session_id, QuestionJournal(path), last["task_id"], last["call_id"],
                       last["tool_name"])
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
            v = _line(raw)
            found = by_id.get(v["id"]) if v is not None else None
            if v is None or found is None:
                continue
            if v.get("event") == "answered" and isinstance(v.get("answer"), str):
                found.answer = v["answer"]
            elif v.get("event") == "taken":
                found.taken = True
    return call


def _line(raw: bytes) -> dict[str, Any] | None:
    try:
        value = loads_line(raw)
    except NotJson:
        return None  # a line cut by the crash
    return value if isinstance(value, dict) and isinstance(value.get("id"), str) else None


def _asked(raw: bytes) -> dict[str, Any] | None:
    value = _line(raw) if b'"asked"' in raw else None
    if value is None or value.get("event") != "asked":
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
    """The session's questions: the journal, the call a question belongs to, and the
    interrupted call of the session it resumes (carried once, to the first matching call)."""

    def __init__(self, journal: QuestionJournal, context_id: str, session_id: str,
                 interrupted: Interrupted | None = None) -> None:
        self.journal = journal
        self.context_id = context_id
        self.session_id = session_id
        self.interrupted = interrupted
        self._call: tuple[str, str, str] | None = None  # task id (for ids), call id, tool
        self._carried: Interrupted | None = None
        self._sequence = 0

    def carries(self, call_id: str, tool_name: str) -> Interrupted | None:
        """The interrupted call when this call is it run again (taken: it carries once)."""
        found = self.interrupted
        if found is None or (found.call_id, found.tool_name) != (call_id, tool_name):
            return None
        self.interrupted = None
        return found

    def begin(self, task_id: str, call_id: str, tool_name: str,
              carried: Interrupted | None = None) -> None:
        """A call starts; a carried call numbers its questions under the interrupted task."""
        self._carried = carried
        self._call = (carried.task_id if carried else task_id, call_id, tool_name)
        self._sequence = 0

    def end(self) -> None:
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
        call_id = self._call[1] if self._call else ""
        self.journal.asked(ask.qid, task_id, call_id, tool_name, ask.sequence, prompt,
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

"""Headless mode: events printed as lines (or JSON lines), questions answered from the command
line or stdin. What each line says is in `tui.core.events.wording`, shared with the transcript."""

from __future__ import annotations

import sys
import threading
from collections import deque
from collections.abc import Callable, Iterable
from typing import TextIO

from tui.core.asking.question import Question, Unanswered
from tui.core.asking.questions import QuestionBoard
from tui.core.asking.responder import Responder
from tui.core.asking.stdin_lines import MAX_LINE, Lines, lines_of
from tui.core.cost import Ledger
from tui.core.errors import NoAnswer
from tui.core.events import vocabulary as ev
from tui.core.events.wording import Form, log_line, session_ended, task_ended, warning
from tui.core.text.printable import printable
from tui.core.text.text_rule import whole

STDIN_CLOSED = "no --answer left and stdin is closed"


class JsonPrinter:
    """One JSON object per event on `out`."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def emit(self, event: ev.Event) -> None:
        self._out.write(event.to_json() + "\n")
        self._out.flush()


class HumanPrinter:
    """Readable lines; streamed text appears as it arrives. Warnings go to `err`. What it
    prints may come from a model, a tool or a command, and goes to a terminal: nothing a
    terminal would act on (an escape sequence setting the title, say) is written as it is."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self._out = out
        self._err = err
        self._streaming: str | None = None  # "text" or "thinking" while a run of deltas lasts
        self._ledger = Ledger()  # what the calls cost: on the task's and the session's line
        self._denied: set[str | None] = set()  # denied calls: their finish line says nothing

    def _line(self, text: str) -> None:
        if self._streaming is not None:
            self._out.write("\n")
            self._streaming = None
        self._out.write(printable(text) + "\n")
        self._out.flush()

    def _delta(self, kind: str, text: str) -> None:
        if self._streaming != kind:
            if self._streaming is not None:
                self._out.write("\n")
            self._out.write("  thinking: " if kind == "thinking" else "  ")
            self._streaming = kind
        self._out.write(printable(text).replace("\n", "\n  "))
        self._out.flush()

    def emit(self, event: ev.Event) -> None:
        self._ledger.apply(event)
        if isinstance(event, ev.TextDelta):
            self._delta("text", event.text)
        elif isinstance(event, ev.ThinkingDelta):
            self._delta("thinking", event.text)
        elif isinstance(event, ev.Warning):
            self._err.write(printable(warning(event)) + "\n")
            self._err.flush()
        elif isinstance(event, ev.TaskEnded):
            self._line(task_ended(event, Form.LOG, self._ledger.task(event.task_id).cost))
        elif isinstance(event, ev.SessionEnded):
            self._line(session_ended(event, self._ledger.session.cost))
        elif isinstance(event, ev.ToolCallFinished) and event.call_id in self._denied:
            self._denied.discard(event.call_id)  # "⊘ denied" said it: it never ran, no "0 ms"
        else:
            if isinstance(event, ev.CallDenied):
                self._denied.add(event.call_id)
            text = log_line(event)
            if text is not None:
                self._line(text)


class HeadlessResponder(Responder):
    """Answers `request-input` with the `--answer` values in order, then lines from stdin.

    With `feed_tasks` (a session that sleeps between tasks), each line of stdin is a task for
    the session — except while a question waits: then the next line is its answer. The end of
    stdin ends what can be sent. Stdin is read a bounded line at a time (`stdin_lines`), and
    every answer and task from it or from `--answer` is whole text (`text_rule`). An answer
    of either kind only answers the question; `ask` (asking.responder) waits once for it."""

    def __init__(self, answers: Iterable[str], stdin: TextIO | None = None,
                 err: TextIO | None = None, board: QuestionBoard | None = None,
                 question_shown: bool = False) -> None:
        # question_shown: the event printer already puts the question on the person's
        # terminal, so asking again on stderr would show it twice; only the prompt is written.
        self._question_shown = question_shown
        self._answers = deque(whole(answer) for answer in answers)
        self.board = board  # open questions, answerable from the door too
        # a served session a person also answers on stdin (a formation's entry): when stdin
        # ends, its question waits for the door instead of failing
        self.door_after_stdin = False
        self._stdin = stdin if stdin is not None else sys.stdin
        self._err = err if err is not None else sys.stderr
        self._lines: Lines | None = None
        self._closed = False
        self._asking = False
        self._send_task: Callable[[str], str | None] | None = None
        self._ended: Callable[[], None] | None = None

    def feed_tasks(self, send: Callable[[str], str | None], ended: Callable[[], None]) -> None:
        """Read stdin now: its lines are tasks `send` queues (it returns why one was refused),
        and `ended` is called at its end."""
        self._send_task, self._ended = send, ended
        self._next_line()

    def offer(self, question: Question) -> None:
        if self._answers:
            question.answer(self._answers.popleft())
            return
        request = question.request
        if self._closed:
            self._no_answer(request.tool_name)
        asked = "" if self._question_shown else f"? {request.tool_name} asks: {request.prompt}"
        if self.board is not None and self.board.door_only:
            self._err.write(f"{asked} (waiting for an answer through the door)\n".lstrip())
            self._err.flush()
            return
        self._err.write(f"{asked}\n> " if asked else "> ")
        self._err.flush()
        self._asking = True
        board = self.board
        ended = (self._door_waits if self.door_after_stdin and board is not None
                 else lambda: question.close(STDIN_CLOSED))
        self._next_line().hand_to(lambda line: question.answer(line.rstrip("\n")), ended)

    def _door_waits(self) -> None:
        """stdin ended while a question waited on it: the door alone answers it, and those
        that follow."""
        self._asking = False
        if self._lines is not None:
            self._lines.release()
        if self.board is not None:
            self.board.door_only = True
        self._err.write("\n(stdin ended: waiting for an answer through the door)\n")
        self._err.flush()

    def settled(self, question: Question, outcome: str | Unanswered) -> None:
        prompted, self._asking = self._asking, False
        if prompted and self._lines is not None:
            self._lines.release()
        if isinstance(outcome, Unanswered) and outcome.detail == STDIN_CLOSED:
            self._closed = True
            if prompted:
                self._err.write("\n")  # the "> " prompt waited on this line
            self._no_answer(question.request.tool_name)

    def _no_answer(self, tool_name: str) -> None:
        """The call fails with no answer: said on the line before its "← … error" line, which
        gives no reason of its own."""
        self._err.write(f"murmur-tui: {tool_name} got no answer: {STDIN_CLOSED}\n")
        self._err.flush()
        raise NoAnswer(STDIN_CLOSED)

    def answered_elsewhere(self, question: Question) -> None:
        self._err.write("(answered through the door)\n")
        self._err.flush()

    def _task_line(self, line: str) -> None:
        text = line.rstrip("\n")
        if not text.strip() or self._send_task is None:
            return
        refused = self._send_task(text)
        if refused is not None:
            self._err.write(f"murmur-tui: task not taken: {refused}\n")
            self._err.flush()

    def _long_line(self, size: int) -> None:
        self._err.write(f"murmur-tui: a line of stdin was not taken: {size} bytes, over the "
                        f"{MAX_LINE} a line may hold\n")
        self._err.flush()

    def _next_line(self) -> Lines:
        """Lines of stdin, read by one daemon thread so a wait can time out; it reads no
        further while MAX_WAITING lines wait to be taken."""
        if self._lines is None:
            lines = Lines()
            self._lines = lines

            def pump() -> None:
                try:
                    for line in lines_of(self._stdin, self._long_line):
                        if self._send_task is not None and not self._asking:
                            self._task_line(line)
                        else:
                            lines.put(line)
                except (OSError, ValueError) as exc:  # stdin closed or unreadable: its end
                    self._err.write(f"murmur-tui: stdin could not be read further: {exc}\n")
                finally:
                    lines.close()
                    if self._ended is not None:
                        self._ended()

            threading.Thread(target=pump, name="stdin-answers", daemon=True).start()
        return self._lines

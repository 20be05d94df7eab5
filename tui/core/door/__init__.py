"""Murmur's newest A2A door for a murmur-tui session (`launch --serve`).

    door = Door(capsule, questions, host, port, seat)   # before the Session: its sink in sinks=
    session = Session(..., sinks=[..., door.sink])
    door.attach(session)
    url = door.start()
    ...
    door.close()

Nothing here imports h11 or asyncio until `start`, so a session without --serve loads none of it.
"""

from __future__ import annotations

import functools
import gc
import ipaddress
import queue
import threading
from typing import TYPE_CHECKING, Any

from tui.core import ids
from tui.core.asking.questions import QuestionBoard
from tui.core.cancel import CancelToken
from tui.core.door.auth import Tokens, declared_credentials
from tui.core.door.card import CardFacts, card, methods
from tui.core.door.frames import Broadcast, FrameSink
from tui.core.door.residue import Residue
from tui.core.door.rpc import BUSY, CLOSING
from tui.core.door.tasks import DoorTask, TaskTable
from tui.core.errors import LaunchError, MurmurTuiError
from tui.core.events import vocabulary as ev
from tui.core.manifest.model import Capsule
from tui.core.names import KeptName

if TYPE_CHECKING:
    from tui.core.door.server import DoorServer
    from tui.core.formation.seat import Seat

DEFAULT_HOST = "127.0.0.1"
CANCELED = "task canceled"  # a running task's final status message, as Murmur words it
NOT_STARTED = "task canceled before it started"  # a queued one's
MODEL_VISIBLE = ("tool", "skill")  # the runtimes whose artifacts the model calls: the card's tools


def parse_bind(text: str | None, option: str = "--serve",
               refused: type[MurmurTuiError] = LaunchError) -> tuple[str, int]:
    """`HOST:PORT`, `HOST`, `:PORT`, `PORT` or nothing (127.0.0.1 and an ephemeral port);
    an IPv6 host is written in brackets: `[::1]:8080`. A bad port is `refused`, naming
    `option` (`fleet --web` takes the same places)."""
    text = (text or "").strip()
    host, port = text, ""
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest.removeprefix(":")
    elif text.isdigit():
        host, port = "", text
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    if port and not (port.isascii() and port.isdigit() and int(port) <= 65535):
        raise refused(f"{option} {text}: the port must be a number from 0 to 65535")
    return host or DEFAULT_HOST, int(port or 0)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Door:
    def __init__(self, capsule: Capsule, questions: QuestionBoard, host: str = DEFAULT_HOST,
                 port: int = 0, seat: Seat | None = None) -> None:
        self.capsule = capsule
        self.questions = questions
        self.host, self.port = host, port
        self.table = TaskTable()
        self.broadcast = Broadcast()
        self.residue = Residue()
        self.sink = FrameSink(self.broadcast, self._follow)
        # a formation member's door also takes its callers' formation tokens (members.py)
        self.tokens = Tokens.mint(capsule.name, declared_credentials(capsule.manifest_path),
                                  is_loopback(host), seat)
        self.session: Any = None  # the Session served (only the commands import it)
        self.name: KeptName | None = None  # its name, read again after a rename (the card)
        self.url = ""
        self._server: DoorServer | None = None
        self._first: queue.Queue[DoorTask | None] | None = None  # the first task's hand-over
        self._awaiting_first = False  # the session waits for its first task: the next is it
        self._stopping = threading.Event()
        self.ended = threading.Event()

    # -- wiring -----------------------------------------------------------------------------
    def attach(self, session: Any, wait_for_first: bool = False) -> None:
        """Serve `session`; with `wait_for_first`, the first task the door takes is the
        session's first task (`first_task` hands it over)."""
        self.session = session
        home, options = getattr(session, "home", None), getattr(session, "options", None)
        if home is not None:  # a session of this machine's: its name is kept in its home
            self.name = KeptName(home, session.session_id, getattr(options, "name", None))
        if wait_for_first:
            self._first = queue.Queue()
            self._awaiting_first = True

    def start(self) -> str:
        from tui.core.door.server import DoorServer

        self._server = DoorServer(self, self.broadcast, self.tokens, self.public_card,
                                  log=self._log)
        try:
            host, port = self._server.bind(self.host, self.port)
        except OSError as exc:
            raise LaunchError(f"--serve {self.host}:{self.port}: cannot listen there "
                              f"({exc.strerror or exc})") from None
        shown = f"[{host}]" if ":" in host else host
        self.url = f"http://{shown}:{port}"
        # what the session has built (modules, capsule, components) lives as long as it does:
        # frozen, it is no longer walked by a full collection. A flood of connections makes
        # enough garbage to start full collections, and each walked it all: 100-170 ms
        # pauses of the door's loop and the session's thread (docs/benchmarks.md, door.py)
        gc.collect()
        gc.freeze()
        self._server.start()
        return self.url

    def _log(self, line: str) -> None:
        """The door's rare lines about trouble go to the session's bootstrap log (the screen
        has no stderr to spare); without a session, the server writes them on stderr."""
        report = getattr(self.session, "report", None)
        if report is None:
            raise LookupError("no session log")
        report.log(line)

    def close(self) -> None:
        self.broadcast.close()
        if self._server is not None:
            self._server.close()

    def first_task(self, cancel: CancelToken) -> DoorTask | None:
        """Wait for the first task sent through the door (None: stopped or canceled first:
        `session/stop` and the cancel each put None in the queue, so nothing is polled)."""
        first = self._first  # kept once handed over: a task may come before this is called
        assert first is not None
        if self._stopping.is_set():
            return None
        unsubscribe = cancel.subscribe(lambda: first.put(None))
        try:
            return first.get()
        finally:
            unsubscribe()

    # -- what the session tells the door ----------------------------------------------------
    def _follow(self, event: ev.Event) -> None:
        self.table.apply(event)
        self.residue.follow(event)
        if isinstance(event, ev.SessionEnded):
            self.ended.set()

    # -- DoorSession ------------------------------------------------------------------------
    def _facts(self) -> CardFacts:
        capsule = self.capsule
        # the installed artifacts the model can call, as Murmur lists them: the shell is the
        # `shell` flag, never its binaries
        tools = tuple(a.name for a in capsule.artifacts if a.runtime in MODEL_VISIBLE)
        return CardFacts(capsule.name, capsule.version, self.url,
                         self.session.session_id if self.session else "",
                         capsule.lifecycle.task_acceptance != "none", self.tokens.active,
                         tools, bool(capsule.capabilities.shell_allow),
                         bool(capsule.capabilities.network_allow),
                         capsule.exports.peer_tasks_accept,
                         self.name.current() if self.name is not None else None)

    def public_card(self) -> dict[str, Any]:
        return card(self._facts())

    def extended_card(self) -> dict[str, Any] | None:
        return card(self._facts(), extended=True) if self.tokens.active else None

    def accepts_peer_tasks(self) -> bool:
        return self.capsule.exports.peer_tasks_accept

    def methods(self) -> list[str]:
        return methods(self._facts())

    def conversation_mode(self) -> str:
        return self.capsule.lifecycle.conversation

    def new_ids(self) -> tuple[str, str]:
        """A new task's id, and the context it runs in when its message names none: a fresh
        `ctx_` for each task, as Murmur mints one, unless the launch fixed one context for
        every task (`--context`, `--resume`)."""
        session = self.session
        if session is not None and getattr(session, "context_fixed", False):
            return ids.task_id(), str(session.context_id)
        return ids.task_id(), ids.context_id()

    def submit(self, task: DoorTask) -> str | None:
        """Hand `task` to the session, to run under the door's id; the refusal, else None."""
        session = self.session
        if session is None or self._stopping.is_set() or self.ended.is_set():
            return CLOSING
        if self._awaiting_first and self._first is not None:  # the session's first task
            self._awaiting_first = False
            self.table.add_sent(task)
            self._first.put(task)
            return None
        with self.table.lock():
            self.table.add_sent(task)
            refused = session.submit(task.text, task.task_id, task.context_id,
                                     origin=task.origin, caller_member=task.caller_member)
            if refused is not None:
                task.state, task.message = "rejected", \
                    CLOSING if "no more tasks" in refused and session.inbox.closed else BUSY
                return task.message
        return None

    def answer(self, task: DoorTask, text: str) -> bool:
        request_id = task.request_id
        if request_id is None or not self.questions.answer(request_id, text):
            return False
        with self.table.lock():  # the task is answered in TASK_STATE_WORKING
            if task.request_id == request_id:
                task.state, task.prompt, task.request_id = "working", None, None
        return True

    def cancel(self, task: DoorTask) -> str | None:
        """Cancel `task` alone, and answer at once (Murmur's CancelTask never waits for the
        loop): a queued task is taken out of the queue and never runs (its final status is
        written here); a running one reads canceled from now on, and ends canceled when the
        session notices (its own final status). The session goes on as its lifecycle says."""
        session = self.session
        if session is None:
            return "the session is not running"
        if session.cancel_task(task.task_id) == "queued":
            self.sink.final(task.task_id, "canceled", NOT_STARTED, task.context_id,
                            lambda: self.table.cancel(task, NOT_STARTED))
        else:
            self.table.cancel(task, CANCELED)
        return None

    def still_running(self) -> list[dict[str, Any]]:
        return self.residue.items()

    def stop(self) -> dict[str, Any]:
        """Cancel every live task and end the session; Murmur's answer: the session, the
        tasks this call canceled (a second stop cancels none) and what still runs."""
        self._stopping.set()
        session = self.session
        if session is not None:
            session.inbox.close()
        canceled: list[str] = []
        for task in self.table.live():
            if task.state == "submitted":  # sent, never begun: it will not run now
                if self.sink.final(task.task_id, "canceled", NOT_STARTED, task.context_id,
                                   functools.partial(self.table.cancel, task, NOT_STARTED)):
                    canceled.append(task.task_id)
            elif not task.terminal:
                self.table.cancel(task, CANCELED)
                canceled.append(task.task_id)
        if session is not None:
            session.cancel.set()
        if self._first is not None:
            self._first.put(None)
        return {"session_id": session.session_id if session is not None else "",
                "canceled": canceled, "residue": self.residue.items()}

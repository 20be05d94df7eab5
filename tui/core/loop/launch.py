"""What a launch is given and what it leaves: the options of `murmur-tui launch` as a session
takes them, and the session's result."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from tui.core.errors import NoAnswer
from tui.core.events.kinds import ExitStatus
from tui.core.formation.seat import Seat
from tui.core.formation.spawner import Spawner
from tui.core.fs.workdir import SessionPaths
from tui.core.session_index import Resume


@dataclass(frozen=True)
class LaunchOptions:
    task: str | None = None
    task_file: Path | None = None
    context_id: str | None = None
    workdir: Path | None = None
    home: Path | None = None
    more_tasks: tuple[str, ...] = ()  # `--task` given again: queued after the first, in order
    resume: Resume | None = None  # `--resume`: continue that session's conversation
    seat: Seat | None = None  # a formation's member: its seat, from the formation channel
    spawner: Spawner | None = None  # a delegated child: the session that started it
    name: str | None = None  # `--name`: the session's name (tui/core/names.py)


@dataclass(frozen=True)
class SessionResult:
    session_id: str
    exit_status: ExitStatus
    result: str
    paths: SessionPaths
    record_path: Path | None

    @property
    def ok(self) -> bool:
        return self.exit_status == "ok"


class NoResponder:
    """A session nobody can answer: a tool's question gets no answer."""

    def ask(self, request: object) -> str:
        raise NoAnswer("this session has no way to ask the human")

"""Watching real processes through /proc: is a pid still the process we saw."""

from __future__ import annotations

import os
import signal
from dataclasses import dataclass
from pathlib import Path

from tests.waits import block_until

# A command whose group holds three processes: bash (the leader), a grandchild started in the
# background, and the leader's own child. Both pids land in files in the workdir.
FAMILY = ("sh -c 'echo $$ > grand.pid; exec sleep 300' & echo $$ > leader.pid; "
          "echo started; sleep 300")


@dataclass(frozen=True)
class Seen:
    """A process as first seen: its pid and start time (so a reused pid is not mistaken)."""

    pid: int
    start: int

    def alive(self) -> bool:
        state = _stat(self.pid)
        return state is not None and state[0] not in "ZX" and state[1] == self.start

    def kill(self) -> None:
        if self.alive():
            os.kill(self.pid, signal.SIGKILL)


def _stat(pid: int) -> tuple[str, int] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return fields[0], int(fields[19])


def seen(pid: int) -> Seen:
    state = _stat(pid)
    assert state is not None, f"process {pid} is not there"
    return Seen(pid, state[1])


def family(workdir: Path, timeout: float = 60.0) -> tuple[Seen, Seen]:
    """The leader and grandchild of a running FAMILY command, once both have written."""

    def written() -> bool:
        return all((workdir / name).is_file() and (workdir / name).read_text().strip()
                   for name in ("leader.pid", "grand.pid"))

    block_until(written, timeout, "the command never wrote its pid files")
    return (seen(int((workdir / "leader.pid").read_text())),
            seen(int((workdir / "grand.pid").read_text())))


def ended(pid_file: Path) -> bool:
    """Whether the process whose pid a command wrote to `pid_file` has ended (or is a zombie
    nobody reaped yet)."""
    state = _stat(int(pid_file.read_text()))
    return state is None or state[0] in "ZX"


def children(pid: int) -> list[int]:
    """The direct children of `pid` (all its threads)."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(child) for child in (task / "children").read_text().split()]
    return found


def cmdline(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]
    except OSError:
        return []

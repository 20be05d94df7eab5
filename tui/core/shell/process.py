"""The process groups of running shell commands (docs/shell.md): each command runs in its own
group and never outlives its call. The group is killed when the call is canceled, at its
deadline, when the command's own process exits (whatever it left in the background) and when
the supervisor exits (`kill_running`, run at exit; the CLI calls it on SIGTERM/SIGHUP). Should
the supervisor be killed outright, a watchdog process that holds a pipe to the supervisor kills
the groups all the same.

A command being started is not lost to an exit either: on the main thread Ctrl-C
(KeyboardInterrupt) and the exit signals' handlers wait until the command's group is written
down (a command interrupted so ends with its call), `kill_running` waits for the starts under
way on other threads, and once it has run no command starts. A SIGKILL in the instant
between a command's start and its group being written down cannot be held off; for that the
watchdog also finds, at the end, every process still carrying this supervisor's mark in its
environment (`WATCH_MARK`, given to every command) and kills it: no gate in front of each
command, nothing paid until the supervisor is gone (docs/shell.md).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType

from tui.core.shell.live import LiveLines
from tui.core.shell.output import OutputCapture

_READ_SIZE = 64 * 1024
_POLL_SECONDS = 0.05  # only where a process cannot be waited on through a descriptor
_KILLED_WAIT = 1.0  # once killed, how long between two kills while the leader lingers
_DRAIN_READS = 16  # after the leader exits: at most this many reads of what is left (1 MiB)
_STARTS_WAIT = 5.0  # how long `kill_running` waits for commands being started to be known
_HELD_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                      if hasattr(signal, name))
_WATCHDOG_SHELL = "/bin/sh"
# Every command's environment carries this supervisor's mark, so a command started in the
# instant before its group was announced is still found (in /proc/<pid>/environ) once the
# supervisor is gone. Not a secret: knowing it only gets a process killed with the supervisor.
WATCH_MARK = "MURMUR_TUI_WATCH"
_MARK_VALUE = f"{os.getpid()}-{os.urandom(8).hex()}"
# One per supervisor process, in a session of its own. It keeps the set of running groups the
# supervisor announces ("+ <pgid>" / "- <pgid>") and, at end of file — the supervisor is gone,
# however it went — kills every group still in it, then every process marked as this
# supervisor's command ($1: the mark as it reads in an environment), three times 0.2 s apart: a
# process in the middle of an exec shows no environment for that instant, and one being forked
# shows its parent's.
_WATCHDOG_SCRIPT = """\
live=" "
while read -r op pg; do
  case "$op $live" in
    "+ "*" $pg "*) ;;
    "+ "*) live="$live$pg " ;;
    "- "*" $pg "*) live="${live%%" $pg "*} ${live#*" $pg "}" ;;
  esac
done
for pg in $live; do kill -9 -"$pg" 2>/dev/null; done
for round in 1 2 3; do
  for f in $(grep -l -a -F -e "$1" /proc/[0-9]*/environ 2>/dev/null); do
    p=${f#/proc/}; p=${p%/environ}
    kill -9 -"$p" "$p" 2>/dev/null
  done
  sleep 0.2
done
"""

class Group:
    """One running command's process group."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.pgid = process.pid  # start_new_session: the leader's pid is the group's id
        self.reason: str | None = None
        self.started = time.monotonic()
        self.pipes: dict[int, int] | None = None  # descriptor -> stream (0 stdout, 1 stderr)
        self._lock = threading.RLock()  # re-entrant: kill_running may run in a signal handler
        self._reaped = False

    def kill(self, reason: str | None = None) -> None:
        """SIGKILL the whole group (at once; nothing a command could trap). Safe until reaped:
        the unreaped leader keeps the group's id from being reused."""
        with self._lock:
            if self._reaped:
                return
            if reason is not None and self.reason is None:
                self.reason = reason
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signal.SIGKILL)

    def finish(self) -> int:
        """Once the leader has exited (or on the way out of an error): kill what is left of the
        group, take it off the watchdog's list, reap the leader. Returns its return code."""
        self.kill()
        with self._lock:
            self._reaped = True
        _LIVE.pop(self.pgid, None)
        _WATCHDOG.remove(self.pgid)
        code = self.process.wait()
        for pipe in (self.process.stdout, self.process.stderr):
            if pipe is not None:  # a process that left the group now writes to a closed pipe
                pipe.close()
        return code


class _Watchdog:
    """The shell that kills the running groups should the supervisor die without doing it
    (SIGKILL, a crash): it blocks reading a pipe only the supervisor writes. Started at the
    first command, started again if something killed it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._pipe: int | None = None

    def ensure(self) -> None:
        """Have a watchdog running before a command starts (so the command is never running
        while no watchdog could hear of it)."""
        with self._lock:
            if self._pipe is None or self._process is None or self._process.poll() is not None:
                self._start()

    def add(self, pgid: int) -> None:
        self._send(f"+ {pgid}\n")

    def remove(self, pgid: int) -> None:
        self._send(f"- {pgid}\n")

    @property
    def pid(self) -> int | None:
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def _send(self, line: str) -> None:
        with self._lock:
            for _ in range(2):
                if self._pipe is None or self._process is None or self._process.poll() is not None:
                    self._start()
                if self._pipe is None:
                    return  # no shell to run one: the exit hook and the CLI's handlers remain
                try:
                    os.write(self._pipe, line.encode())
                    return
                except OSError:
                    self._stop()

    def _start(self) -> None:
        self._stop()
        if not os.access(_WATCHDOG_SHELL, os.X_OK):
            return
        read_end, write_end = os.pipe()
        try:
            self._process = subprocess.Popen(
                [_WATCHDOG_SHELL, "-c", _WATCHDOG_SCRIPT, "watchdog",
                 f"{WATCH_MARK}={_MARK_VALUE}"], stdin=read_end,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
                env={"PATH": os.defpath}, start_new_session=True)
        except OSError:
            os.close(write_end)
            return
        finally:
            os.close(read_end)
        self._pipe = write_end
        for pgid in list(_LIVE):  # a restarted watchdog learns what is running now
            with contextlib.suppress(OSError):
                os.write(write_end, f"+ {pgid}\n".encode())

    def _stop(self) -> None:
        if self._pipe is not None:
            with contextlib.suppress(OSError):
                os.close(self._pipe)
            self._pipe = None
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def close(self) -> None:
        """At exit, after every group was killed: end of file, and the watchdog ends."""
        with self._lock:
            if self._pipe is not None:
                os.close(self._pipe)
                self._pipe = None
            if self._process is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._process.wait(timeout=5)


_LIVE: dict[int, Group] = {}
_WATCHDOG = _Watchdog()
# The threads inside `spawn`, from before Popen until the group is in _LIVE; re-entrant, for
# `kill_running` may run in a signal handler on a thread that holds it.
_STARTS = threading.Condition(threading.RLock())
_STARTING: set[int] = set()
_closing = False  # kill_running has run: no command starts any more


def kill_running() -> None:
    """Kill the process group of every command still running (the supervisor is exiting),
    waiting a moment for the commands being started on other threads; none starts afterwards.
    Safe from a signal handler and from any thread."""
    global _closing
    me = threading.get_ident()
    with _STARTS:
        _closing = True
        _STARTS.wait_for(lambda: not _STARTING - {me}, timeout=_STARTS_WAIT)
    for group in list(_LIVE.values()):
        group.kill("supervisor exit")


def running_groups() -> tuple[int, ...]:
    """The process group ids of the commands running now."""
    return tuple(_LIVE)


def watchdog_pid() -> int | None:
    """The watchdog's pid while it runs."""
    return _WATCHDOG.pid


def _at_exit() -> None:
    kill_running()
    _WATCHDOG.close()


atexit.register(_at_exit)


def spawn(argv: list[str], workdir: Path, env: dict[str, str]) -> Group:
    """Start `argv` in a process group of its own, known to the watchdog before it runs.
    Raises OSError (or SubprocessError: the parent died between fork and exec) if it cannot."""
    _WATCHDOG.ensure()
    me = threading.get_ident()
    with _STARTS:
        if _closing:
            raise OSError(errno.ESHUTDOWN, "murmur-tui is exiting")
        _STARTING.add(me)
    group: Group | None = None
    try:
        with _signals_held():
            process = subprocess.Popen(
                argv, cwd=workdir, env={**env, WATCH_MARK: _MARK_VALUE},
                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, start_new_session=True,
            )
            group = Group(process)
            _LIVE[group.pgid] = group
            _WATCHDOG.add(group.pgid)
    except BaseException:
        if group is not None:  # Ctrl-C while it started: the command ends with its call
            group.finish()
        raise
    finally:
        with _STARTS:
            _STARTING.discard(me)
            _STARTS.notify_all()
    return group


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """On the main thread, where Python runs signal handlers, a SIGINT, SIGTERM or SIGHUP with
    a handler that arrives in the block is handled at its end: KeyboardInterrupt raised inside
    Popen, or an exit handler run there, would lose the process Popen had just started."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    handlers = {number: handler for number in _HELD_SIGNALS
                if callable(handler := signal.getsignal(number))}
    held: list[tuple[int, FrameType | None]] = []
    for number in handlers:
        signal.signal(number, lambda signum, frame: held.append((signum, frame)))
    try:
        yield
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
        for signum, frame in held:
            handlers[signum](signum, frame)


def pump(group: Group, capture: OutputCapture, deadline: float,
         live: LiveLines | None = None, grace: float | None = None) -> bool:
    """Read both streams as they arrive until the leader exits; past the deadline kill the
    group (and keep reading until the leader is gone). With `live`, wake in time to show a
    line that waits for its end (`LiveLines.due_in`). With `grace` (seconds), return False
    once it has passed and the command still runs (call again to go on reading); True once
    the leader has exited and what it wrote is read."""
    process = group.process
    assert process.stdout is not None and process.stderr is not None
    pipes = group.pipes
    if pipes is None:
        pipes = group.pipes = {process.stdout.fileno(): 0, process.stderr.fileno(): 1}
        for fd in pipes:
            os.set_blocking(fd, False)
    exit_fd = _exit_descriptor(process.pid)
    ends_at = group.started + deadline
    grace_ends = None if grace is None else group.started + grace
    with selectors.DefaultSelector() as selector:
        for fd in pipes:
            selector.register(fd, selectors.EVENT_READ)
        if exit_fd is not None:
            selector.register(exit_fd, selectors.EVENT_READ)
        try:
            while not _exited(process.pid):
                now = time.monotonic()
                if grace_ends is not None and now >= grace_ends and group.reason is None:
                    return False
                remaining = ends_at - now
                if remaining <= 0 and group.reason is None:
                    group.kill("timeout")
                if grace_ends is not None:
                    remaining = min(remaining, max(grace_ends - now, 0.0))
                if group.reason is not None:  # killed: wait for the leader, killing again
                    group.kill()              # now and then (a setuid child may linger)
                    remaining = _KILLED_WAIT
                wait = max(remaining, 0.0)
                if exit_fd is None:
                    wait = min(wait, _POLL_SECONDS)
                due = live.due_in() if live is not None else None
                if due is not None:
                    wait = min(wait, due)
                for key, _ in selector.select(wait):
                    if key.fd in pipes and not _read(key.fd, pipes[key.fd], capture):
                        selector.unregister(key.fd)
                        del pipes[key.fd]
                if live is not None:
                    live.tick()
            group.kill()  # whatever the leader left behind; then what is already written
            for fd, index in pipes.items():
                for _ in range(_DRAIN_READS):  # bounded: a process outside the group may
                    if not _read(fd, index, capture, drain=True):  # still be writing
                        break
            return True
        finally:
            if exit_fd is not None:
                os.close(exit_fd)


def _read(fd: int, index: int, capture: OutputCapture, drain: bool = False) -> bool:
    """One read; False at end of file (or, when draining, once nothing is waiting)."""
    try:
        data = os.read(fd, _READ_SIZE)
    except BlockingIOError:
        return not drain
    except OSError:
        data = b""
    if not data:
        capture.end(index)
        return False
    capture.feed(index, data)
    return True


def _exit_descriptor(pid: int) -> int | None:
    """A descriptor that becomes readable when `pid` exits (Linux 5.3+), else None."""
    if sys.platform != "linux":
        return None
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def _exited(pid: int) -> bool:
    """Whether the leader has exited, without reaping it (so its group id stays ours)."""
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True

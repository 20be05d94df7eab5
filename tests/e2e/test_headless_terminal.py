"""Headless in a terminal, as a person runs it: the question is shown once (the event line on
stdout is the question; stderr adds only the "> " prompt), and when stdin ends before an
answer the failed call's reason is said on the line before its "← … error" line. A real
`launch --headless` process on a pseudo-terminal (Python's `pty`); the asking tool is the
`request-input` import of the Murmur host interface (spec: murmur-runtime.md, "Host imports")."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.conftest import CapsuleFactory
from tests.e2e.test_headless_stdin import ASK, asking
from tests.e2e.test_screen_exit import read_until
from tests.responses import text_response


def on_a_terminal(root: Path, home: Path) -> tuple[subprocess.Popen[bytes], int]:
    controller, terminal = pty.openpty()
    session = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--task", "ask me"],
        stdin=terminal, stdout=terminal, stderr=terminal, close_fds=True,
        env=dict(os.environ, MURMUR_HOME=str(home), TERM="xterm-256color"))
    os.close(terminal)
    return session, controller


def test_in_a_terminal_the_question_is_printed_once(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = asking(make_capsule, [ASK, text_response("thanks")])
    session, controller = on_a_terminal(root, murmur_home)
    seen = bytearray()
    try:
        assert read_until(controller, b"> ", 60, seen), bytes(seen[-400:])
        os.write(controller, b"yes\n")
        assert read_until(controller, b"session ok", 60, seen), bytes(seen[-400:])
        assert session.wait(timeout=60) == 0
    finally:
        session.kill()
        os.close(controller)
    text = bytes(seen).decode()
    assert text.count('asks: {"q":"go on?"}') == 1, text
    assert '? ask asks: {"q":"go on?"}\r\n> ' in text


def test_stdin_ending_before_an_answer_says_why_the_call_failed(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = asking(make_capsule, [ASK, text_response("went on")])
    session, controller = on_a_terminal(root, murmur_home)
    seen = bytearray()
    try:
        assert read_until(controller, b"> ", 60, seen), bytes(seen[-400:])
        os.write(controller, b"\x04")  # Ctrl-D on an empty line: the end of stdin
        assert read_until(controller, b"session ok", 60, seen), bytes(seen[-400:])
        session.wait(timeout=60)
    finally:
        session.kill()
        os.close(controller)
    lines = bytes(seen).decode().replace("\r\n", "\n").splitlines()
    failed = next(i for i, line in enumerate(lines) if line.startswith("← ask error"))
    assert lines[failed - 1] == ("murmur-tui: ask got no answer: no --answer left and stdin "
                                 "is closed"), lines


def test_stdin_closed_from_the_start_says_why_on_stderr(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = asking(make_capsule, [ASK, text_response("went on")])
    done = subprocess.run(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--task", "ask me"],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
        env=dict(os.environ, MURMUR_HOME=str(murmur_home)))
    assert "← ask error" in done.stdout.decode()
    assert ("murmur-tui: ask got no answer: no --answer left and stdin is closed\n"
            in done.stderr.decode())
    assert '? ask asks: {"q":"go on?"}' in done.stdout.decode()  # the question, on stdout

"""`murmur-tui launch` on a real terminal (a pseudo-terminal): once the screen closes, the
command prints one line saying what the session left, as headless mode does."""

from __future__ import annotations

import os
import pty
import re
import select
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import CapsuleFactory
from tests.responses import text_response
from tui.commands.launch_screen import quit_summary


def read_until(fd: int, wanted: bytes, within: float, seen: bytearray) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # the other side closed
                return wanted in seen
            if not chunk:
                return wanted in seen
            seen.extend(chunk)
            if wanted in seen:
                return True
    return wanted in seen


def test_quitting_the_screen_prints_the_sessions_outcome(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    # gpt-4.1 ($2 in, $8 out a million) and the provider's usage: 1000·2 + 500·8 µ$
    root = make_capsule([{**text_response("all done"),
                          "usage": {"input_tokens": 1000, "output_tokens": 500}}],
                        model="gpt-4.1")
    controller, terminal = pty.openpty()
    env = dict(os.environ, TERM="xterm-256color", COLUMNS="120", LINES="40")
    app = subprocess.Popen([sys.executable, "-m", "tui", "launch", str(root), "--task", "hi"],
                           stdin=terminal, stdout=terminal, stderr=terminal, env=env,
                           close_fds=True)
    os.close(terminal)
    seen = bytearray()
    try:
        assert read_until(controller, b"finished ok", 60, seen), bytes(seen[-400:])
        os.write(controller, b"\x11")  # Ctrl+Q: the prompt has the keys (q would be text)
        assert read_until(controller, b"murmur-tui: session ses_", 60, seen)
        read_until(controller, b"\n", 10, seen)
        assert app.wait(timeout=60) == 0
    finally:
        app.kill()
        os.close(controller)
    line = bytes(seen).split(b"murmur-tui: session ", 1)[1].split(b"\n", 1)[0].decode()
    assert re.search(r" ended ok · \d+ in / \d+ out tokens · \$0\.0060 · workdir ", line), line
    assert " · record " in line
    assert str(murmur_home / "conversations" / "test-capsule") in line


def test_the_summary_line_is_one_printable_line() -> None:
    line = quit_summary("ses_1", "canceled", Path("/w/\x1b[2Jx"), None)
    assert line == "murmur-tui: session ses_1 ended canceled · workdir /w/␛[2Jx · no record"

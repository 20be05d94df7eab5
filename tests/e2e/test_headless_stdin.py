"""Headless stdin as a careless user feeds it: `yes |` into a session that asks once, a line
longer than any answer, bytes that are not UTF-8. What is read is bounded (a line at a time,
at most a few ahead of their use), a line over the cap is not taken and said so, and every
answer is whole text."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from tests.conftest import CapsuleFactory, read_jsonl
from tests.responses import call_response, text_response, tool_response
from tests.wasm.conftest import FIXTURES
from tui.core.asking.stdin_lines import MAX_LINE

ASK = call_response("ask", {"q": "go on?"}, "q1")
RSS_BOUND_MIB = 200  # generous: a session's own size is well under it
TOO_MUCH = 256 << 20  # bytes of `y` lines: the unbounded reader held all of them


def asking(make_capsule: CapsuleFactory, script: list[dict[str, Any]]) -> Path:
    return make_capsule(script, tools={"ask": FIXTURES / "ask_tool.wasm"})


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def launch(root: Path, home: Path, stdin: Any) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--json",
         "--task", "ask me"], stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, MURMUR_HOME=str(home)))


def events(out: bytes) -> list[dict[str, Any]]:
    return [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]


def test_an_endless_producer_on_stdin_keeps_a_headless_session_small(
        make_capsule: CapsuleFactory, murmur_home: Path, tmp_path: Path) -> None:
    # `yes |`: the question is answered by the first `y`, then a command runs while the
    # producer goes on writing. The session must stop reading (the producer then waits on a
    # full pipe) instead of holding all it is sent.
    running, go = tmp_path / "running", tmp_path / "go"
    root = asking(make_capsule, [ASK, tool_response(f"touch {running}; while [ ! -e {go} ]; "
                                                    "do sleep 0.05; done"),
                                 text_response("done")])
    session = launch(root, murmur_home, subprocess.PIPE)
    written = [0]

    def produce() -> None:
        chunk = b"y\n" * 4096
        assert session.stdin is not None
        # the session ended (the pipe broke), or communicate() closed our end under us
        with contextlib.suppress(OSError, ValueError):
            while True:
                session.stdin.write(chunk)
                session.stdin.flush()
                written[0] += len(chunk)

    threading.Thread(target=produce, daemon=True).start()
    largest = 0.0
    try:
        deadline = time.monotonic() + 60
        while not running.exists():  # the answer was taken and the command runs
            assert time.monotonic() < deadline, "the session never ran its command"
            largest = max(largest, rss_mib(session.pid))
            time.sleep(0.05)
        last, still_since = -1, time.monotonic()
        while written[0] < TOO_MUCH and time.monotonic() - still_since < 1.0:
            largest = max(largest, rss_mib(session.pid))
            if written[0] != last:  # still taking what it is sent
                last, still_since = written[0], time.monotonic()
            assert time.monotonic() < deadline + 60, "neither stalled nor took it all"
            time.sleep(0.05)
        go.touch()
        out, err = session.communicate(timeout=60)
    finally:
        if session.poll() is None:
            session.kill()
            session.wait(30)
    assert session.returncode == 0, err.decode()
    answered = next(e for e in events(out) if e["event"] == "InputAnswered")
    assert answered["answer"] == "y"
    assert written[0] < TOO_MUCH, "the session read all it was sent"
    assert largest < RSS_BOUND_MIB, f"the session grew to {largest:.0f} MiB"


def test_a_line_over_the_cap_is_not_taken_and_the_next_line_answers(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = asking(make_capsule, [ASK, text_response("done")])
    session = launch(root, murmur_home, subprocess.PIPE)
    out, err = session.communicate(b"x" * (MAX_LINE + 10) + b"\nmain\n", timeout=60)
    assert session.returncode == 0, err.decode()
    assert f"a line of stdin was not taken: {MAX_LINE + 11} bytes" in err.decode()
    answered = next(e for e in events(out) if e["event"] == "InputAnswered")
    assert answered["answer"] == "main"


def test_an_answer_on_stdin_that_is_not_utf8_reaches_the_tool_with_replacement_characters(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = asking(make_capsule, [ASK, text_response("done")])
    session = launch(root, murmur_home, subprocess.PIPE)
    out, err = session.communicate(b"ma\xff\xfein\n", timeout=60)
    assert session.returncode == 0, err.decode()
    answered = next(e for e in events(out) if e["event"] == "InputAnswered")
    assert answered["answer"] == "ma\ufffd\ufffdin"
    record = next(murmur_home.glob("conversations/*/*/conversation.jsonl"))
    assert "ma\ufffd\ufffdin" in json.dumps(read_jsonl(record), ensure_ascii=False)

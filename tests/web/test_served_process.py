"""A fleet process as textual-serve runs it for a browser tab, spoken to directly over its
stdin and stdout in Textual's web-driver packets (no browser): the prelude comes once, a
packet split across two writes still arrives whole, and `q` ends the run with the `exit` that
makes the server close the tab's websocket."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from tui.web import DRIVER, LINK_ENV


def packet(kind: bytes, payload: bytes) -> bytes:
    return kind + len(payload).to_bytes(4, "big") + payload


def test_a_served_fleet_process_speaks_the_web_driver_protocol_and_ends_on_q(
        murmur_home: Path) -> None:
    env = {**os.environ, "TEXTUAL_DRIVER": DRIVER, LINK_ENV: "full", "COLUMNS": "100",
           "ROWS": "30"}
    process = subprocess.Popen([sys.executable, "-m", "tui", "fleet"], env=env,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    seen = bytearray()

    def read() -> None:
        assert process.stdout is not None
        while chunk := process.stdout.read1(65536):
            seen.extend(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        ends = time.monotonic() + 60
        while b"Needs you" not in seen:  # the fleet screen is drawn
            assert time.monotonic() < ends, bytes(seen[:500])
            time.sleep(0.05)
        resize = packet(b"M", json.dumps({"type": "resize", "width": 90,
                                          "height": 25}).encode())
        quit_key = packet(b"D", b"q")
        for part in (resize, quit_key[:3], quit_key[3:]):  # a packet in two writes
            process.stdin.write(part)
            process.stdin.flush()
            time.sleep(0.05)
        assert process.wait(30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
    reader.join(10)
    assert seen.startswith(b"__GANGLION__\n") and seen.count(b"__GANGLION__") == 1
    assert seen.endswith(packet(b"M", json.dumps({"type": "exit"}).encode()))
    assert process.stderr is not None and process.stderr.read() == b""  # it went to a log
    assert not list((murmur_home / "tui" / "web").glob("*.log"))  # empty: not kept

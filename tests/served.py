"""Shared by the door's tests: a real `murmur-tui launch --headless --serve` process, spoken to
with httpx over loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

V1 = {"A2A-Version": "1.0"}
SLEEP = "lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n  queue_depth: 4\n"


class Served:
    def __init__(self, process: subprocess.Popen[str], ready: dict[str, Any]) -> None:
        self.process = process
        address = str(ready["url"])  # `host:port`, as `mur run --json` writes it
        self.url = address if "://" in address else f"http://{address}"
        self.session_id = str(ready["session_id"])
        self.ready = ready
        self.client = httpx.Client(base_url=self.url, timeout=30)

    def rpc(self, method: str, params: dict[str, Any] | None = None,
            headers: dict[str, str] | None = None) -> httpx.Response:
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            body["params"] = params
        try:
            return self.client.post("/", json=body, headers={**V1, **(headers or {})})
        except httpx.ConnectError as exc:
            raise AssertionError(f"{method}: the door refused a connection ({exc}); "
                                 f"{self.how_it_went()}") from exc

    def how_it_went(self) -> str:
        """The served process's state, and what it wrote to stderr once it has ended."""
        code = self.process.poll()
        if code is None:
            return "the session still runs"
        err = self.process.stderr.read()[-4000:] if self.process.stderr else ""
        return f"the session exited {code}: {err}"

    def send(self, text: str, **extra: Any) -> dict[str, Any]:
        message = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": text}], **extra}
        reply = self.rpc("SendMessage", {"message": message}).json()
        assert "result" in reply, reply
        return dict(reply["result"]["task"])

    def watch_until(self, marker: bytes) -> bytes:
        """`stream/watch` read until `marker` shows in the stream (its replay first)."""
        with self.client.stream("POST", "/", headers=V1, json={
                "jsonrpc": "2.0", "id": 2, "method": "stream/watch"}) as watch:
            seen = b""
            for chunk in watch.iter_bytes():
                seen += chunk
                if marker in seen:
                    break
        return seen

    def until(self, task_id: str, state: str) -> dict[str, Any]:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            task = self.rpc("GetTask", {"id": task_id}).json()["result"]
            if task["status"]["state"] == state:
                return dict(task)
            time.sleep(0.05)
        raise AssertionError(f"{task_id} never reached {state}: {task}")


def serve(root: Path, *args: str) -> Served:
    process = subprocess.Popen(
        [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--json", "--serve",
         *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        text=True, env=dict(os.environ))
    assert process.stdout is not None
    while True:  # events the session's setup printed (compiling a component) come first
        line = process.stdout.readline()
        if not line:
            raise AssertionError(process.stderr.read() if process.stderr else
                                 "no readiness line")
        ready = json.loads(line)
        if "event" not in ready:
            return Served(process, ready)


@pytest.fixture
def served() -> Iterator[list[Served]]:
    running: list[Served] = []
    yield running
    for item in running:
        if item.process.poll() is None:
            item.process.kill()
        item.process.wait(30)
        item.client.close()


def killed_once(root: Path, home: Path, task: str, pattern: str, marker: str,
                what: str) -> Path:
    """`murmur-tui launch ROOT --headless --task TASK`, SIGKILLed once a file matching
    `pattern` (under ROOT) holds `marker`: that file. `what` says what never happened."""
    import signal

    env = dict(os.environ, MURMUR_HOME=str(home))
    process = subprocess.Popen([sys.executable, "-m", "tui", "launch", str(root), "--headless",
                                "--task", task], env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        found: list[Path] = []
        while time.monotonic() < deadline and not found:
            found = [path for path in root.glob(pattern) if marker in path.read_text()]
            time.sleep(0.05)
        assert found, f"the headless session never {what}"
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(60)
    return found[0]

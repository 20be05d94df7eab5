"""Cancel means canceled: Ctrl-C (headless: one SIGINT) or the door's CancelTask while the
built-in HTTP driver waits for a provider that took the request and answers nothing — or
only the start of a stream, or a stream that trickles — ends the task `canceled`, at once,
with the connection closed (the provider sees it go) and nothing retried. The latency itself
is measured in tests/benchmarks/cancel.py; these tests wait for each outcome with a timeout
below the driver's connect and read timeouts, which the old code waited out."""

from __future__ import annotations

import json
import os
import queue
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import read_jsonl
from tests.providers.server import Provider, holding, openai_answer, openai_frames
from tests.providers.test_http_drivers import capsule
from tests.served import SLEEP, Served, serve, served  # noqa: F401 - the fixture
from tests.waits import block_until
from tui.core.inference.abortable import Backend, abortable

# seconds a test waits for what a cancel does (it takes milliseconds): below the driver's
# connect timeout (30 s) and read timeout (300 s), which the old code waited out
PATIENCE = 20.0


def until(condition: Any, what: str, seconds: float = PATIENCE) -> None:
    block_until(condition, seconds, what, step=0.02)


def connecting_to(port: int) -> bool:
    """Whether a socket on this machine is sending SYNs to 127.0.0.1:`port` (SYN_SENT)."""
    target = f"0100007F:{port:04X}"
    lines = Path("/proc/net/tcp").read_text().splitlines()[1:]
    return any(line.split()[2] == target and line.split()[3] == "02" for line in lines)


class Headless:
    """`murmur-tui launch ROOT --headless --json --task …`, its events read as they come."""

    def __init__(self, root: Path, home: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tui", "launch", str(root), "--headless", "--json",
             "--task", "what is here?"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL, text=True, env=dict(os.environ, MURMUR_HOME=str(home)))
        self.events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            if line.startswith("{"):
                self.events.put(json.loads(line))
        self.events.put(None)

    def next(self, name: str) -> dict[str, Any]:
        deadline = time.monotonic() + PATIENCE
        while True:
            event = self.events.get(timeout=max(0.01, deadline - time.monotonic()))
            assert event is not None, f"the session ended without {name}"
            if event["event"] == name:
                return event

    def finish(self) -> tuple[int, str]:
        _, err = self.process.communicate(timeout=PATIENCE)
        return self.process.returncode, err


@pytest.fixture
def headless() -> Any:
    started: list[Headless] = []

    def start(root: Path, home: Path) -> Headless:
        started.append(Headless(root, home))
        return started[-1]

    yield start
    for item in started:
        if item.process.poll() is None:
            item.process.kill()
        item.process.wait(30)


@pytest.mark.parametrize(("kind", "headers"), [("openai", False), ("anthropic", True)],
                         ids=["nothing answered", "a stream begun then silent"])
def test_one_ctrl_c_while_the_provider_is_silent_ends_the_task_canceled_and_hangs_up(
        provider: Provider, tmp_path: Path, murmur_home: Path, headless: Any, kind: str,
        headers: bool) -> None:
    provider.replies = [holding(headers)]
    root = capsule(tmp_path / "c", murmur_home, kind, provider.url)
    run = headless(root, murmur_home)
    run.next("TurnStarted")
    until(lambda: provider.seen, "the request reached the provider")
    run.process.send_signal(signal.SIGINT)
    canceled = run.next("TaskCanceled")
    assert canceled["phase"] == "inference"
    assert run.next("TaskEnded")["exit_status"] == "canceled"
    assert provider.hung_up.wait(PATIENCE), "the provider never saw the connection close"
    code, err = run.finish()
    assert code == 1 and "Traceback" not in err and "internal error" not in err
    assert len(provider.seen) == 1  # a cancel is not a broken connection: never retried
    trace = read_jsonl(next(root.glob("workdir/*/trace.jsonl")))
    task_end = next(line for line in trace if line["event_type"] == "task_end")
    assert task_end["exit_status"] == "canceled"
    assert next(root.glob("workdir/*/out/result.txt")).read_text() == \
        "error: canceled by the user"


def test_one_ctrl_c_while_a_stream_trickles_ends_the_task_canceled(
        provider: Provider, tmp_path: Path, murmur_home: Path, headless: Any) -> None:
    provider.replies = [lambda h: h.sse(openai_frames("x" * 2000, pieces=1000), delay=0.1)]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    run = headless(root, murmur_home)
    run.next("TextDelta")  # the answer is arriving
    run.process.send_signal(signal.SIGINT)
    assert run.next("TaskEnded")["exit_status"] == "canceled"
    assert provider.hung_up.wait(PATIENCE), "the provider never saw the connection close"
    code, err = run.finish()
    assert code == 1 and "internal error" not in err and len(provider.seen) == 1


def test_the_doors_cancel_task_ends_a_silent_model_call_canceled_and_the_session_serves_on(
        provider: Provider, tmp_path: Path, murmur_home: Path,
        served: list[Served]) -> None:  # noqa: F811 - the fixture
    provider.replies = [holding(), openai_answer("second task done")]
    root = capsule(tmp_path / "c", murmur_home, "openai", provider.url)
    manifest = root / "murmur.yaml"
    manifest.write_text(manifest.read_text() + SLEEP)
    session = serve(root)
    served.append(session)
    task = session.send("wait for the provider")
    until(lambda: provider.seen, "the request reached the provider")
    reply = session.rpc("CancelTask", {"id": task["id"]}).json()
    assert "result" in reply, reply
    assert session.until(task["id"], "TASK_STATE_CANCELED")["status"]["state"] == \
        "TASK_STATE_CANCELED"
    assert provider.hung_up.wait(PATIENCE), "the provider never saw the connection close"
    second = session.send("and now this")
    done = session.until(second["id"], "TASK_STATE_COMPLETED")
    assert "second task done" in json.dumps(done)
    assert len(provider.seen) == 2  # the canceled call was not tried again


def test_one_ctrl_c_while_the_connection_is_still_being_opened_ends_the_task_canceled(
        tmp_path: Path, murmur_home: Path, headless: Any) -> None:
    # a listener whose one-place backlog is full: the kernel drops the next SYN, so the
    # driver's connect hangs as it would to a provider host that drops packets
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    filler = socket.create_connection(listener.getsockname())
    try:
        root = capsule(tmp_path / "c", murmur_home, "openai",
                       f"http://127.0.0.1:{listener.getsockname()[1]}")
        run = headless(root, murmur_home)
        port = listener.getsockname()[1]
        until(lambda: connecting_to(port), "the driver began to connect")
        run.process.send_signal(signal.SIGINT)
        assert run.next("TaskEnded")["exit_status"] == "canceled"
        code, err = run.finish()
        assert code == 1 and "internal error" not in err and "could not reach" not in err
    finally:
        filler.close()
        listener.close()


def test_every_pool_of_a_drivers_client_is_wrapped() -> None:
    # the hook reaches into httpx: a version that moved the pools fails here, not silently
    import httpx

    with httpx.Client() as client:
        assert abortable(client)
        assert isinstance(client._transport._pool._network_backend, Backend)  # type: ignore[attr-defined]

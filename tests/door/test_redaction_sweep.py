"""Redaction everywhere: a real served session (`launch --headless --serve`, an authenticated
door with a `watcher` credential) holding a provider key (a loopback provider that echoes it)
is given a task whose text holds the key and the door's tokens, a shell command holding the key
that goes on in the background, and a tool question answered with the key. Then every file
under the workdir and `$MURMUR_HOME` and every body the door answered with — SendMessage,
GetTask, the streamed task and the watch stream — is searched for each secret in every form the
redaction promises (raw, JSON-escaped, URL-encoded, hex, base64 at each alignment); and every
file murmur-tui created is 0600, every folder 0700.

The one place a door token is meant to be on disk is the session's running record (and today
also `running/<session>.token`, 0600): those values alone are left out of the search."""

from __future__ import annotations

import json
import os
import stat
import threading
import time
from pathlib import Path
from typing import Any

import httpx

from tests.e2e.test_key_leaks import searched_forms
from tests.providers.server import Provider, openai_answer, openai_call
from tests.served import V1, Served, serve
from tests.waits import block_until
from tests.wasm.conftest import FIXTURES

KEY = "sk-sweep/Zq8+w9x7Yb3Kd9Pq2Lm5=end"
WAIT_FOR_GO = "while [ ! -f go ]; do sleep 0.05; done"
DEADLINE = 120.0


def manifest(provider: Provider) -> str:
    return (
        "name: sweep\nversion: '1'\nartifacts:\n"
        "  - name: model\n    runtime: driver\n    builtin: openai\n"
        f"    gateway:\n      endpoint: {provider.url}/v1\n      api_key: ${{SWEEP_KEY}}\n"
        f"  - name: ask\n    runtime: tool\n    source: {FIXTURES}/ask_tool.wasm\n"
        "capabilities:\n  shell:\n    allow: [bash]\n"
        "inference:\n  model: test-model\n  max_turns: 8\n"
        "  retry: {max_attempts: 1}\n  driver:\n    artifact: model\n"
        "lifecycle:\n  task_acceptance: queue\n  after_task: sleep\n  queue_depth: 4\n"
        "  shell_grace_secs: 0.3\n  input_timeout_secs: 120\n"
        "network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
        "      watcher: {scopes: [stream/watch, GetTask]}\n")


class Door:
    """The served session spoken to with a bearer token; every body it answers is kept."""

    def __init__(self, served: Served, token: str) -> None:
        self.served = served
        self.headers = {**V1, "Authorization": f"Bearer {token}"}
        self.bodies: list[bytes] = []

    def rpc(self, method: str, params: dict[str, Any] | None = None,
            token: str | None = None) -> dict[str, Any]:
        headers = {**self.headers, **({"Authorization": f"Bearer {token}"} if token else {})}
        body: dict[str, Any] = {"jsonrpc": "2.0", "id": 1, "method": method}
        if params is not None:
            body["params"] = params
        reply = self.served.client.post("/", json=body, headers=headers, timeout=DEADLINE)
        self.bodies.append(reply.content)
        value: dict[str, Any] = reply.json()
        return value

    def until(self, task_id: str, state: str, token: str | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + DEADLINE
        while time.monotonic() < deadline:
            task: dict[str, Any] = self.rpc("GetTask", {"id": task_id}, token)["result"]
            if task["status"]["state"] == state:
                return task
            time.sleep(0.05)
        raise AssertionError(f"{task_id} never reached {state}")

    def stream(self, body: dict[str, Any], token: str | None, until: bytes) -> bytes:
        """A streamed answer read until `until` shows in it (kept whole)."""
        headers = {**self.headers, **({"Authorization": f"Bearer {token}"} if token else {})}
        seen = b""
        with self.served.client.stream("POST", "/", json=body, headers=headers,
                                       timeout=DEADLINE) as reply:
            for chunk in reply.iter_bytes():
                seen += chunk
                if until in seen:
                    break
        self.bodies.append(seen)
        return seen


def trace_kinds(trace: Path) -> list[str]:
    """The event types of the trace's whole lines (one being written is left for later)."""
    if not trace.exists():
        return []
    kinds = []
    for line in trace.read_text().splitlines():
        try:
            kinds.append(json.loads(line)["event_type"])
        except ValueError:
            continue
    return kinds


def secrets_in(texts: dict[str, bytes], secrets: dict[str, str]) -> list[tuple[str, str, str]]:
    """(secret, form, where) of every form of every secret found."""
    return [(name, form, where) for name, secret in secrets.items()
            for form, needle in searched_forms(secret).items()
            for where, data in texts.items() if needle.encode() in data]


def files_under(*roots: Path, skip: frozenset[Path]) -> dict[str, bytes]:
    """Every file's bytes under `roots` — the running record without its token fields (the one
    place a door token belongs on disk), the token file not at all."""
    found: dict[str, bytes] = {}
    for root in roots:
        for path in root.rglob("*"):
            if path in skip or path.is_symlink() or not path.is_file():
                continue
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                continue  # a file replaced meanwhile (written beside, then renamed): its
                # content is read under its own name
            if path.parent.name == "running" and path.suffix == ".token":
                continue
            if path.parent.name == "running" and ".json" in path.name:  # also while written
                record = json.loads(data)
                record.pop("door_token", None)
                record.pop("credentials", None)
                data = json.dumps(record).encode()
            found[str(path)] = data
    return found


def modes_murmur_tui_made(roots: list[Path], skip: frozenset[Path]) -> list[tuple[str, str]]:
    """(path, mode) of every file not 0600 and folder not 0700 under `roots`."""
    wrong = []
    for root in roots:
        for path in [root, *root.rglob("*")]:
            if path in skip or path.is_symlink():
                continue
            try:
                mode = stat.S_IMODE(path.stat().st_mode)
            except FileNotFoundError:
                continue  # a file being replaced (written beside, then renamed)
            if mode != (0o700 if path.is_dir() else 0o600):
                wrong.append((str(path), oct(mode)))
    return wrong


def test_no_secret_reaches_a_file_or_a_door_answer_in_any_encoding_and_every_file_is_private(
        provider: Provider, tmp_path: Path, murmur_home: Path, served: list[Served]) -> None:
    murmur_home.mkdir(mode=0o700)
    config = murmur_home / "config.yaml"
    config.write_text(f"credentials:\n  SWEEP_KEY: '{KEY}'\n")
    config.chmod(0o600)
    root = tmp_path / "capsule"
    root.mkdir()
    (root / "murmur.yaml").write_text(manifest(provider))
    provider.replies = [
        openai_call("c1", "bash", [json.dumps({"command": f"{WAIT_FOR_GO}; echo {KEY}"})]),
        openai_call("c2", "ask", [json.dumps({"q": "which key?"})]),
        openai_answer(f"done with {KEY}"),  # the provider echoes the key back
        openai_answer(f"the background command printed {KEY}"),  # its completion task
        openai_answer("second task done"),
    ]
    old_umask = os.umask(0o022)
    try:
        door = serve(root)
    finally:
        os.umask(old_umask)
    served.append(door)
    record_file = murmur_home / "running" / f"{door.session_id}.json"
    record = json.loads(record_file.read_text())
    token_file = murmur_home / "running" / f"{door.session_id}.token"
    operator = record.get("door_token") or token_file.read_text().strip()
    credentials: dict[str, str] = record.get("credentials") or {}
    watcher = credentials.get("watcher")  # written where Murmur writes it, once it is
    secrets = {"key": KEY, "operator": operator, **({"watcher": watcher} if watcher else {})}
    talk = Door(door, operator)
    reader = watcher or operator  # the watcher's scopes reach GetTask and stream/watch
    workdir = Path(record["workdir"])
    trace = workdir / "trace.jsonl"

    watched: list[bytes] = []

    def watch() -> None:  # the whole watch stream, from before the first task to the stop
        headers = {**V1, "Authorization": f"Bearer {reader}"}
        with httpx.Client(base_url=door.url, timeout=DEADLINE) as client, client.stream(
                "POST", "/", headers=headers,
                json={"jsonrpc": "2.0", "id": 9, "method": "stream/watch"}) as reply:
            for chunk in reply.iter_bytes():
                watched.append(chunk)

    output: dict[str, list[str]] = {"stdout": [], "stderr": []}

    def drain(name: str, stream: Any) -> None:  # the process never blocks on a full pipe
        output[name].extend(iter(stream.readline, ""))

    drains = [threading.Thread(target=drain, args=(name, getattr(door.process, name)),
                               daemon=True) for name in output]
    for thread in drains:
        thread.start()
    watcher_thread = threading.Thread(target=watch, daemon=True)
    watcher_thread.start()
    block_until(lambda: bool(watched), DEADLINE, "the watch stream opened")

    told = " ".join(secrets.values())
    first = talk.rpc("SendMessage", {"message": {
        "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": f"use these: {told}"}]}})
    task_id = first["result"]["task"]["id"]
    asking = talk.until(task_id, "TASK_STATE_INPUT_REQUIRED", reader)
    assert asking["history"][0]["parts"][0]["text"].count("[redacted]") == len(secrets)
    # while the task runs: its task.md, the demoted command's log and record
    during = files_under(root, murmur_home, skip=frozenset({config}))
    assert str(workdir / "task.md") in during
    assert secrets_in(during, secrets) == []
    answered = talk.rpc("SendMessage", {"message": {
        "messageId": "m2", "role": "ROLE_USER", "taskId": task_id,
        "parts": [{"text": f"the key is {KEY}"}]}})
    assert "result" in answered, answered
    done = talk.until(task_id, "TASK_STATE_COMPLETED", reader)
    assert done["artifacts"][0]["parts"][0]["text"] == "done with [redacted]"

    # the demoted command may end now; its completion runs as the next task
    assert (workdir / "background.jsonl").exists()
    (workdir / "go").write_text("")
    block_until(lambda: trace_kinds(trace).count("task_end") == 2, DEADLINE,
                "the completion task ended")
    second = talk.stream({"jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage",
                          "params": {"message": {"messageId": "m3", "role": "ROLE_USER",
                                                 "parts": [{"text": f"again {told}"}]}}},
                         None, b"TASK_STATE_COMPLETED")
    assert b"second task done" in second

    made_by_test = frozenset({tmp_path, root, root / "murmur.yaml", murmur_home, config,
                              workdir / "go"})
    live = files_under(root, murmur_home, skip=frozenset({config}))
    live.update({f"door answer {n}": body for n, body in enumerate(talk.bodies)})
    assert secrets_in(live, secrets) == []
    assert modes_murmur_tui_made([root, murmur_home], made_by_test) == []

    talk.rpc("session/stop")
    assert door.process.wait(DEADLINE) in (0, 1)
    watcher_thread.join(DEADLINE)
    after = files_under(root, murmur_home, skip=frozenset({config}))
    after["watch stream"] = b"".join(watched)
    for thread in drains:  # to the end of the process's output
        thread.join(DEADLINE)
        assert not thread.is_alive()
    for name, lines in output.items():
        after[name] = "".join(lines).encode()
    assert secrets_in(after, secrets) == []
    assert modes_murmur_tui_made([root, murmur_home], made_by_test) == []
    # what was searched holds what the secrets became, and the session did what was asked
    everything = b"".join([*during.values(), *live.values(), *after.values()])
    assert everything.count(b"[redacted]") > 10
    assert during[str(workdir / "task.md")].count(b"[redacted]") == len(secrets)
    for name in ("background.jsonl", "journal.jsonl", "trace.jsonl"):
        assert any(path.endswith(name) for path in after), name
    assert any(path.endswith(".log") and "/logs/wrk_" in path for path in after)
    assert b"shell_detached" in after[str(trace)] and b"shell_completed" in after[str(trace)]
    assert all(seen.headers["authorization"] == f"Bearer {KEY}" for seen in provider.seen)

"""Running records as Murmur writes them, from v0.2.0 to v0.11.0, read by `ps`, `attach` and
`token`; murmur-tui's own records, tokens and readiness line as current `mur` writes them. Every
fixture is built from Murmur's formats as the spec restates them (murmur-newest.md §4.1 the
record's keys by release, §4.4 tokens and `mur token`, §4.5 the readiness line, §6.1 session
addresses, §6.3 `mur ps` pruning), against real processes, real doors and the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CapsuleFactory, run_cli
from tests.door_fake import FakeDoor, serving
from tests.fleet.test_ps import trace
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tests.waits import block_until
from tui.commands.fleet import resolve
from tui.core import ids
from tui.core.running import records as running
from tui.core.running.records import RunningRecord

CREDENTIALS = ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
               "      watcher:\n        scopes: [stream/watch, GetTask]\n"
               "      sender:\n        scopes: [SendMessage, GetTask]\n")
TEN_KEYS = {"session_id", "url", "pid", "process_start", "capsule_name", "capsule_version",
            "workdir", "records_dir", "outlives_launcher", "started_at"}
FORMATION = "frm_019f01a940ce7761854e768ecbe3d399"


def write_file(home: Path, session_id: str, value: dict[str, Any]) -> Path:
    """A record file as `mur` writes it: one JSON object, 0600 in a 0700 folder."""
    path = running.running_dir(home) / f"{session_id}.json"
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.write_text(json.dumps(value, indent=2))
    path.chmod(0o600)
    return path


def our_record(home: Path, session_id: str) -> dict[str, Any]:
    return dict(json.loads((running.running_dir(home) / f"{session_id}.json").read_text()))


def finish_a_task(door: Served, home: Path) -> None:
    """One task sent with the operator token and run to its end: the trace names a model."""
    token = our_record(home, door.session_id)["door_token"]
    door.client.headers["Authorization"] = f"Bearer {token}"
    door.until(door.send("hello")["id"], "TASK_STATE_COMPLETED")


def v011_record(ours: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """The v0.11.0 shape (§4.1): the ten required keys in Murmur's order, the tokens, and
    every optional key a formation member's record carries; `url` as `mur` writes it for a
    door bound to loopback, `localhost:<port>` (§4.5)."""
    port = str(ours["url"]).rpartition(":")[2]
    return {
        "session_id": ours["session_id"], "url": f"localhost:{port}", "pid": ours["pid"],
        "process_start": ours["process_start"], "capsule_name": ours["capsule_name"],
        "capsule_version": ours["capsule_version"], "workdir": str(workdir),
        "records_dir": ours["records_dir"], "outlives_launcher": True,
        "started_at": ours["started_at"], "door_token": ours["door_token"],
        "credentials": ours["credentials"], "formation_id": FORMATION,
        "formation_member": "coder", "formation_entry": False, "formation_lifeline": True,
        "formation_launcher": {"pid": os.getpid(), "process_start": "12345"},
        "spawned_by": "ses_019f01a940ce7761854e768ecbe3aaaa", "unconfined": False,
    }


def test_a_record_current_mur_wrote_shows_in_ps_and_attach_and_token_present_its_tokens(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served],
        tmp_path: Path) -> None:
    """A v0.11.0 record (§4.1) of a real served session whose door authenticates: `ps`
    verifies it with its `door_token` (the extended card, §4.2), reads the trace from
    `records_dir` (its `workdir` is another folder), shows its formation and no token;
    `attach` resolves it by a suffix with that token; `token` prints each (§4.4)."""
    door = serve(make_capsule([text_response("done")], extra=SLEEP + CREDENTIALS))
    served.append(door)
    finish_a_task(door, murmur_home)
    ours = our_record(murmur_home, door.session_id)
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    murs = v011_record(ours, workspace)
    write_file(murmur_home, door.session_id, murs)
    secrets = [murs["door_token"], *murs["credentials"].values()]

    listed = run_cli("ps", "--json", timeout=90)
    assert listed.returncode == 0, listed.stderr
    [row] = json.loads(listed.stdout)
    assert (row["session_id"], row["status"], row["door"]) == (door.session_id, "running", "1.0")
    assert row["detached"] is True and row["formation_id"] == FORMATION
    assert row["model"] is not None and row["workdir"] == str(workspace)
    table = run_cli("ps", timeout=90)
    assert door.session_id in table.stdout and "running" in table.stdout
    assert not any(secret in listed.stdout + listed.stderr + table.stdout + table.stderr
                   for secret in secrets)

    session_id, url, record, token = resolve(murmur_home, door.session_id[-6:], None)
    assert session_id == door.session_id and token == murs["door_token"]
    assert record is not None and record.kept["formation_member"] == "coder"
    assert url == door.url

    printed = run_cli("token", door.session_id[-4:])
    assert (printed.returncode, printed.stdout, printed.stderr) == (
        0, f"{murs['door_token']}\n", "")
    watcher = run_cli("token", "--credential", "watcher")  # @1: the one running
    assert watcher.stdout == f"{murs['credentials']['watcher']}\n"
    assert our_record(murmur_home, door.session_id) == murs  # read, never rewritten


def test_a_v020_record_is_listed_and_a_dead_one_is_pruned_by_ps_and_kept_by_ps_all(
        murmur_home: Path, tmp_path: Path) -> None:
    """Two records in v0.2.0's nine-key shape (§4.1, RUNREC's test): one of this process,
    serving a legacy door, listed `running`; one whose process is gone — `ps --all` lists it
    `gone` and keeps it, `ps` removes it with Murmur's `pruned:` line (§4.6, §6.3)."""
    live, dead = ids.session_id(), ids.session_id()
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    own = RunningRecord.for_this_process(live, "127.0.0.1:1", "old", "0.2.0", tmp_path)
    # a card of v0.4.0 and earlier names its session at the top (`session_id`)
    with serving(FakeDoor("A", session_id=live, name="old", version="0.2.0",
                          previous=True)) as door:
        trace(tmp_path / "old", live)
        for session, pid, url in ((live, own.pid, door.url.removeprefix("http://")),
                                  (dead, child.pid, "127.0.0.1:1")):
            write_file(murmur_home, session, {
                "session_id": session, "url": url, "pid": pid,
                "process_start": own.process_start, "capsule_name": "old",
                "capsule_version": "0.2.0", "workdir": str(tmp_path / "old"),
                "outlives_launcher": False, "started_at": "2026-08-21T10:00:00Z"})
        everything = run_cli("ps", "--json", "--all", timeout=90)
        rows = {row["session_id"]: row for row in json.loads(everything.stdout)}
        assert rows[live]["status"] == "running" and rows[live]["door"] == "legacy"
        assert rows[live]["model"] == "claude-haiku-4-5" and rows[live]["records_dir"] is None
        assert rows[dead]["status"] == "gone" and "pruned" not in everything.stderr
        assert (murmur_home / "running" / f"{dead}.json").exists()

        listed = run_cli("ps", timeout=90)
    assert listed.returncode == 0, listed.stderr
    assert f"pruned: {dead} — no process holds pid {child.pid}" in listed.stderr
    assert live in listed.stdout and dead not in listed.stdout
    assert sorted(os.listdir(murmur_home / "running")) == [f"{live}.json"]


def test_our_record_carries_every_key_current_mur_requires_and_the_tokens_only_there(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    """§4.1: the ten required keys, `url` as `host:port`, `records_dir` holding the trace,
    0600 in a 0700 folder; §4.4: the operator's token in `door_token`, each declared
    credential's in `credentials`, no other file holding a token."""
    door = serve(make_capsule([text_response("x")], extra=SLEEP + CREDENTIALS))
    served.append(door)
    finish_a_task(door, murmur_home)
    path = running.running_dir(murmur_home) / f"{door.session_id}.json"
    written = our_record(murmur_home, door.session_id)
    assert set(written) >= TEN_KEYS
    assert set(written) - TEN_KEYS == {"door_token", "credentials"}
    assert list(written)[:10] == ["session_id", "url", "pid", "process_start", "capsule_name",
                                  "capsule_version", "workdir", "records_dir",
                                  "outlives_launcher", "started_at"]
    assert "://" not in written["url"] and f"http://{written['url']}" == door.url
    assert (Path(written["records_dir"]) / "trace.jsonl").is_file()
    assert isinstance(written["outlives_launcher"], bool)
    assert path.stat().st_mode & 0o777 == 0o600 and path.parent.stat().st_mode & 0o777 == 0o700
    assert sorted(written["credentials"]) == ["sender", "watcher"]
    assert os.listdir(path.parent) == [path.name]  # no `.token` file beside it


@pytest.mark.parametrize("terminal", [True, False], ids=["terminal", "detached"])
def test_outlives_launcher_says_whether_the_launcher_had_no_controlling_terminal(
        terminal: bool) -> None:
    """§4.1: `outlives_launcher` is true when the launcher had no controlling terminal
    (Murmur's `/dev/tty` probe). A real process in a session of its own is given one (a
    pseudo-terminal it opens, which becomes its controlling terminal) or none."""
    import pty

    main, secondary = pty.openpty()
    opens = f"os.close(os.open({os.ttyname(secondary)!r}, os.O_RDWR)); " if terminal else ""
    script = ("import json, os; from tui.core.running.records import RunningRecord as R; "
              f"{opens}print(json.dumps(R.for_this_process('ses_x', None, 'n', '1', "
              "'/tmp').to_json()))")
    try:
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              start_new_session=True, timeout=60)
    finally:
        os.close(main)
        os.close(secondary)
    assert done.returncode == 0, done.stderr
    written = json.loads(done.stdout)
    assert written["outlives_launcher"] is (not terminal)
    assert written["url"] is None and written["records_dir"] == "/tmp"


def test_the_readiness_line_has_mur_run_jsons_shape(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    """§4.5: `{name, pid, session_id, url, version, workdir}`, `url` without a scheme, plus
    `"auth": "bearer"` for a door that asks for a token — and no token; human mode prints
    `murmur: url …`, `murmur: auth bearer (… token <ses>)` and `session: …`."""
    door = serve(make_capsule([text_response("x")], extra=SLEEP + CREDENTIALS))
    served.append(door)
    ready = door.ready
    assert set(ready) == {"name", "pid", "session_id", "url", "version", "workdir", "auth"}
    assert ready["auth"] == "bearer" and ready["pid"] == door.process.pid
    assert (ready["name"], ready["version"]) == ("test-capsule", "1.0.0")
    written = our_record(murmur_home, door.session_id)
    assert ready["url"] == written["url"] and ready["workdir"] == written["workdir"]
    assert written["door_token"] not in json.dumps(ready)
    public = serve(make_capsule([text_response("x")], extra=SLEEP, folder="public"))
    served.append(public)
    assert "auth" not in public.ready and set(public.ready) == set(ready) - {"auth"}

    root = make_capsule([text_response("x")], extra=SLEEP + CREDENTIALS, folder="human")
    human = subprocess.Popen([sys.executable, "-m", "tui", "launch", str(root), "--headless",
                              "--serve", "127.0.0.1:0"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
    try:
        assert human.stdout is not None
        lines: list[str] = []
        while not lines or not lines[-1].startswith("session: "):
            line = human.stdout.readline()
            assert line, f"no session line: {lines}"
            lines.append(line.rstrip("\n"))
    finally:
        human.kill()
        human.wait(30)
    session = lines[-1].removeprefix("session: ")
    assert lines[-3].startswith("murmur: url 127.0.0.1:")
    assert lines[-2] == f"murmur: auth bearer (murmur-tui token {session})"


def test_token_refuses_as_mur_token_does_and_prints_a_token_nowhere_else(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    """§4.4: E-RUN-049 names the credentials the session minted, E-RUN-048 a public door;
    §6.1: an unknown or stopped session is E-RUN-022, a path is not a running session."""
    door = serve(make_capsule([text_response("x")], extra=SLEEP + CREDENTIALS))
    served.append(door)
    public = serve(make_capsule([text_response("x")], extra=SLEEP, folder="public"))
    served.append(public)
    secrets = [our_record(murmur_home, door.session_id)["door_token"],
               *our_record(murmur_home, door.session_id)["credentials"].values()]
    missing = run_cli("token", door.session_id, "--credential", "auditor")
    assert missing.returncode == 2 and missing.stdout == ""
    assert (f"{door.session_id} minted no credential 'auditor'; it has: operator, sender, "
            "watcher [E-RUN-049]") in missing.stderr
    none = run_cli("token", public.session_id)
    assert none.returncode == 2 and "[E-RUN-048]" in none.stderr
    assert "has a public door" in none.stderr
    unknown = run_cli("token", "ses_0000000000000000000000000000beef")
    assert unknown.returncode == 2 and "[E-RUN-022]" in unknown.stderr
    path = run_cli("token", "workdir/ses_x/trace.jsonl")
    assert path.returncode == 2 and "is a path" in path.stderr
    said = "".join(result.stdout + result.stderr for result in (missing, none, unknown, path))
    assert not any(secret in said for secret in secrets)


def test_a_session_without_a_door_has_a_record_with_url_null(
        murmur_home: Path, make_capsule: CapsuleFactory) -> None:
    """§4.1 (v0.9.0 onward): a session with no door writes its record at its start with
    `url: null`; layers 1 and 2 alone decide it (§4.2); it has no token (E-RUN-048); the
    record goes when the session ends."""
    root = make_capsule([text_response("x")], extra=SLEEP)
    session = subprocess.Popen([sys.executable, "-m", "tui", "launch", str(root), "--headless",
                                "--task", "hello"],
                               stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    folder = running.running_dir(murmur_home)
    try:
        block_until(lambda: folder.is_dir() and any(
            name.endswith(".json") for name in os.listdir(folder)),
            what="the session's record")
        [name] = os.listdir(folder)
        written = json.loads((folder / name).read_text())
        assert written["url"] is None and set(written) >= TEN_KEYS
        assert written["pid"] == session.pid
        [row] = json.loads(run_cli("ps", "--json", timeout=90).stdout)
        assert (row["status"], row["url"], row["door"]) == ("running", None, None)
        refused = run_cli("token")
        assert "serves no door" in refused.stderr and "[E-RUN-048]" in refused.stderr
    finally:
        assert session.stdin is not None
        session.stdin.close()  # the end of its tasks: the session ends
        session.wait(60)
    assert os.listdir(folder) == []

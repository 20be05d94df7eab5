"""Declared credentials, written where Murmur writes them: a served session's running record
holds the operator token in `door_token` and each declared credential's token under
`credentials`; `attach --credential NAME` and `ps --credential NAME` present that token alone,
and the door holds it to its scopes."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import pytest

from tests.conftest import CapsuleFactory, run_cli
from tests.door_fake import FakeDoor, serving
from tests.fleet.test_ps import record, trace
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.attach import RemoteSource
from tui.commands.fleet import resolve
from tui.core import ids
from tui.core.errors import DoorError

WATCHER = ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
           "      watcher:\n        scopes: [stream/watch, GetTask]\n"
           "      sender:\n        scopes: [SendMessage, GetTask]\n")


def record_file(home: Path, session_id: str) -> dict[str, object]:
    return dict(json.loads((home / "running" / f"{session_id}.json").read_text()))


def test_a_served_session_writes_each_declared_credential_in_its_record_and_not_the_operator(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule([text_response("x")], extra=SLEEP + WATCHER))
    served.append(door)
    path = murmur_home / "running" / f"{door.session_id}.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    written = record_file(murmur_home, door.session_id)
    operator = str(written["door_token"])
    assert not (murmur_home / "running" / f"{door.session_id}.token").exists()  # record only
    credentials = written["credentials"]
    assert isinstance(credentials, dict) and sorted(credentials) == ["sender", "watcher"]
    assert operator not in credentials.values()
    watched = door.rpc("GetTask", {"id": "tsk_none"},
                       {"Authorization": f"Bearer {credentials['watcher']}"})
    assert watched.status_code == 200 and watched.json()["error"]["code"] == -32001
    sent = door.rpc("SendMessage", {"message": {"messageId": "m", "role": "ROLE_USER",
                                                "parts": [{"text": "hi"}]}},
                    {"Authorization": f"Bearer {credentials['watcher']}"})
    assert sent.status_code == 403 and sent.json()["error"] == "insufficient_scope"
    said = door.ready
    assert not any(token in json.dumps(said) for token in [operator, *credentials.values()])

    public = serve(make_capsule([text_response("x")], extra=SLEEP, folder="public"))
    served.append(public)
    plain = record_file(murmur_home, public.session_id)
    assert "credentials" not in plain and "door_token" not in plain


async def test_a_watcher_attach_watches_but_session_stop_with_it_is_refused_403(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule([text_response("done")], extra=SLEEP + WATCHER))
    served.append(door)
    session_id, url, record_, token = resolve(murmur_home, door.session_id, None, "watcher")
    written = record_file(murmur_home, door.session_id)
    credentials = written["credentials"]
    assert isinstance(credentials, dict) and token == credentials["watcher"]
    operator = str(written["door_token"])
    remote = RemoteSource(murmur_home, session_id, url, record_, token=token)
    app = SupervisorApp(murmur_home, source=remote)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(pilot, lambda: remote.link_state == "live" and
                       app.state.capsule == "test-capsule", within=30)
        started = await asyncio.to_thread(door.rpc, "SendMessage", {"message": {
            "messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "count to one"}]}},
            {"Authorization": f"Bearer {operator}"})
        assert started.status_code == 200, started.text
        await wait_until(pilot, lambda: app.state.tasks_ended == 1, within=30)  # it watches
        assert app.state.result == "done"
        with pytest.raises(DoorError) as refused:
            await asyncio.to_thread(remote.link.stop)
        assert refused.value.status == 403 and refused.value.reason == "insufficient_scope"
        assert "session/stop" in refused.value.text and token not in refused.value.text
        await pilot.press("ctrl+q")
    assert door.process.poll() is None  # still serving: the watcher could not stop it
    stopped = door.rpc("session/stop", {}, {"Authorization": f"Bearer {operator}"})
    assert stopped.status_code == 200
    assert door.process.wait(60) == 0


def test_attach_with_a_credential_the_session_did_not_mint_names_those_it_has(
        murmur_home: Path, make_capsule: CapsuleFactory, served: list[Served]) -> None:
    door = serve(make_capsule([text_response("x")], extra=SLEEP + WATCHER))
    served.append(door)
    public = serve(make_capsule([text_response("x")], extra=SLEEP, folder="public"))
    served.append(public)
    missing = run_cli("attach", door.session_id, "--credential", "auditor", timeout=60)
    assert missing.returncode == 2
    assert (f"{door.session_id} minted no credential 'auditor'; it has: operator, sender, "
            "watcher [E-RUN-049]") in missing.stderr
    none = run_cli("attach", public.session_id, "--credential", "watcher", timeout=60)
    assert none.returncode == 2 and "minted no credential 'watcher'" in none.stderr
    assert "no network.authentication" in none.stderr and "[E-RUN-048]" in none.stderr
    both = run_cli("attach", door.session_id, "--credential", "watcher", "--token-file",
                   "/dev/null", timeout=60)
    assert both.returncode == 2 and "not allowed with argument" in both.stderr
    url = run_cli("attach", door.url, "--credential", "watcher", timeout=60)
    assert url.returncode == 2 and "name the session" in url.stderr
    tokens = [str(record_file(murmur_home, door.session_id)["door_token"]),
              *dict(record_file(murmur_home, door.session_id)["credentials"]).values()]
    said = missing.stderr + none.stderr + both.stderr + url.stderr
    assert not any(token in said for token in tokens)


def test_ps_with_a_credential_presents_that_token_alone(murmur_home: Path, tmp_path: Path
                                                       ) -> None:
    session = ids.session_id()
    with serving(FakeDoor(session_id=session, token="tok-watcher-5521")) as door:
        trace(tmp_path / "w", session)
        record(murmur_home, session, door.url, tmp_path / "w", door_token="tok-operator-7730",
               credentials={"watcher": "tok-watcher-5521"})
        as_watcher = run_cli("ps", "--json", "--credential", "watcher", timeout=90)
        as_auditor = run_cli("ps", "--json", "--credential", "auditor", timeout=90)
        seen = [request.headers.get("authorization") for request in door.requests]
    [watched] = json.loads(as_watcher.stdout)
    assert watched["status"] == "running", watched["reason"]
    [unknown] = json.loads(as_auditor.stdout)
    assert unknown["status"] == "unreachable"
    assert "no token of credential 'auditor' is known" in unknown["reason"]
    assert set(seen) == {None, "Bearer tok-watcher-5521"}  # never the operator's
    for result in (as_watcher, as_auditor):
        assert "tok-" not in result.stdout + result.stderr


@pytest.mark.parametrize(("credentials", "said"), [
    (7, "`credentials` is a number, expected an object"),
    ({"watcher": 3}, "`credentials` maps a name to a number"),
    ({"watch\u001b[2Jer": "tok"}, "a name with a control character"),
    ({f"c{i}": "tok" for i in range(65)}, "names 65 credentials"),
])
def test_a_record_whose_credentials_are_not_names_to_tokens_is_named(
        murmur_home: Path, tmp_path: Path, credentials: object, said: str) -> None:
    session = ids.session_id()
    good = record(murmur_home, session, "127.0.0.1:1", tmp_path)
    path = murmur_home / "running" / f"{session}.json"
    path.write_text(json.dumps({**good.to_json(), "credentials": credentials}))
    result = run_cli("ps", timeout=60)
    assert result.returncode == 0 and "Traceback" not in result.stderr
    assert f"not a running record: {path}: " in result.stderr and said in result.stderr
    assert "\x1b" not in result.stderr

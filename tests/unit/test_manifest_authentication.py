"""`network.authentication` in the manifest model: the door's bearer credentials, typed and
checked by the manifest reader, each bad value refused naming file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import run_cli
from tui.core.door.auth import Tokens, declared_credentials
from tui.core.errors import ManifestError
from tui.core.manifest import model
from tui.core.manifest.reader import parse_capsule

FILE = Path("/capsules/demo/murmur.yaml")
HEAD = 'name: demo\nversion: "1.0.0"\n'  # lines 1-2; the network block starts on line 3


def capsule(block: str) -> model.Capsule:
    return parse_capsule(FILE, HEAD + block)


def refused(block: str) -> list[str]:
    with pytest.raises(ManifestError) as info:
        capsule(block)
    return str(info.value).splitlines()


def test_no_network_block_is_a_public_door() -> None:
    assert capsule("").network == model.Network()
    assert capsule("").network.authentication is None
    assert declared_credentials(capsule("")) is None


def test_credentials_in_each_spelling_read_as_names_and_scopes() -> None:
    mapping = capsule("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
                      "      watcher:\n        scopes: [stream/watch, GetTask]\n"
                      "      sender: [SendMessage]\n")
    listed = capsule("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
                     "      - {name: watcher, scopes: [stream/watch, GetTask]}\n"
                     "      - {name: sender, scopes: [SendMessage]}\n")
    expected = model.Authentication("bearer", (
        model.DoorCredential("watcher", ("stream/watch", "GetTask")),
        model.DoorCredential("sender", ("SendMessage",))))
    assert mapping.network.authentication == expected
    assert listed.network.authentication == expected
    assert declared_credentials(mapping) == {
        "watcher": frozenset({"stream/watch", "GetTask"}), "sender": frozenset({"SendMessage"})}


def test_bearer_with_no_credentials_mints_only_the_operator_token() -> None:
    read = capsule("network:\n  internal_port: 41873\n  authentication:\n    scheme: bearer\n")
    assert read.network.authentication == model.Authentication()
    assert read.warnings == ()  # internal_port is Murmur's key: accepted, not warned
    tokens = Tokens.mint("demo", declared_credentials(read), loopback=True)
    assert [c.name for c in tokens.credentials] == ["operator"]
    assert tokens.credentials[0].scopes == frozenset(model.DOOR_SCOPES)


def test_declared_credentials_from_a_manifest_path_reads_the_model(tmp_path: Path) -> None:
    target = tmp_path / "murmur.yaml"
    target.write_text(HEAD + "network:\n  authentication:\n    scheme: bearer\n"
                      "    credentials: {watcher: [GetTask]}\n", encoding="utf-8")
    assert declared_credentials(target) == {"watcher": frozenset({"GetTask"})}
    target.write_text(HEAD + "network:\n  authentication:\n    scheme: basic\n",
                      encoding="utf-8")
    with pytest.raises(ManifestError, match=r"network\.authentication\.scheme"):
        declared_credentials(target)


BAD = [
    ("network: 5\n", "3: network: expected a mapping, got 5"),
    ("network:\n  authentication: yes\n", "4: network.authentication: expected a mapping, got "
     "true"),
    ("network:\n  authentication:\n    credentials: {w: [GetTask]}\n",
     "4: network.authentication.scheme: is required but missing (the one scheme a door takes: "
     "bearer)"),
    ("network:\n  authentication:\n    scheme: basic\n",
     "5: network.authentication.scheme: expected one of bearer (the one scheme a door takes); "
     "got 'basic'"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials: [GetTask]\n",
     "6: network.authentication.credentials[0]: expected a mapping, got 'GetTask'"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials: watcher\n",
     "6: network.authentication.credentials: expected a mapping, got 'watcher'"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
     "      operator: [GetTask]\n",
     "7: network.authentication.credentials.operator: 'operator' is the credential every "
     "authenticated door mints with every scope; name this one otherwise"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
     "      watcher: [message/send]\n",
     "7: network.authentication.credentials.watcher: 'message/send' is not a scope; this door "
     "speaks A2A 1.0, write SendMessage"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
     "      watcher:\n        scopes: [everything]\n",
     "8: network.authentication.credentials.watcher.scopes: 'everything' is not a scope "
     f"(scopes: {', '.join(model.DOOR_SCOPES)})"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n      watcher: {}\n",
     "7: network.authentication.credentials.watcher.scopes: is required but missing (a list of "
     "the door methods this credential reaches)"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n      watcher: 5\n",
     "7: network.authentication.credentials.watcher: expected a list of door method names, "
     "got 5"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
     "      watcher: [GetTask, 7]\n",
     "7: network.authentication.credentials.watcher: expected a list of door method names, "
     "got 7"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
     "      - {scopes: [GetTask]}\n",
     "7: network.authentication.credentials[0].name: is required but missing"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
     "      - {name: w, scopes: [GetTask]}\n      - {name: w, scopes: [CancelTask]}\n",
     "8: network.authentication.credentials[1].name: 'w' is declared twice"),
    ("network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
     "      - {name: \"a\\tb\", scopes: [GetTask]}\n",
     "7: network.authentication.credentials[0].name: 'a\\tb': a credential's name must be "
     "printable text"),
]


@pytest.mark.parametrize(("block", "line"), BAD, ids=[line.split(": ")[1] + f"-{i}"
                                                     for i, (_, line) in enumerate(BAD)])
def test_a_bad_block_names_file_line_and_key(block: str, line: str) -> None:
    assert f"{FILE}:{line}" in refused(block)


def test_every_problem_in_the_block_is_reported_at_once() -> None:
    lines = refused("network:\n  authentication:\n    scheme: Bearer\n    credentials:\n"
                    "      operator: [GetTask]\n      watcher: [tasks/get]\n")
    assert [line.split(": ")[1] for line in lines] == [
        "network.authentication.scheme", "network.authentication.credentials.operator",
        "network.authentication.credentials.watcher"]


def test_an_unknown_key_in_the_block_is_warned_not_refused() -> None:
    read = capsule("network:\n  authentication:\n    scheme: bearer\n    realm: x\n")
    assert [str(w) for w in read.warnings] == [
        f"{FILE}:6: network.authentication.realm: unknown key, ignored [W-SEC-019]"]


def test_the_cli_refuses_a_bad_scope_before_serving(tmp_path: Path) -> None:
    (tmp_path / "murmur.yaml").write_text(
        HEAD + "network:\n  authentication:\n    scheme: bearer\n    credentials:\n"
        "      watcher: [tasks/get]\n", encoding="utf-8")
    done = run_cli("launch", str(tmp_path), "--headless", "--serve", "--task", "t")
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert (f"{tmp_path / 'murmur.yaml'}:7: network.authentication.credentials.watcher: "
            "'tasks/get' is not a scope; this door speaks A2A 1.0, write GetTask"
            ) in done.stderr

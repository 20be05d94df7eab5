"""What another local user could read, and two sessions on one context: folders 0700, trace and
logs 0600, a too-open home or config.yaml warned about, the second writer refused."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.conftest import CapsuleFactory
from tests.responses import text_response, tool_response
from tests.unit.test_session import run_session
from tui.core.errors import ContextInUse
from tui.core.events import vocabulary as ev
from tui.core.inference.credentials import Credentials
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_what_a_session_creates_is_private(make_capsule: CapsuleFactory,
                                           murmur_home: Path) -> None:
    old = os.umask(0o022)
    try:
        root = make_capsule([tool_response("seq 1 20000"), text_response("done")])
        result, sink = run_session(root)
    finally:
        os.umask(old)
    assert result.ok
    assert mode(murmur_home) == 0o700
    for folder in (result.paths.session, result.paths.out, result.paths.logs,
                   root / "workdir", result.paths.shell_logs):
        assert mode(folder) == 0o700, folder
    for file in (result.paths.trace, result.paths.bootstrap_log, result.paths.result):
        assert mode(file) == 0o600, file
    assert result.record_path is not None and mode(result.record_path) == 0o600
    assert not sink.of(ev.Warning)


def test_a_home_other_users_can_read_is_warned_about(make_capsule: CapsuleFactory,
                                                     murmur_home: Path) -> None:
    murmur_home.mkdir(mode=0o755)
    murmur_home.chmod(0o755)
    _, sink = run_session(make_capsule([text_response("done")]))
    warned = [w for w in sink.of(ev.Warning) if w.code == "W-SEC-028"]
    assert len(warned) == 1 and str(murmur_home) in warned[0].text
    assert "chmod 700" in warned[0].text


def test_a_config_yaml_other_users_can_read_is_warned_about(murmur_home: Path) -> None:
    murmur_home.mkdir()
    config = murmur_home / "config.yaml"
    config.write_text("credentials:\n  K: sk-config-0123456789\n")
    config.chmod(0o644)
    warnings: list[tuple[str, str]] = []
    credentials = Credentials(murmur_home, lambda code, text: warnings.append((code, text)))
    assert credentials.resolve("${K}", False, "here").value == "sk-config-0123456789"
    credentials.resolve("${K}", False, "here")
    assert [code for code, _ in warnings] == ["W-SEC-028"]
    assert "chmod 600" in warnings[0][1] and "sk-config" not in warnings[0][1]


def test_a_second_session_on_the_same_context_is_refused(make_capsule: CapsuleFactory,
                                                         murmur_home: Path) -> None:
    root = make_capsule([text_response("done")])
    capsule = load_capsule(root)
    first = Session(capsule, LaunchOptions(context_id="shared"))
    with pytest.raises(ContextInUse) as refused:
        Session(capsule, LaunchOptions(context_id="shared"))
    message = str(refused.value)
    assert "--context shared" in message and first.session_id in message
    assert f"pid {os.getpid()}" in message
    other = Session(capsule, LaunchOptions(context_id="another"))  # another context: fine
    assert first.run().ok and other.run().ok
    again = Session(load_capsule(root), LaunchOptions(context_id="shared"))  # released
    assert again.context_id == "shared"
    again.close_runtime()

"""`exports.peer_tasks.accept` in the manifest model: read as a boolean (default false), a wrong
type refused naming file, line and key; Murmur's other `exports` keys accepted silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from tui.core.errors import ManifestError
from tui.core.manifest.reader import parse_capsule

FILE = Path("/capsules/demo/murmur.yaml")
HEAD = 'name: demo\nversion: "1.0.0"\n'  # lines 1-2; the exports block starts on line 3


def test_a_capsule_without_exports_does_not_serve_peers() -> None:
    assert parse_capsule(FILE, HEAD).exports.peer_tasks_accept is False


def test_peer_tasks_accept_true_serves_peers_and_files_blocks_are_accepted_silently() -> None:
    capsule = parse_capsule(FILE, HEAD + "exports:\n  files:\n    root: out\n"
                            "  peer_tasks:\n    accept: true\n")
    assert capsule.exports.peer_tasks_accept is True
    assert capsule.warnings == ()


def test_a_peer_tasks_accept_that_is_not_a_boolean_is_refused_on_its_line() -> None:
    with pytest.raises(ManifestError) as info:
        parse_capsule(FILE, HEAD + "exports:\n  peer_tasks:\n    accept: maybe\n")
    assert str(info.value) == (f"{FILE}:5: exports.peer_tasks.accept: expected true or false, "
                               "got 'maybe'")


def test_an_unknown_key_under_peer_tasks_is_warned() -> None:
    capsule = parse_capsule(FILE, HEAD + "exports:\n  peer_tasks:\n    accept: true\n"
                            "    acept: true\n")
    assert [str(w) for w in capsule.warnings] == [
        f"{FILE}:6: exports.peer_tasks.acept: unknown key, ignored [W-SEC-019]"]

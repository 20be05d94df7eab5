"""Session names: `launch --name` in real processes — `ps` shows it (NAME, `--json` `name`),
the running record carries it, `--resume` keeps it (or takes a new one), and a name that is not
printable text of at most 64 characters is refused before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import CapsuleFactory, run_cli
from tests.responses import text_response
from tests.served import SLEEP, Served, serve
from tui.core import names
from tui.core.session_index import entries


def test_a_named_session_is_listed_by_its_name_and_keeps_it_over_resume(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    root = make_capsule([text_response("one"), text_response("two"), text_response("three")],
                        extra=SLEEP)
    session = serve(root, "--name", "nightly build ✓", "--task", "stay")
    served.append(session)
    record = json.loads((murmur_home / "running" / f"{session.session_id}.json").read_text())
    assert record["name"] == "nightly build ✓"
    listed = run_cli("ps")
    assert listed.returncode == 0, listed.stderr
    header, row = listed.stdout.splitlines()[:2]
    assert header.startswith("SESSION" + " " * 31 + "NAME" + " " * 11 + "  CAPSULE")
    assert row.startswith(f"{session.session_id}  nightly build ✓  ")
    shown = json.loads(run_cli("ps", "--json").stdout)
    assert [(item["session_id"], item["name"]) for item in shown] == [
        (session.session_id, "nightly build ✓")]
    session.rpc("session/stop")
    session.process.wait(60)
    # resumed: the name goes on, unless --name gives another
    again = run_cli("launch", str(root), "--headless", "--json", "--resume", "@1",
                    "--task", "more")
    assert again.returncode == 0, again.stderr
    resumed = entries(murmur_home)[0].session_id
    assert resumed != session.session_id
    assert names.read(murmur_home)[resumed] == "nightly build ✓"
    renamed = run_cli("launch", str(root), "--headless", "--json", "--resume", "@1",
                      "--name", "morning run", "--task", "more")
    assert renamed.returncode == 0, renamed.stderr
    kept = names.read(murmur_home)
    assert kept[entries(murmur_home)[0].session_id] == "morning run"
    assert kept[resumed] == "nightly build ✓"  # the earlier session keeps its own


def test_an_unnamed_session_lists_no_name_column(
        make_capsule: CapsuleFactory, murmur_home: Path, served: list[Served]) -> None:
    session = serve(make_capsule([text_response("one")], extra=SLEEP), "--task", "stay")
    served.append(session)
    listed = run_cli("ps")
    assert listed.stdout.startswith("SESSION" + " " * 31 + "CAPSULE"), listed.stdout
    assert json.loads(run_cli("ps", "--json").stdout)[0]["name"] is None


def test_hostile_names_are_refused_before_anything_runs(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("never")])
    cases = {
        "\x1b]0;pwned\x07": "murmur-tui: error: --name: a session's name holds only printable "
                            "characters; this one holds U+001B",
        "two\nlines": "murmur-tui: error: --name: a session's name holds only printable "
                      "characters; this one holds U+000A",
        "x" * 65: "murmur-tui: error: --name: a session's name is at most 64 characters; "
                  "this one has 65",
        "   ": "murmur-tui: error: --name: a session's name cannot be empty",
        "evil\u202etxt": "murmur-tui: error: --name: a session's name holds only printable "
                         "characters; this one holds U+202E",
    }
    for name, said in cases.items():
        done = run_cli("launch", str(root), "--headless", "--task", "t", "--name", name)
        assert done.returncode == 2, (name, done.stderr)
        assert done.stderr.strip() == said, (name, done.stderr)
    assert entries(murmur_home) == []  # nothing refused left a session behind
    assert not names.names_path(murmur_home).exists()
    ok = run_cli("launch", str(root), "--headless", "--task", "t", "--name", "x" * 64)
    assert ok.returncode == 0, ok.stderr
    assert list(names.read(murmur_home).values()) == ["x" * 64]

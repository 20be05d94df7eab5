"""`murmur-tui new`'s scaffolds (tui/core/scaffold): the files, read back by the project's own
readers (the manifest reader, the scripted driver's script reader, YAML), the name rule, and
the writing — all of it or nothing, as `mur new --roster` writes."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
import yaml

from tui.core.errors import ManifestError, ScaffoldError
from tui.core.inference.scripted import load_script
from tui.core.manifest.reader import load_capsule
from tui.core.scaffold.capsule import capsule_files
from tui.core.scaffold.formation import formation_files
from tui.core.scaffold.names import artifact_name_problem
from tui.core.scaffold.writer import write_scaffold

MEMBER_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")  # a roster member's name (spec §7.1)


def written(tmp_path: Path, name: str, *, roster: bool) -> Path:
    return write_scaffold(tmp_path, name, formation_files(name) if roster
                          else capsule_files(name))


def yaml_of(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def tree(folder: Path) -> dict[str, str]:
    """Every entry under `folder` with its mode, `d` for a folder."""
    return {str(path.relative_to(folder)): ("d" if path.is_dir() else "f") +
            oct(stat.S_IMODE(path.stat().st_mode)) for path in sorted(folder.rglob("*"))}


# -- the capsule ---------------------------------------------------------------------------------
def test_a_capsule_is_a_manifest_a_script_a_task_and_an_ignore_file(tmp_path: Path) -> None:
    folder = written(tmp_path, "hello", roster=False)
    assert folder == tmp_path / "hello"
    assert sorted(tree(folder)) == [".gitignore", "murmur.yaml", "script.yaml", "task.md"]
    assert (folder / "task.md").read_text() == "Look at your workdir and say what you are.\n"
    assert (folder / ".gitignore").read_text().splitlines()[-1] == "workdir/"


def test_the_capsule_loads_without_a_warning_and_is_driven_by_its_script(
        tmp_path: Path) -> None:
    folder = written(tmp_path, "hello", roster=False)
    capsule = load_capsule(folder)
    assert (capsule.name, capsule.version, capsule.warnings) == ("hello", "0.1.0", ())
    assert capsule.inference is not None and capsule.inference.driver_artifact == "driver"
    [driver] = capsule.artifacts
    assert (driver.name, driver.runtime, driver.builtin) == ("driver", "driver", "scripted")
    raw = yaml_of(folder / "murmur.yaml")
    assert raw["artifacts"][0]["config"] == {"script": "script.yaml"}
    assert (capsule.lifecycle.task_acceptance, capsule.lifecycle.after_task) == ("single", "exit")
    # the script's one tool call is a program the capsule lets the model run
    responses = load_script(folder / "script.yaml")
    [call] = [block for block in responses[0]["content"] if block["type"] == "tool_call"]
    assert call["name"] in capsule.capabilities.shell_allow
    assert [response["stop_reason"] for response in responses] == ["tool_call", "end_turn"]
    assert capsule.inference.max_turns >= len(responses)


def test_the_capsule_says_in_comments_how_to_name_a_real_model(tmp_path: Path) -> None:
    text = (written(tmp_path, "hello", roster=False) / "murmur.yaml").read_text()
    assert "#     builtin: anthropic" in text and "#       api_key: ${ANTHROPIC_API_KEY}" in text


# -- the formation -------------------------------------------------------------------------------
def test_a_formation_is_a_roster_and_two_member_folders(tmp_path: Path) -> None:
    folder = written(tmp_path, "crew", roster=True)
    assert sorted(tree(folder)) == [
        ".gitignore", "lead", "lead/murmur.yaml", "lead/script.yaml", "lead/task.md",
        "roster.yaml", "worker", "worker/murmur.yaml", "worker/script.yaml"]


def test_the_roster_has_the_shape_murmur_gives_it_with_members_by_folder(
        tmp_path: Path) -> None:
    roster = yaml_of(written(tmp_path, "crew", roster=True) / "roster.yaml")
    assert set(roster) == {"roster_version", "members", "reachability"}
    assert roster["roster_version"] == 1
    assert roster["members"] == [{"name": "lead", "source": "lead", "entry": True},
                                 {"name": "worker", "source": "worker"}]
    assert all(MEMBER_NAME.match(member["name"]) for member in roster["members"])
    assert roster["reachability"] == [{"from": "lead", "to": ["worker"]}]


def test_the_roster_shows_the_installed_form_of_each_member_in_comments(
        tmp_path: Path) -> None:
    text = (written(tmp_path, "crew", roster=True) / "roster.yaml").read_text()
    for member in ("lead", "worker"):
        # the commented lines, uncommented in place of source:, are Murmur's member entry
        installed = text.replace(f"    source: {member} ", f"    # source: {member} ", 1)
        at = installed.index(f"#   capsule: crew-{member}\n")
        installed = (installed[:at] + installed[at:].replace("#   capsule:", "capsule:", 1)
                     .replace("#   version:", "version:", 1))
        entry = next(item for item in yaml.safe_load(installed)["members"]
                     if item["name"] == member)
        assert {key: entry[key] for key in ("capsule", "version")} == {
            "capsule": f"crew-{member}", "version": "0.1.0"}
        assert "source" not in entry


def test_lead_is_the_entry_that_calls_single_exit_localhost_and_an_authenticated_door(
        tmp_path: Path) -> None:
    folder = written(tmp_path, "crew", roster=True) / "lead"
    lead = load_capsule(folder)
    assert (lead.name, lead.version, lead.warnings) == ("crew-lead", "0.1.0", ())
    assert (lead.lifecycle.task_acceptance, lead.lifecycle.after_task) == ("single", "exit")
    assert lead.capabilities.network_allow == ("localhost",)
    assert lead.network.authentication is not None
    raw = yaml_of(folder / "murmur.yaml")
    assert raw["network"] == {"authentication": {"scheme": "bearer"}}
    assert raw["inference"]["transport"] == "http"
    assert "exports" not in raw  # lead serves no peer
    assert "spawn" not in raw["capabilities"]  # network.authentication refuses it (E-MAN-003)
    assert [entry.builtin for entry in lead.artifacts] == ["scripted"]


def test_worker_serves_peers_queue_sleep_and_an_authenticated_door(tmp_path: Path) -> None:
    folder = written(tmp_path, "crew", roster=True) / "worker"
    worker = load_capsule(folder)
    assert (worker.name, worker.version, worker.warnings) == ("crew-worker", "0.1.0", ())
    assert (worker.lifecycle.task_acceptance, worker.lifecycle.after_task) == ("queue", "sleep")
    assert worker.network.authentication is not None
    raw = yaml_of(folder / "murmur.yaml")
    assert raw["exports"] == {"peer_tasks": {"accept": True}}
    assert raw["network"] == {"authentication": {"scheme": "bearer"}}
    assert "capabilities" not in raw
    assert raw["inference"]["transport"] == "http"
    assert [entry.builtin for entry in worker.artifacts] == ["scripted"]


def test_lead_calls_worker_with_call_member_then_answers_with_workers_answer(
        tmp_path: Path) -> None:
    folder = written(tmp_path, "crew", roster=True)
    lead = load_script(folder / "lead" / "script.yaml")
    [call] = [block for block in lead[0]["content"] if block["type"] == "tool_call"]
    assert call["name"] == "call-member"
    assert set(call["input"]) == {"member", "task"} and call["input"]["member"] == "worker"
    assert call["input"]["task"]
    # then the turn ends while worker works, and the continued task answers
    assert [response["stop_reason"] for response in lead] == ["tool_call", "end_turn",
                                                              "end_turn"]
    [worker] = load_script(folder / "worker" / "script.yaml")
    answer = worker["content"][0]["text"]
    assert answer == "Hello from worker, the member of crew that lead calls."
    # the scripted driver quotes what worker really said (fenced member:worker) there
    assert lead[-1]["content"][0]["text"] == "worker answered: {{member:worker}}"
    assert (folder / "lead" / "task.md").read_text().strip()


# -- names -------------------------------------------------------------------------------------
@pytest.mark.parametrize(("name", "why"), [
    ("", "it is empty"),
    ("Crew", "it contains an uppercase letter ('C')"),
    ("my crew", "it contains a space (' ')"),
    ("crew_1", "it contains a character ('_')"),
    ("../crew", "it contains a character ('.')"),
    ("cr\x1bew", "it contains a character ('␛')"),
    ("-crew", "it starts with '-'"),
    ("crew-", "it ends with '-'"),
    ("a" * 101, "it is 101 characters long"),
])
def test_a_name_that_is_not_an_artifact_name_says_why(name: str, why: str) -> None:
    assert artifact_name_problem(name) == why
    with pytest.raises(ScaffoldError) as refused:
        capsule_files(name)
    assert refused.value.code == "E-NEW-002" and str(refused.value).endswith(f"{why} [E-NEW-002]")


@pytest.mark.parametrize("name", ["a", "crew", "1st-team", "a-b-c", "a" * 100])
def test_artifact_names_are_taken(name: str) -> None:
    assert artifact_name_problem(name) is None
    assert capsule_files(name)["murmur.yaml"].count(f"\nname: {name} ") == 1


def test_a_formation_name_whose_worker_capsule_name_is_too_long_is_refused() -> None:
    name = "a" * 94  # a capsule of its own; but a94-worker is 101 characters
    assert capsule_files(name)
    with pytest.raises(ScaffoldError) as refused:
        formation_files(name)
    assert f"'{name[:40]}" in str(refused.value) and "it is 101 characters long" in str(
        refused.value) and refused.value.code == "E-NEW-002"
    assert formation_files("a" * 93)["worker/murmur.yaml"]


# -- writing -----------------------------------------------------------------------------------
@pytest.mark.parametrize(("umask", "file_mode", "folder_mode"),
                         [(0o022, 0o644, 0o755), (0o002, 0o664, 0o775)])
def test_files_are_written_as_any_program_writes_a_project_file(
        tmp_path: Path, umask: int, file_mode: int, folder_mode: int) -> None:
    old = os.umask(umask)
    try:
        folder = written(tmp_path, "crew", roster=True)
    finally:
        os.umask(old)
    assert stat.S_IMODE(folder.stat().st_mode) == folder_mode
    modes = tree(folder)
    assert set(modes.values()) == {f"f{oct(file_mode)}", f"d{oct(folder_mode)}"}
    assert modes["lead"] == f"d{oct(folder_mode)}"


@pytest.mark.parametrize("occupant", ["folder", "file", "dangling symlink"])
def test_anything_at_the_path_is_refused_and_left_as_it_was(tmp_path: Path,
                                                            occupant: str) -> None:
    target = tmp_path / "crew"
    if occupant == "folder":
        target.mkdir()
        (target / "mine.txt").write_text("keep me")
    elif occupant == "file":
        target.write_text("keep me")
    else:
        target.symlink_to(tmp_path / "nowhere")
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(ScaffoldError) as refused:
        written(tmp_path, "crew", roster=True)
    assert refused.value.code == "E-NEW-003"
    assert str(refused.value).startswith("./crew already exists; nothing was written")
    assert sorted(os.listdir(tmp_path)) == before
    if occupant != "dangling symlink":
        kept = target / "mine.txt" if occupant == "folder" else target
        assert kept.read_text() == "keep me"
    else:
        assert target.is_symlink() and not target.exists()


def test_a_write_that_fails_leaves_nothing_behind(tmp_path: Path) -> None:
    # "a" is written as a file, so the folder "a/" cannot be made: the file system refuses
    with pytest.raises(ScaffoldError) as refused:
        write_scaffold(tmp_path, "crew", {"a": "text\n", "a/b": "text\n"})
    assert refused.value.code == "E-IO-003"
    assert str(refused.value).startswith("cannot write ./crew:")
    assert os.listdir(tmp_path) == []


def test_a_scaffold_that_would_not_load_is_never_left_behind(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match="version: is required"):
        write_scaffold(tmp_path, "crew", {"murmur.yaml": "name: crew\n"})
    assert os.listdir(tmp_path) == []

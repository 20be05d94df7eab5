"""`murmur-tui new` end to end: real subprocesses in a real working directory — what it says,
what it writes, its refusals with Murmur's codes, and a new capsule launched at once, offline."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import run_cli
from tui.core.manifest.reader import load_capsule


def test_a_new_capsule_runs_to_ok_offline_right_away(murmur_home: Path, tmp_path: Path) -> None:
    made = run_cli("new", "hello", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines() == [
        "Scaffolded capsule 'hello' in ./hello",
        "  hello/murmur.yaml   capsule hello@0.1.0, the built-in scripted driver",
        "  hello/script.yaml   what the scripted driver answers, a turn at a time",
        "  hello/task.md       the task it runs when given none",
        "  hello/.gitignore    the sessions' files (workdir/)",
        "",
        "Next:",
        "  murmur-tui launch hello",
        "  murmur-tui launch hello --headless",
    ]
    assert made.stderr == ""
    ran = run_cli("launch", "hello", "--headless", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ": Look at your workdir and say what you are." in ran.stdout
    assert "→ ls" in ran.stdout and "  │ MURMUR.md" in ran.stdout
    assert "task ok · 2 turns" in ran.stdout and "session ok" in ran.stdout
    [workdir] = (tmp_path / "hello" / "workdir").iterdir()
    assert (workdir / "out" / "result.txt").read_text().startswith(
        "I am hello, a capsule made by murmur-tui new.")


def test_a_new_formation_lists_its_files_and_each_member_loads(murmur_home: Path,
                                                                tmp_path: Path) -> None:
    made = run_cli("new", "--roster", "demo-team", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines() == [
        "Scaffolded formation 'demo-team' in ./demo-team",
        "  demo-team/roster.yaml          lead is the entry member; lead may call worker",
        "  demo-team/lead/murmur.yaml     capsule demo-team-lead@0.1.0",
        "  demo-team/lead/script.yaml     lead calls worker, then answers with worker's answer",
        "  demo-team/lead/task.md         the formation's task when it is given none",
        "  demo-team/worker/murmur.yaml   capsule demo-team-worker@0.1.0, serves peers",
        "  demo-team/worker/script.yaml   worker's answer",
        "  demo-team/.gitignore           the sessions' files (workdir/, .murmur/)",
        "",
        "Next:",
        "  murmur-tui doctor demo-team            the roster, admitted as Murmur admits it",
        "  murmur-tui launch --roster demo-team   the formation: lead asks worker",
        "  murmur-tui launch demo-team/worker     a member on its own",
    ]
    names = {load_capsule(tmp_path / "demo-team" / member).name for member in ("lead", "worker")}
    assert names == {"demo-team-lead", "demo-team-worker"}
    assert os.listdir(tmp_path) == ["demo-team"]  # no temporary folder left beside it


def test_worker_alone_answers_a_task_with_its_script(murmur_home: Path, tmp_path: Path) -> None:
    assert run_cli("new", "demo-team", "--roster", cwd=tmp_path).returncode == 0
    ran = run_cli("launch", "demo-team/worker", "--headless", "--task", "Say hello.",
                  cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert "Hello from worker, the member of demo-team that lead calls." in ran.stdout


def test_a_bad_name_is_e_new_002_exit_2_and_writes_nothing(murmur_home: Path,
                                                          tmp_path: Path) -> None:
    for args, shown in ((["new", "My-Capsule"], "'My-Capsule'"),
                        (["new", "--roster", "crew-"], "'crew-'"),
                        (["new", "--roster", "a" * 94], "'" + "a" * 40)):
        refused = run_cli(*args, cwd=tmp_path)
        assert refused.returncode == 2
        assert refused.stdout == ""
        [line] = refused.stderr.splitlines()
        assert line.startswith(f"murmur-tui: error: {shown}") and line.endswith("[E-NEW-002]")
        assert "is not an artifact name (lowercase letters, digits and '-'" in line
    assert os.listdir(tmp_path) == []


def test_an_existing_path_is_e_new_003_exit_2_and_left_untouched(murmur_home: Path,
                                                                tmp_path: Path) -> None:
    (tmp_path / "crew").mkdir()
    (tmp_path / "crew" / "notes.txt").write_text("mine")
    for args in (["new", "crew"], ["new", "--roster", "crew"]):
        refused = run_cli(*args, cwd=tmp_path)
        assert refused.returncode == 2
        assert refused.stderr == ("murmur-tui: error: ./crew already exists; nothing was "
                                  "written (pick another name, or move it away) [E-NEW-003]\n")
    assert os.listdir(tmp_path / "crew") == ["notes.txt"]
    assert os.listdir(tmp_path) == ["crew"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux's /proc")
def test_a_folder_the_system_will_not_write_is_e_io_003_exit_1(murmur_home: Path) -> None:
    refused = run_cli("new", "hello", cwd=Path("/proc"))  # no folder can be made in /proc
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith("murmur-tui: error: cannot write ./hello: /proc/hello: ")
    assert refused.stderr.endswith("; nothing was left behind [E-IO-003]\n")


def test_new_help_says_what_it_writes(murmur_home: Path, tmp_path: Path) -> None:
    helped = run_cli("new", "--help", cwd=tmp_path)
    assert helped.returncode == 0
    flat = " ".join(helped.stdout.split())
    assert "usage: murmur-tui new [-h] [--roster] NAME" in flat
    assert "(E-NEW-002)" in flat and "(E-NEW-003)" in flat
    assert "--roster scaffold a formation of two capsules, as `mur new --roster NAME`" in flat
    listed = run_cli("--help")
    assert "new" in listed.stdout and "scaffold a capsule" in " ".join(listed.stdout.split())

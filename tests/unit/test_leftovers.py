"""The guard that a test run leaves no file in the checkout (tests/leftovers.py, run around
every session by tests/conftest.py) sees what a stray test would write, and only that."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.leftovers import left_behind, untracked


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    (root / ".gitignore").write_text("build/\n")
    (root / "kept.py").write_text("x = 1\n")
    for folder in ("tui", "docs"):
        (root / folder).mkdir()
        (root / folder / "kept.md").write_text("")
    git(root, "add", ".gitignore", "kept.py", "tui", "docs")
    git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "start")
    return root


def test_a_file_written_into_the_checkout_is_named(checkout: Path) -> None:
    before = untracked(checkout)
    assert before == set()
    (checkout / "tmpuh3lk9eg").mkdir()
    (checkout / "tmpuh3lk9eg" / "j.jsonl").write_text("{}\n")
    (checkout / "build").mkdir()
    (checkout / "build" / "out.o").write_text("")  # ignored: not a leftover
    (checkout / "kept.py").write_text("x = 2\n")  # a change to a tracked file: not one either
    (checkout / "tui" / "j.jsonl").write_text("{}\n")  # beside the code: one
    (checkout / "stray.log").write_text("")  # at the top: one
    (checkout / "docs" / "draft.md").write_text("")  # someone writing docs meanwhile: not one
    after = untracked(checkout)
    assert after == {"tmpuh3lk9eg/j.jsonl", "tui/j.jsonl", "stray.log"}
    complaint = left_behind(before, after)
    assert "3 file(s)" in complaint and "tmpuh3lk9eg/j.jsonl" in complaint


def test_files_there_before_the_run_are_not_blamed_on_it(checkout: Path) -> None:
    (checkout / "notes.txt").write_text("mine")
    before = untracked(checkout)
    assert before == {"notes.txt"}
    assert left_behind(before, untracked(checkout) or set()) == ""


def test_outside_a_checkout_there_is_nothing_to_compare(tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    plain = tmp_path / "plain"
    plain.mkdir()
    assert untracked(plain) is None

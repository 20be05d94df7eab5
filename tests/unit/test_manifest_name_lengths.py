"""Manifest values that become file or folder names are bounded where they are read: a name
no file system takes is refused at its line and key (exit 2), never an "internal error: File
name too long" once the session has begun."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import CapsuleFactory, run_cli
from tests.responses import text_response
from tui.core.errors import ManifestError
from tui.core.manifest.reader import parse_capsule
from tui.core.record.context_lock import lock_path
from tui.core.text.segments import MAX_NAME_BYTES

FILE = Path("/capsules/demo/murmur.yaml")
MANIFEST = """\
name: {name}
version: "1.0.0"
artifacts:
  - name: drv
    runtime: driver
    builtin: scripted
    config: {{script: s.yaml}}
inference:
  model: m1
  driver: {{artifact: drv}}
"""


def problems(text: str) -> list[tuple[int | None, str, str]]:
    with pytest.raises(ManifestError) as info:
        parse_capsule(FILE, textwrap.dedent(text))
    return [(p.line, p.key, p.message) for p in info.value.problems]


def test_a_capsule_name_over_255_bytes_is_refused_at_its_line_with_exit_2(
        make_capsule: CapsuleFactory, tmp_path: Path) -> None:
    name = "a" * (MAX_NAME_BYTES + 1)
    root = make_capsule([text_response("never")], name=name)
    done = run_cli("launch", str(root), "--headless", "--task", "hi")
    assert done.returncode == 2, done.stderr
    assert f"{root / 'murmur.yaml'}:1: name:" in done.stderr
    assert f"is {MAX_NAME_BYTES + 1} bytes long" in done.stderr
    assert "internal error" not in done.stderr
    assert not (root / "workdir").exists()  # refused before anything was written


def test_the_bound_counts_bytes_and_a_name_of_255_bytes_runs(
        make_capsule: CapsuleFactory) -> None:
    assert problems(MANIFEST.format(name="é" * 128))[0][:2] == (1, "name")  # 256 bytes
    root = make_capsule([text_response("fine")], name="b" * MAX_NAME_BYTES)
    done = run_cli("launch", str(root), "--headless", "--task", "hi")
    assert done.returncode == 0, done.stderr


def test_a_record_store_over_255_bytes_is_refused_at_its_line() -> None:
    text = MANIFEST.format(name="demo") + f"context:\n  record_store: {'r' * 300}\n"
    [(line, key, message)] = problems(text)
    assert (line, key) == (12, "context.record_store") and "300 bytes long" in message


def test_a_store_version_that_cannot_name_a_folder_is_refused_at_its_line() -> None:
    for version, why in [("v" * 256, "256 bytes long"), ("../../elsewhere", "'/'")]:
        text = MANIFEST.format(name="demo").replace(
            "inference:", f"  - name: tool-a\n    version: '{version}'\ninference:")
        [(line, key, message)] = problems(text)
        assert (line, key) == (9, "artifacts[1].version") and why in message


def test_a_shell_binary_name_over_255_bytes_is_refused_at_its_line() -> None:
    text = MANIFEST.format(name="demo") + f"capabilities:\n  shell:\n    allow: [{'x' * 256}]\n"
    [(line, key, message)] = problems(text)
    assert (line, key) == (13, "capabilities.shell.allow") and "256 bytes long" in message


def test_a_context_id_of_255_bytes_runs_and_its_lock_fits_a_file_name(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("fine")])
    context = "c" * MAX_NAME_BYTES
    done = run_cli("launch", str(root), "--headless", "--task", "hi", "--context", context)
    assert done.returncode == 0, done.stderr
    lock = lock_path(murmur_home, "test-capsule", context)
    assert lock.exists() and len(lock.name) <= MAX_NAME_BYTES
    assert lock_path(murmur_home, "test-capsule", "ctx_1").name == "ctx_1.lock"
    refused = run_cli("launch", str(root), "--headless", "--task", "hi", "--context",
                      context + "c")
    assert refused.returncode == 2 and "256 bytes long" in refused.stderr

"""Text from this machine that is not UTF-8 — an argument, a task file (headless stdin:
tests/e2e/test_headless_stdin.py; the screen's answers: tests/app/test_typed_answer_text.py)
— runs with each bad byte replaced by U+FFFD and one warning naming the flag, and the writers
a stray lone surrogate could still reach write instead of ending the session."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import CapsuleFactory, read_jsonl
from tests.responses import text_response
from tui.core.fs.workdir import write_result
from tui.core.record.writer import RecordWriter

BAD = b"\xff\xfe bad"  # not UTF-8: decoded from argv as two lone surrogates and " bad"
WHOLE = "\ufffd\ufffd bad"


def launch(*args: str | bytes, home: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "tui", "launch", *args], capture_output=True,
                          env=dict(os.environ, MURMUR_HOME=str(home)), stdin=subprocess.DEVNULL,
                          timeout=120)


def recorded(home: Path) -> str:
    record = next(home.glob("conversations/*/*/conversation.jsonl"))
    return json.dumps(read_jsonl(record), ensure_ascii=False)


def test_a_task_argument_that_is_not_utf8_runs_and_is_recorded_with_replacement_characters(
        make_capsule: CapsuleFactory, murmur_home: Path) -> None:
    root = make_capsule([text_response("read it")])
    done = launch(str(root), "--headless", "--task", BAD, home=murmur_home)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert err.count("warning: --task holds bytes that are not UTF-8") == 1
    assert next(root.glob("workdir/*/task.md")).read_text(encoding="utf-8") == WHOLE
    assert WHOLE in recorded(murmur_home)
    assert "session ok" in done.stdout.decode()


def test_a_task_file_that_is_not_utf8_runs_with_a_warning_naming_the_flag(
        make_capsule: CapsuleFactory, murmur_home: Path, tmp_path: Path) -> None:
    root = make_capsule([text_response("read it")])
    task = tmp_path / "task.txt"
    task.write_bytes(b"first line\n" + BAD + b"\n")
    done = launch(str(root), "--headless", "--task-file", str(task), home=murmur_home)
    err = done.stderr.decode()
    assert done.returncode == 0, err
    assert err.count("warning: --task-file holds bytes that are not UTF-8") == 1
    assert next(root.glob("workdir/*/task.md")).read_text(encoding="utf-8") == \
        f"first line\n{WHOLE}\n"
    assert WHOLE in recorded(murmur_home)


def test_a_task_file_that_cannot_be_read_is_refused_before_anything_runs(
        make_capsule: CapsuleFactory, murmur_home: Path, tmp_path: Path) -> None:
    root = make_capsule([text_response("never")])
    done = launch(str(root), "--headless", "--task-file", str(tmp_path / "missing.txt"),
                  home=murmur_home)
    assert done.returncode == 2
    assert "--task-file" in done.stderr.decode() and "cannot be read" in done.stderr.decode()
    assert not list(root.glob("workdir/*"))


def test_the_record_and_result_writers_write_a_stray_lone_surrogate_instead_of_failing(
        tmp_path: Path, murmur_home: Path) -> None:
    # past every edge, a lone surrogate still cannot end a session: the writers replace it
    failures: list[str] = []
    path = murmur_home / "conversations" / "r" / "ctx" / "conversation.jsonl"
    writer = RecordWriter(murmur_home, path, failures.append)
    assert writer.append({"id": "m1", "role": "user",
                          "content": [{"type": "text", "text": "a\ud800b"}]})
    writer.close()
    assert failures == []
    assert read_jsonl(path)[0]["content"][0]["text"] == "a?b"
    from tui.core.fs.workdir import session_paths

    paths = session_paths(tmp_path / "capsule", "c", "ses_1", tmp_path / "work", murmur_home)
    paths.out.mkdir(parents=True)
    write_result(paths, "x\udcffy")
    assert paths.result.read_bytes() == b"x?y"

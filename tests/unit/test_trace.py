"""trace.jsonl: the envelope, the tree, the order, and the counts Murmur's readers rely on."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import CapsuleFactory, read_jsonl, text_response, tool_response
from tui.core.manifest.reader import load_capsule
from tui.core.session import LaunchOptions, Session
from tui.core.trace import TraceFormatError, read_trace

ENVELOPE = ["event_type", "event_id", "parent_id", "session_id", "timestamp"]


def session_trace(root: Path) -> list[dict[str, object]]:
    result = Session(load_capsule(root), LaunchOptions(task="t")).run()
    return read_jsonl(result.paths.trace)


def test_every_line_starts_with_the_envelope(make_capsule: CapsuleFactory) -> None:
    lines = session_trace(make_capsule([tool_response("echo x"), text_response("ok")]))
    session_ids = {line["session_id"] for line in lines}
    assert len(session_ids) == 1
    (session_id,) = session_ids
    assert re.fullmatch(r"ses_[0-9a-f]{32}", str(session_id))
    event_ids = [line["event_id"] for line in lines]
    assert len(set(event_ids)) == len(lines)
    for line in lines:
        assert list(line)[:5] == ENVELOPE
        assert re.fullmatch(r"evt_[0-9a-f]{32}", str(line["event_id"]))
        assert isinstance(line["timestamp"], int)
    assert [line["timestamp"] for line in lines] == sorted(line["timestamp"] for line in lines)


def test_order_and_tree(make_capsule: CapsuleFactory) -> None:
    lines = session_trace(make_capsule([tool_response("echo x"), text_response("ok")]))
    types = [line["event_type"] for line in lines]
    assert types == ["session_start", "task_start", "inference", "tool_call", "shell",
                     "inference", "task_end", "session_end"]
    by_type = {line["event_type"]: line for line in lines}
    session, task = by_type["session_start"], by_type["task_start"]
    assert session["parent_id"] is None
    assert task["parent_id"] == session["event_id"]
    first_turn = lines[2]
    assert first_turn["parent_id"] == task["event_id"]
    assert lines[3]["parent_id"] == first_turn["event_id"]
    assert lines[4]["parent_id"] == first_turn["event_id"]
    assert lines[5]["parent_id"] == task["event_id"]
    assert by_type["task_end"]["parent_id"] == task["event_id"]
    assert by_type["session_end"]["parent_id"] == session["event_id"]


def test_fields_and_totals(make_capsule: CapsuleFactory) -> None:
    lines = session_trace(make_capsule([tool_response("echo x"), text_response("ok")]))
    by_type = {line["event_type"]: line for line in lines}
    start = by_type["session_start"]
    assert start["capsule_name"] == "test-capsule" and start["tools_declared"] == ["bash"]
    assert start["context_id"].startswith("ctx_") and start["max_turns"] == 10
    inference = [line for line in lines if line["event_type"] == "inference"]
    assert [line["turn"] for line in inference] == [0, 1]
    assert inference[0]["decision"] == "tool_call" and inference[0]["tool_name"] == "bash"
    assert len(inference[1]["message_ids"]) == 3
    tool = by_type["tool_call"]
    assert tool["tool_call_id"] == "call_1" and tool["input"] == {"command": "echo x"}
    assert tool["status"] == "ok" and "output" not in tool
    shell = by_type["shell"]
    assert shell["command"] == "echo x" and shell["exit_code"] == 0
    assert shell["stdout_bytes"] == 2 and shell["binary"].startswith("/")
    end, session_end = by_type["task_end"], by_type["session_end"]
    assert end["exit_status"] == "ok" and end["turns"] == 2
    assert end["input_tokens"] == sum(line["input_tokens"] for line in inference)
    assert end["output_tokens"] == sum(line["output_tokens"] for line in inference)
    assert (end["tool_calls"], end["shell_calls"]) == (1, 1)
    assert session_end["total_turns"] == len(inference)
    assert session_end["total_input_tokens"] == end["input_tokens"]
    assert session_end["total_tool_calls"] == 1 and session_end["exit_status"] == "ok"


def test_failed_task_writes_task_failed_before_task_end(make_capsule: CapsuleFactory) -> None:
    lines = session_trace(make_capsule([{"stop_reason": "oops", "content": []}]))
    types = [line["event_type"] for line in lines]
    assert types[-3:] == ["task_failed", "task_end", "session_end"]
    failed = lines[-3]
    assert failed["cause"] == "malformed_response" and failed["turn"] == 0
    assert lines[-1]["exit_status"] == "failed"


def test_capture_content_adds_tool_output(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("echo x"), text_response("ok")],
                        extra="trace:\n  capture: content\n")
    tool = next(line for line in session_trace(root) if line["event_type"] == "tool_call")
    assert str(tool["output"]).startswith("<untrusted-content source=tool:bash>")


def test_reader_names_file_and_line_of_a_broken_line(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text('{"event_type":"session_start"}\n{broken\n')
    with pytest.raises(TraceFormatError, match=r"trace.jsonl:2: not JSON"):
        list(read_trace(path))


def test_a_trace_cut_mid_line_is_read_up_to_the_cut(make_capsule: CapsuleFactory) -> None:
    result = Session(load_capsule(make_capsule([text_response("ok")])),
                     LaunchOptions(task="t")).run()
    path = result.paths.trace
    whole = read_trace(path)
    assert whole.cut_line is None and whole.skipped == 0
    data = path.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    for cut in (last_start + 1, last_start + 20, len(data) - 2):  # the writer died mid-line
        path.write_bytes(data[:cut])
        trace = read_trace(path)
        assert list(trace) == whole.events[:-1]
        assert trace.cut_line == len(whole.events) and trace.skipped == 1


@pytest.mark.parametrize("line", [
    b"{broken", b'{"a":' + b"[" * 5000, b'{"a":"\xff"}', b'{"a":"\\ud800"}', b'{"a":NaN}',
    b'{"a":1}{"b":2}',
])
def test_a_malformed_line_before_the_last_names_file_and_line(tmp_path: Path,
                                                               line: bytes) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_bytes(b'{"event_type":"session_start"}\n' + line + b'\n{"event_type":"x"}\n')
    with pytest.raises(TraceFormatError, match=r"trace.jsonl:2: not JSON") as info:
        read_trace(path)
    assert info.value.code == "E-TRC-001"


def test_only_an_unfinished_object_at_the_very_end_is_a_cut(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_bytes(b'{"event_type":"a"}\n{"event_type":"b"}')  # whole, just no newline
    assert [line["event_type"] for line in read_trace(path)] == ["a", "b"]
    path.write_bytes(b'{"event_type":"a"}\n{"event_type":"b",\n')  # a newline ended it
    with pytest.raises(TraceFormatError, match=r"trace.jsonl:2: not JSON"):
        read_trace(path)
    path.write_bytes(b'{"event_type":"a"}\n[1,2]')
    with pytest.raises(TraceFormatError, match=r"trace.jsonl:2: not a JSON object"):
        read_trace(path)
    path.write_bytes(b'{"event_type":"a"}\n{"event_type":"caf\xc3')  # cut mid-character
    assert read_trace(path).cut_line == 2

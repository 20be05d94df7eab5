"""trace.jsonl: the envelope, the tree, the order, and the counts Murmur's readers rely on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.capsules import write_capsule
from tests.conftest import CapsuleFactory, read_jsonl
from tests.responses import text_response, tool_response
from tui.core.errors import MurmurTuiError, TraceFormatError, TraceWriteError
from tui.core.loop.launch import LaunchOptions
from tui.core.loop.session import Session
from tui.core.manifest.reader import load_capsule
from tui.core.trace.analyse import Failure, summarise
from tui.core.trace.reader import read_trace
from tui.core.trace.writer import TraceWriter

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
    assert start["userns_grant"] is None  # Murmur's reader takes a string or null here
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


def test_only_an_unfinished_object_is_a_cut_wherever_a_later_writer_went_on(
        tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_bytes(b'{"event_type":"a"}\n{"event_type":"b"}')  # whole, just no newline
    assert [line["event_type"] for line in read_trace(path)] == ["a", "b"]
    # a resume closed the cut line off with a newline and appended its own
    path.write_bytes(b'{"event_type":"a"}\n{"event_type":"b",\n{"event_type":"c"}\n')
    trace = read_trace(path)
    assert [line["event_type"] for line in trace] == ["a", "c"]
    assert (trace.cut_lines, trace.cut_line, trace.numbers) == ([2], None, [1, 3])
    path.write_bytes(b'{"event_type":"a"}\n{"event_type":"b",\n')  # the cut line is the last
    assert read_trace(path).cut_line == 2
    for broken in (b"{broken", b'{"event_type":"b",,', b'{"a":1}x', b'{"a":"\\q'):
        path.write_bytes(b'{"event_type":"a"}\n' + broken + b'\n{"event_type":"c"}\n')
        with pytest.raises(TraceFormatError, match=r"trace.jsonl:2: not JSON"):
            read_trace(path)
    path.write_bytes(b'{"event_type":"a"}\n[1,2]')
    with pytest.raises(TraceFormatError, match=r"trace.jsonl:2: not a JSON object"):
        read_trace(path)
    path.write_bytes(b'{"event_type":"a"}\n{"event_type":"caf\xc3')  # cut mid-character
    assert read_trace(path).cut_line == 2


def test_a_trace_that_cannot_be_opened_ends_with_its_file_named(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.mkdir()  # a folder where the file belongs
    with pytest.raises(TraceWriteError) as info:
        TraceWriter(path)
    assert isinstance(info.value, MurmurTuiError) and info.value.code == "E-RUN-007"
    assert str(info.value).startswith(f"cannot open trace {path}: ")
    assert info.value.where is not None and info.value.where.file == path


# -- analyse: one trace summed up ---------------------------------------------------------------
def run_session(root: Path) -> Path:
    return Session(load_capsule(root), LaunchOptions(task="t")).run().paths.trace


def test_a_summary_agrees_with_the_session_it_sums(make_capsule: CapsuleFactory) -> None:
    root = make_capsule([tool_response("echo x"), tool_response("printf ab", "call_2", "sh"),
                         tool_response("   ", "call_3"), text_response("ok")],
                        shell=("bash", "sh"))
    path = run_session(root)
    lines = read_jsonl(path)
    by_type = {line["event_type"]: line for line in lines}
    summary = summarise(path)
    assert summary.finished and summary.exit_status == "ok"
    assert summary.session_id == by_type["session_start"]["session_id"]
    assert (summary.capsule, summary.model) == ("test-capsule", "test-model")
    assert summary.duration_ms == by_type["session_end"]["duration_ms"]
    (task,) = summary.tasks
    end = by_type["task_end"]
    assert task.task_id == end["task_id"] and task.exit_status == "ok"
    assert (task.turns, task.input_tokens, task.output_tokens) == (
        end["turns"], end["input_tokens"], end["output_tokens"])
    assert (task.tool_calls, task.shell_calls) == (end["tool_calls"], end["shell_calls"])
    assert task.turns == 4 and task.tool_calls == 3 and task.failures == []
    calls = [line for line in lines if line["event_type"] == "tool_call"]
    bash = [line for line in calls if line["tool_name"] == "bash"]
    assert [(tool.name, tool.calls, tool.errors) for tool in summary.tools] == [
        ("bash", 2, 1), ("sh", 1, 0)]  # the blank command was refused: an error
    assert summary.tools[0].total_ms == sum(line["duration_ms"] for line in bash)
    assert summary.tools[0].max_ms == max(line["duration_ms"] for line in bash)


def test_a_failed_task_names_its_cause(make_capsule: CapsuleFactory) -> None:
    summary = summarise(run_session(make_capsule([{"stop_reason": "oops", "content": []}])))
    assert summary.exit_status == "failed"
    (task,) = summary.tasks
    assert task.exit_status == "failed" and task.turns == 1
    (failure,) = task.failures
    assert isinstance(failure, Failure)
    assert (failure.turn, failure.cause) == (0, "malformed_response") and failure.reason


def test_the_trace_of_a_killed_session_still_sums_up(make_capsule: CapsuleFactory) -> None:
    path = run_session(make_capsule([tool_response("echo x"), text_response("ok")]))
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    kept = b"".join(line for line in lines if b'"task_end"' not in line
                    and b'"session_end"' not in line)
    path.write_bytes(kept + lines[-1][:30])  # and a line the dying writer cut short
    summary = summarise(path)
    assert not summary.finished and summary.exit_status is None
    assert summary.cut_line == len(lines) - 1
    timestamps = [json.loads(line)["timestamp"] for line in kept.splitlines()]
    assert summary.duration_ms == timestamps[-1] - timestamps[0]
    (task,) = summary.tasks
    assert task.exit_status is None and task.turns == 2 and task.tool_calls == 1


HOSTILE_FIELDS = [
    ("tool_call", "duration_ms", "12"),
    ("tool_call", "duration_ms", True),
    ("tool_call", "duration_ms", -1),
    ("tool_call", "tool_name", 7),
    ("tool_call", "status", None),
    ("inference", "task_id", ["tsk"]),
    ("inference", "input_tokens", 1.5),
    ("task_failed", "cause", {"a": 1}),
    ("task_end", "exit_status", 0),
    ("session_end", "duration_ms", "long"),
    ("session_start", "session_id", None),
]


@pytest.mark.parametrize(("event_type", "key", "value"), HOSTILE_FIELDS)
def test_a_field_of_the_wrong_type_names_file_line_and_key(
        make_capsule: CapsuleFactory, event_type: str, key: str, value: object) -> None:
    path = run_session(make_capsule([tool_response("echo x"), {"stop_reason": "oops",
                                                                "content": []}]))
    lines = read_jsonl(path)
    number = next(index for index, line in enumerate(lines, start=1)
                  if line["event_type"] == event_type)
    lines[number - 1][key] = value
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    with pytest.raises(TraceFormatError) as info:
        summarise(path)
    assert str(info.value).startswith(f"{path}:{number}: {key}: expected ")
    assert info.value.code == "E-TRC-001"
    assert info.value.where is not None and info.value.where.line == number


def test_a_line_that_is_not_json_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_bytes(b'{"event_type":"session_start","session_id":"ses_1","timestamp":1}\n'
                     b'\n{"event_type":"inference",\x00}\n{"event_type":"session_end"}\n')
    with pytest.raises(TraceFormatError, match=r"trace.jsonl:3: not JSON"):
        summarise(path)


def test_unknown_events_are_skipped_and_a_trace_without_a_session_is_refused(
        tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    path.write_text('{"event_type":"session_start","session_id":"ses_1","timestamp":5}\n'
                    '{"event_type":"a2a_send","task_id":3,"timestamp":9}\n'
                    '{"event_type":"shell_detached","duration_ms":"x","timestamp":8}\n')
    summary = summarise(path)
    assert summary.tasks == [] and summary.tools == [] and summary.duration_ms == 4
    path.write_text('{"event_type":"task_start","task_id":"tsk_1","timestamp":1}\n')
    with pytest.raises(TraceFormatError, match=r"trace.jsonl:1: no session_start"):
        summarise(path)
    path.write_text("")
    with pytest.raises(TraceFormatError, match=r"trace.jsonl: no session_start"):
        summarise(path)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 2**40) | st.floats(allow_nan=False)
    | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3)
    | st.dictionaries(st.text(max_size=4), children, max_size=3),
    max_leaves=6,
)


@pytest.fixture(scope="module")
def real_trace(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    folder = tmp_path_factory.mktemp("real")
    root = write_capsule(folder / "capsule", [tool_response("echo x"), text_response("k")],
                         name="fuzzed", model="m", max_turns=None)
    return read_jsonl(run_session(root))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_field_replaced_is_summed_or_refused_with_a_place(
        real_trace: list[dict[str, object]], tmp_path: Path, data: st.DataObject) -> None:
    lines = [dict(line) for line in real_trace]
    number = data.draw(st.integers(1, len(lines)))
    line = lines[number - 1]
    key = data.draw(st.sampled_from(sorted(line)))
    line[key] = data.draw(JSON_VALUES)
    path = tmp_path / "trace.jsonl"
    path.write_text("".join(json.dumps(item) + "\n" for item in lines))
    try:
        summary = summarise(path)
    except TraceFormatError as exc:
        assert exc.where is not None and exc.where.file == path
        assert str(exc).startswith(f"{path}:") or str(exc).startswith(f"{path}: no session")
    else:
        assert summary.path == path and summary.duration_ms >= 0
        assert all(task.turns >= 0 and task.input_tokens >= 0 for task in summary.tasks)

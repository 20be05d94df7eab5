"""The backward reader shows exactly what the spec reader serves, for any record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui.core.record.backward import BackwardReader, count_messages, read_forward
from tui.core.record.reader import RecordReader


def spec_walk(path: Path, limit: int) -> tuple[list[list[str]], int]:
    reader = RecordReader()
    pages: list[list[str]] = []
    cursor: str | None = None
    total = 0
    while True:
        page = reader.read_page(path, cursor, limit)
        total = page.total
        if page.messages:
            pages.append([m.id or "" for m in page.messages])
        cursor = page.next_cursor
        if cursor is None:
            return pages, total


def backward_walk(path: Path, limit: int) -> list[list[str]]:
    return [[str(m.message.get("id", "")) for m in page]
            for page in BackwardReader(path).walk(limit)]


message = st.builds(
    lambda n, role, text: {"role": role, "content": [{"type": "text", "text": text}],
                           "id": f"msg_{n:032x}"},
    st.integers(0, 2**60), st.sampled_from(["user", "assistant", "tool"]),
    st.text(max_size=30))
junk = st.sampled_from([
    "", "   ", "not json", '{"type":"murmur.record","capsule":"x"}', '{"role": 5}', "[1,2]",
    '{"role":"user","content":', "\u00e9\u00e8 broken", '"a string"'])
line = st.one_of(message.map(lambda m: json.dumps(m, ensure_ascii=False)), junk)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(line, max_size=40), tail=st.one_of(st.none(), junk, message.map(
    lambda m: json.dumps(m)), st.just('{"role":"assistant","content":[{"ty')),
       limit=st.integers(1, 7), newline_end=st.booleans())
def test_backward_pages_equal_the_spec_readers_walk(tmp_path: Path, lines: list[str],
                                                    tail: str | None, limit: int,
                                                    newline_end: bool) -> None:
    body = "\n".join(lines)
    if lines and newline_end:
        body += "\n"
    if tail is not None:
        body += ("\n" if body and not body.endswith("\n") else "") + tail
    path = tmp_path / "conversation.jsonl"
    path.write_text(body, encoding="utf-8")
    expected, total = spec_walk(path, limit)
    assert backward_walk(path, limit) == expected
    assert count_messages(path)[0] == total


def write(path: Path, records: list[dict[str, Any]]) -> None:
    with path.open("a", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record) + "\n")


def msg(n: int) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": f"m{n}"}], "id": f"msg_{n}"}


def test_newer_picks_up_appends_and_waits_for_a_partial_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [msg(0), msg(1)])
    with path.open("a") as handle:
        handle.write('{"role":"user","content":[],"id":"msg_2"')  # still being written
    reader = BackwardReader(path)
    assert [m.message["id"] for m in reader.page(10)] == ["msg_1", "msg_0"]
    assert reader.newer() == []
    with path.open("a") as handle:
        handle.write("}\n")
    write(path, [msg(3)])
    assert [m.message["id"] for m in reader.newer()] == ["msg_2", "msg_3"]
    assert reader.newer() == []


def test_reading_forward_from_an_anchor(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [msg(n) for n in range(10)])
    anchor = BackwardReader(path).page(4)[-1]  # msg_6
    found, after = read_forward(path, anchor.start, 3)
    assert [m.message["id"] for m in found] == ["msg_6", "msg_7", "msg_8"]
    older = BackwardReader(path, end=anchor.end).page(3)
    assert [m.message["id"] for m in older] == ["msg_6", "msg_5", "msg_4"]
    rest, _ = read_forward(path, after, 100)
    assert [m.message["id"] for m in rest] == ["msg_9"]


def test_a_final_message_longer_than_a_block_without_a_newline_is_read(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [msg(n) for n in range(3)])
    big = {"role": "assistant", "content": [{"type": "text", "text": "z" * 300_000}],
           "id": "msg_big"}
    with path.open("a") as handle:
        handle.write(json.dumps(big))  # 300 KB, and no newline after it
    reader = BackwardReader(path)
    assert [m.message["id"] for m in reader.page(10)] == ["msg_big", "msg_2", "msg_1", "msg_0"]
    found, _ = read_forward(path, 0, 100)
    assert [m.message["id"] for m in found] == ["msg_0", "msg_1", "msg_2", "msg_big"]
    assert count_messages(path) == (4, 0)
    # the next writer closes the line off and appends: nothing is read twice
    with path.open("a") as handle:
        handle.write("\n" + json.dumps(msg(4)) + "\n")
    assert [m.message["id"] for m in reader.newer()] == ["msg_4"]


def test_a_cut_final_line_longer_than_a_block_hides_nothing_before_it(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [msg(n) for n in range(3)])
    with path.open("a") as handle:
        handle.write('{"role":"user","content":[{"type":"text","text":"' + "z" * 300_000)
    assert [m.message["id"] for m in BackwardReader(path).page(10)] == \
        ["msg_2", "msg_1", "msg_0"]
    assert count_messages(path) == (3, 1)


def test_newer_takes_a_final_message_that_no_newline_ends(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    write(path, [msg(0)])
    reader = BackwardReader(path)
    with path.open("a") as handle:
        handle.write(json.dumps(msg(1)))
    assert [m.message["id"] for m in reader.newer()] == ["msg_1"]
    assert reader.newer() == []
    with path.open("a") as handle:
        handle.write("\n" + json.dumps(msg(2)) + "\n")
    assert [m.message["id"] for m in reader.newer()] == ["msg_2"]


def test_long_lines_across_blocks_page_as_the_spec_reader(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    records = [{"role": "user", "content": [{"type": "text", "text": "w" * size}],
                "id": f"msg_{n}"} for n, size in enumerate([10, 70_000, 5, 200_000, 64 * 1024])]
    with path.open("w") as handle:
        handle.write("\n".join(json.dumps(r) for r in records) + "\n\n" + "x" * 130_000 + "\n")
    expected, total = spec_walk(path, 2)
    assert backward_walk(path, 2) == expected and total == 5
    reader = BackwardReader(path)
    for located in (m for page in reader.walk(5) for m in page):
        raw = path.read_bytes()[located.start:located.end]
        assert json.loads(raw) == located.message

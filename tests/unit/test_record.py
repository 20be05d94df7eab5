"""The conversation record: writer and reader behave as Murmur's (spec §3, its own tests)."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from tui.core import ids
from tui.core.chat import tool_message, user_message
from tui.core.errors import ConversationReadError, MurmurTuiError
from tui.core.record.reader import RecordReader
from tui.core.record.writer import RecordWriter, record_path


def writer_for(home: Path, record: str = "rec", context: str = "ctx_1"
               ) -> tuple[RecordWriter, Path, list[str]]:
    path = record_path(home, record, context)
    assert path is not None
    errors: list[str] = []
    return RecordWriter(home, path, errors.append), path, errors


def fill(home: Path, count: int) -> Path:
    writer, path, _ = writer_for(home)
    for number in range(count):
        writer.append(user_message(f"message {number}"))
    writer.close()
    return path


def texts(page_messages: list[Any]) -> list[str]:
    return [json.loads(m.content)[0]["text"] for m in page_messages]


def test_message_ids_are_msg_plus_uuid7_and_carry_their_mint_time() -> None:
    identifier = ids.message_id()
    assert re.fullmatch(r"msg_[0-9a-f]{32}", identifier)
    assert identifier[16] == "7"  # the UUID version nibble
    assert abs(ids.mint_time_ms(identifier) - ids.mint_time_ms(ids.message_id())) < 1000
    many = [ids.message_id() for _ in range(5000)]
    assert many == sorted(many) and len(set(many)) == 5000


def test_opening_creates_nothing_and_first_append_creates_0700_chain(murmur_home: Path) -> None:
    writer, path, _ = writer_for(murmur_home)
    assert not (murmur_home / "conversations").exists()
    writer.append(user_message("hello"))
    for folder in (murmur_home / "conversations", path.parent.parent, path.parent):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert path.name == "conversation.jsonl"
    assert path == murmur_home / "conversations" / "rec" / "ctx_1" / "conversation.jsonl"


def test_line_format_is_one_compact_json_message_per_line(murmur_home: Path) -> None:
    writer, path, _ = writer_for(murmur_home)
    user = user_message("Summarize today's changes.")
    tool = tool_message("toolu_1", False, "<untrusted-content source=tool:bash>\nok\n"
                        "</untrusted-content>", "tool:bash")
    writer.append(user)
    writer.append(tool)
    lines = path.read_text(encoding="utf-8").splitlines()
    assert lines[0] == ('{"role":"user","content":[{"type":"text","text":'
                        f'"Summarize today\'s changes."}}],"id":"{user["id"]}"}}')
    assert json.loads(lines[1]) == tool
    assert list(json.loads(lines[1])) == ["role", "tool_call_id", "is_error", "content", "id",
                                          "fence"]


def test_an_id_is_never_written_twice(murmur_home: Path) -> None:
    writer, path, _ = writer_for(murmur_home)
    message = user_message("once")
    writer.append(message)
    writer.append(message)
    writer.mark_recorded(["msg_reloaded"])
    writer.append({"role": "user", "content": [], "id": "msg_reloaded"})
    assert len(path.read_text().splitlines()) == 1


def test_a_failed_write_is_reported_once_and_leaves_no_hole(murmur_home: Path) -> None:
    writer, path, errors = writer_for(murmur_home)
    writer.append(user_message("first"))
    path.chmod(0o400)
    writer.close()  # the next append reopens the now read-only file
    second, third = user_message("second"), user_message("third")
    if os.geteuid() == 0:  # root ignores file modes: make the folder vanish instead
        path.chmod(0o600)
        blocker = path.parent
        moved = blocker.with_name("moved")
        blocker.rename(moved)
        blocker.write_text("not a folder")
        assert writer.append(second) is False
        assert writer.append(third) is False
        blocker.unlink()
        moved.rename(blocker)
    else:
        assert writer.append(second) is False
        assert writer.append(third) is False
        path.chmod(0o600)
    assert len(errors) == 1 and "write failed" in errors[0]
    assert writer.append(user_message("fourth")) is True
    stored = [json.loads(line)["content"][0]["text"] for line in path.read_text().splitlines()]
    assert stored == ["first", "second", "third", "fourth"]


def test_a_partial_last_line_is_skipped_and_closed_off_by_the_next_writer(
        murmur_home: Path) -> None:
    path = fill(murmur_home, 3)
    with path.open("ab") as handle:
        handle.write(b'{"role":"user","content":[{"type":"te')  # a crash mid-append
    reports: list[str] = []
    reader = RecordReader(on_skipped=reports.append)
    page = reader.read_page(path, None, 10)
    assert page.total == 3
    assert reports == [f"{path}: line 4 is not a message and was skipped"]
    writer = RecordWriter(murmur_home, path, lambda _: None)
    writer.append(user_message("after the crash"))
    page = RecordReader().read_page(path, None, 10)
    assert page.total == 4
    assert texts(page.messages)[0] == "after the crash"


def test_walk_of_five_at_limit_two_sees_each_once_newest_first(murmur_home: Path) -> None:
    path = fill(murmur_home, 5)
    reader = RecordReader()
    seen: list[str] = []
    cursor: str | None = None
    totals = set()
    pages = 0
    while True:
        page = reader.read_page(path, cursor, 2)
        pages += 1
        totals.add(page.total)
        seen.extend(texts(page.messages))
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == [f"message {n}" for n in (4, 3, 2, 1, 0)]
    assert totals == {5} and pages == 3
    assert reader.reads == 1


def test_limit_is_clamped_to_one_and_a_hundred(murmur_home: Path) -> None:
    path = fill(murmur_home, 120)
    reader = RecordReader()
    assert len(reader.read_page(path, None, 0).messages) == 1
    assert len(reader.read_page(path, None, 2**32 - 1).messages) == 100
    assert reader.read_page(path, None, 0).next_cursor == "mc_119"


@pytest.mark.parametrize("cursor", ["7", "mc_", "mc_nine", "mc_9", "cur_1", "mc_-1", "mc_ 1"])
def test_foreign_cursors_are_invalid(murmur_home: Path, cursor: str) -> None:
    path = fill(murmur_home, 1)
    with pytest.raises(ConversationReadError) as info:
        RecordReader().read_page(path, cursor, 10)
    assert info.value.code == "invalid-cursor"


def test_a_cursor_stays_valid_while_the_record_grows(murmur_home: Path) -> None:
    path = fill(murmur_home, 6)
    reader = RecordReader()
    first = reader.read_page(path, None, 3)
    assert first.next_cursor == "mc_3"
    writer = RecordWriter(murmur_home, path, lambda _: None)
    writer.append(user_message("late"))
    second = reader.read_page(path, first.next_cursor, 3)
    assert texts(second.messages) == ["message 2", "message 1", "message 0"]
    assert second.total == 7


def test_absent_record_is_an_empty_page(murmur_home: Path) -> None:
    reader = RecordReader()
    for path in (None, murmur_home / "conversations" / "none" / "ctx" / "conversation.jsonl"):
        page = reader.read_page(path, None, 10)
        assert (page.messages, page.next_cursor, page.total) == ([], None, 0)
    assert not (murmur_home / "conversations").exists()


def test_a_read_with_no_record_keeps_the_parse_cache(murmur_home: Path) -> None:
    path = fill(murmur_home, 4)
    reader = RecordReader()
    reader.read_page(path, None, 2)
    reader.read_page(None, None, 2)
    reader.read_page(path, "mc_2", 2)
    assert reader.reads == 1


def test_unreadable_record_is_unavailable(murmur_home: Path) -> None:
    path = fill(murmur_home, 1)
    path.unlink()
    path.mkdir()  # exists, but cannot be read as a file
    with pytest.raises(ConversationReadError) as info:
        RecordReader().read_page(path, None, 5)
    assert info.value.code.startswith("unavailable: ")


def test_an_unreadable_record_names_its_file_and_keeps_the_hook_string(murmur_home: Path
                                                                       ) -> None:
    path = fill(murmur_home, 1)
    path.unlink()
    path.mkdir()
    with pytest.raises(MurmurTuiError) as info:
        RecordReader().read_page(path, None, 5)
    assert isinstance(info.value, ConversationReadError)
    assert info.value.where is not None and info.value.where.file == path
    assert str(info.value) == info.value.code  # what the hook receives, nothing added


def test_malformed_lines_are_skipped_counted_out_and_reported_once(murmur_home: Path) -> None:
    path = fill(murmur_home, 3)
    content = path.read_text().splitlines()
    content.insert(0, '{"type":"murmur.record","capsule":"demo","created_ms":1}')
    content.insert(2, "not json at all")
    content.insert(3, '{"role": 7, "content": []}')
    content.insert(4, "")
    path.write_text("\n".join(content) + "\n")
    reports: list[str] = []
    reader = RecordReader(on_skipped=reports.append)
    cursor: str | None = None
    seen: list[str] = []
    while True:
        page = reader.read_page(path, cursor, 1)
        assert page.total == 3
        seen.extend(texts(page.messages))
        cursor = page.next_cursor
        if cursor is None:
            break
    assert seen == ["message 2", "message 1", "message 0"]
    assert reports == [f"{path}: line 1 is not a message and was skipped"]


def test_250_messages_at_25_is_ten_pages_one_read_then_one_more(murmur_home: Path) -> None:
    path = fill(murmur_home, 250)
    reader = RecordReader()

    def walk() -> int:
        cursor: str | None = None
        pages = 0
        while True:
            page = reader.read_page(path, cursor, 25)
            pages += 1
            cursor = page.next_cursor
            if cursor is None:
                return pages

    assert walk() == 10 and reader.reads == 1
    writer = RecordWriter(murmur_home, path, lambda _: None)
    for number in range(10):
        writer.append(user_message(f"more {number}"))
    assert reader.read_page(path, None, 25).total == 260
    assert walk() == 11 and reader.reads == 2


def test_tool_messages_reach_readers_in_the_envelope(murmur_home: Path) -> None:
    writer, path, _ = writer_for(murmur_home)
    writer.append(user_message("go"))
    tool = tool_message("toolu_9", True, "boom", None)
    writer.append(tool)
    page = RecordReader().read_page(path, None, 10)
    newest = page.messages[0]
    assert newest.role == "tool" and newest.id == tool["id"]
    assert json.loads(newest.content) == {
        "__murmur_tool_msg__": True, "tool_call_id": "toolu_9", "is_error": True,
        "body": [{"type": "text", "text": "boom"}],
    }
    assert json.loads(page.messages[1].content) == [{"type": "text", "text": "go"}]


@pytest.mark.parametrize("segment", ["", "../escape", "a/b", ".hidden", ".", ".."])
def test_context_ids_that_are_not_segments_open_no_record(murmur_home: Path,
                                                          segment: str) -> None:
    assert record_path(murmur_home, "rec", segment) is None
    assert record_path(murmur_home, segment, "ctx") is None


def test_a_cursor_of_five_thousand_digits_is_invalid_not_a_crash(murmur_home: Path) -> None:
    path = fill(murmur_home, 3)
    reader = RecordReader()
    for cursor in ("mc_" + "9" * 5000, "mc_" + "1" * 4301, "mc_٣", "mc_+", "mc_++1", "mc_1_0"):
        with pytest.raises(ConversationReadError) as info:
            reader.read_page(path, cursor, 10)
        assert info.value.code == "invalid-cursor", cursor
    # what Rust's usize parse accepts: leading zeros (any number of them) and one `+`
    assert texts(reader.read_page(path, "mc_" + "0" * 5000 + "2", 10).messages) == \
        ["message 1", "message 0"]
    assert texts(reader.read_page(path, "mc_+1", 10).messages) == ["message 0"]


def test_a_final_line_without_a_newline_is_a_message(murmur_home: Path) -> None:
    path = fill(murmur_home, 2)
    with path.open("ab") as handle:
        handle.write(json.dumps(user_message("no newline after me")).encode())
    page = RecordReader().read_page(path, None, 10)
    assert page.total == 3 and texts(page.messages)[0] == "no newline after me"


HOSTILE_LINES = {
    "nested 5,000 deep": b'{"role":"user","content":' + b"[" * 5000 + b"]" * 5000 + b"}",
    "nested 128 deep": b'{"role":"user","content":' + b"[" * 127 + b"]" * 127 + b"}",
    "nested a million deep": b"[" * 1_000_000,
    "invalid UTF-8": b'{"role":"user","content":[{"type":"text","text":"\xff\xfe"}]}',
    "cut mid-character": '{"role":"user","content":"é'.encode()[:-1],
    "lone surrogate": b'{"role":"user","content":[{"type":"text","text":"\\ud800"}]}',
    "lone low surrogate key": b'{"role":"user","\\udfff":1,"content":[]}',
    "raw NUL": b'{"role":"user","content":[{"type":"text","text":"a\x00b"}]}',
    "NaN": b'{"role":"user","content":NaN}',
    "Infinity": b'{"role":"user","content":[-Infinity]}',
    "1e999": b'{"role":"user","content":[],"n":1e999}',
    "a 5,000-digit number": b'{"role":"user","content":' + b"7" * 5000 + b"}",
    "UTF-16": '{"role":"user","content":[]}'.encode("utf-16"),
    "byte order mark": b'\xef\xbb\xbf{"role":"user","content":[]}',
}


@pytest.mark.parametrize("name", list(HOSTILE_LINES))
def test_a_line_murmur_cannot_read_is_skipped_counted_and_reported(murmur_home: Path,
                                                                   name: str) -> None:
    path = fill(murmur_home, 2)
    data = path.read_bytes()
    path.write_bytes(data + HOSTILE_LINES[name] + b"\n" + json.dumps(
        user_message("after it")).encode() + b"\n")
    reports: list[str] = []
    page = RecordReader(on_skipped=reports.append).read_page(path, None, 10)
    assert texts(page.messages) == ["after it", "message 1", "message 0"]
    assert page.total == 3
    assert reports == [f"{path}: line 3 is not a message and was skipped"]


def test_what_murmur_reads_is_a_message_whatever_its_fields_hold(murmur_home: Path) -> None:
    path = fill(murmur_home, 0)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        b'{"role":"user","content":' + b"[" * 126 + b"]" * 126 + b"}",  # 127 deep: fine
        b'{"role":"user","content":[{"type":"text","text":"\\ud83d\\ude00 \\u0000"}]}',
        b'{"role":"user","content":42,"id":7}',
        b'{"role":"assistant"}',
        b'{"role":"tool","tool_call_id":{"x":1},"is_error":"yes","content":"body"}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    page = RecordReader().read_page(path, None, 10)
    assert page.total == 5
    tool, bare, number, emoji, deep = page.messages
    assert json.loads(emoji.content)[0]["text"] == "\U0001F600 \x00"
    assert (number.content, number.id) == ("42", None)
    assert bare.content == ""  # no content at all, as Murmur hands it over
    assert json.loads(tool.content) == {"__murmur_tool_msg__": True, "tool_call_id": {"x": 1},
                                        "is_error": "yes", "body": "body"}
    assert deep.content == "[" * 126 + "]" * 126

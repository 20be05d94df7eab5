"""A threaded context reloaded from its record: a window on the record's bytes, read when
something first asks, giving exactly what the whole parse gave."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tui.core.chat import assistant_message, user_message
from tui.core.loop.context import Context
from tui.core.record.reader import RecordReader
from tui.core.record.window import RecordWindow

HEAD = {"model": "m", "system": "be brief"}


class NoImages:
    def payload_block(self, block: dict[str, Any]) -> dict[str, Any]:
        return block


class Seen:
    def __init__(self) -> None:
        self.logged: list[str] = []
        self.warned: list[str] = []
        self.recorded: list[list[str]] = []


def window(path: Path, seen: Seen) -> RecordWindow:
    reader = RecordReader(on_skipped=seen.logged.append)
    return RecordWindow(path, reader, seen.warned.append,
                        lambda ids: seen.recorded.append(list(ids)))


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines))
    return path


def test_the_window_reads_as_the_whole_parse_did(tmp_path: Path) -> None:
    record = write(tmp_path / "conversation.jsonl", [
        json.dumps({"content": [{"type": "text", "text": "no id, role last"}], "role": "user"}),
        "not json at all",
        json.dumps({"role": "assistant", "content": 5, "id": "msg_bad"}),
        json.dumps({"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                    "id": "msg_2", "source_id": "src_1"}),
        '{"role": "user", "content": [{"type": "te',  # a last line a crash cut
    ])
    seen = Seen()
    context = Context(NoImages(), head=HEAD)
    context.load(window(record, seen))
    assert seen.logged == seen.warned == seen.recorded == []  # nothing read before asked
    ids = context.ids
    assert len(ids) == 2 and ids[0].startswith("msg_") and ids[1] == "msg_2"
    assert context.ids == ids  # a minted id is minted once
    assert seen.logged == [f"{record}: line 2 is not a message and was skipped"]
    assert len(seen.warned) == 1 and "1 of 3 messages" in seen.warned[0] \
        and "message 2: its content is not a list of blocks" in seen.warned[0]
    assert seen.recorded == [ids]
    first, second = context.messages
    assert list(first) == ["role", "content", "id"] and first["id"] == ids[0]
    assert second == {"role": "assistant", "content": [{"type": "text", "text": "ok"}],
                      "id": "msg_2", "source_id": "src_1"}
    assert list(context.payload) == [
        {"role": "user", "content": [{"type": "text", "text": "no id, role last"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}]}]


def test_appended_messages_follow_the_window_and_count_as_if_held(tmp_path: Path) -> None:
    messages = [user_message(f"question {n}") if n % 2 == 0
                else assistant_message([{"type": "text", "text": f"answer {n}"}])
                for n in range(40)]
    record = write(tmp_path / "conversation.jsonl", [json.dumps(m) for m in messages])
    held = Context(NoImages(), head=HEAD)
    for message in messages:
        held.append(message, record=False)
    paged = Context(NoImages(), head=HEAD)
    paged.load(window(record, Seen()))
    more = user_message("one more")
    for context in (held, paged):
        context.append(more)
    assert paged.ids == held.ids
    assert list(paged.payload) == list(held.payload)
    assert paged.count() == held.count() and paged.count(10) == held.count(10)
    assert paged.request(HEAD, paged.payload) == held.request(HEAD, held.payload)
    paged.replace([user_message("a summary")])
    assert len(paged.ids) == 1 and paged.messages[0]["role"] == "user"


def test_the_record_form_is_not_held_beside_the_payload(tmp_path: Path) -> None:
    record = write(tmp_path / "conversation.jsonl",
                   [json.dumps(user_message(f"question {n}")) for n in range(5)])
    seen = Seen()
    context = Context(NoImages(), head=HEAD)
    context.load(window(record, seen))
    more = user_message("asked before the window was read")
    context.append(more, record=False)
    assert context.ids[-1] == more["id"] and len(context.ids) == 6  # the window's come first
    assert context.payload is context.payload  # held once, in the form the driver is sent
    first = context.messages[0]
    assert first == context.messages[0] and first is not context.messages[0]  # parsed anew
    assert first["content"] == [{"type": "text", "text": "question 0"}]
    assert len(seen.recorded) == 1  # the record's lines were gone through once


def test_a_missing_record_is_an_empty_window(tmp_path: Path) -> None:
    seen = Seen()
    context = Context(NoImages(), head=HEAD)
    context.load(window(tmp_path / "absent.jsonl", seen))
    assert context.ids == [] and list(context.payload) == [] and context.count() == 0
    assert seen.recorded == []

"""Listing, previews, search and export over real record files."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

from tui.core.conversations import (
    export_jsonl,
    export_markdown,
    read_preview,
    scan,
    search_all,
    search_file,
)
from tui.core.messages import assistant_message, tool_message, user_message
from tui.core.record import RecordWriter, record_path


def make(home: Path, record: str, context: str, messages: list[dict[str, object]],
         mtime: float | None = None) -> Path:
    path = record_path(home, record, context)
    assert path is not None
    writer = RecordWriter(home, path, lambda _: None)
    for message in messages:
        writer.append(message)
    writer.close()
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def test_scan_lists_every_record_newest_first(murmur_home: Path) -> None:
    make(murmur_home, "alpha", "ctx_old", [user_message("old one")], mtime=1000)
    make(murmur_home, "beta", "ctx_new", [user_message("new one")], mtime=3000)
    make(murmur_home, "alpha", "ctx_mid", [user_message("middle")], mtime=2000)
    found = scan(murmur_home)
    assert [c.context_id for c in found] == ["ctx_new", "ctx_mid", "ctx_old"]
    assert [c.context_id for c in scan(murmur_home, "alpha")] == ["ctx_mid", "ctx_old"]
    assert scan(murmur_home / "nowhere") == []


def test_preview_is_the_first_user_message(murmur_home: Path) -> None:
    path = make(murmur_home, "r", "c", [assistant_message([{"type": "text", "text": "hi"}]),
                                        user_message("  the   real\ntask  ")])
    with path.open("r+") as handle:
        content = handle.read()
        handle.seek(0)
        handle.write('{"type":"murmur.record"}\n' + content)
    assert read_preview(scan(murmur_home)[0]) == "the real task"


def test_search_finds_text_tool_calls_and_non_ascii(murmur_home: Path) -> None:
    make(murmur_home, "r", "c", [
        user_message("Find the Übergröße file"),
        assistant_message([{"type": "tool_call", "id": "t1", "name": "bash",
                            "input": {"command": "grep needle"}}]),
        tool_message("t1", False, "needle found", "tool:bash"),
    ])
    conversation = scan(murmur_home)[0]
    assert [h.located.message["role"] for h in search_file(conversation, "NEEDLE")] == \
        ["assistant", "tool"]
    hits = list(search_file(conversation, "übergröße"))
    assert len(hits) == 1 and "Übergröße" in hits[0].snippet
    assert list(search_file(conversation, "absent")) == []


def test_search_all_goes_newest_record_first(murmur_home: Path) -> None:
    make(murmur_home, "r", "older", [user_message("shared word")], mtime=1000)
    make(murmur_home, "r", "newer", [user_message("shared word"), user_message("shared again")],
         mtime=2000)
    hits = list(search_all(scan(murmur_home), "shared"))
    assert [(h.conversation.context_id, h.snippet) for h in hits] == [
        ("newer", "shared again"), ("newer", "shared word"), ("older", "shared word")]


def test_exports(murmur_home: Path) -> None:
    path = make(murmur_home, "r", "c", [
        user_message("Do it"),
        assistant_message([{"type": "thinking", "text": "hmm"},
                           {"type": "tool_call", "id": "t1", "name": "bash",
                            "input": {"command": "ls"}}]),
        tool_message("t1", True, "boom", "tool:bash"),
    ])
    with path.open("a") as handle:
        handle.write("garbage line\n")
    out = io.StringIO()
    assert export_jsonl(path, out) == 3
    assert [json.loads(line)["role"] for line in out.getvalue().splitlines()] == \
        ["user", "assistant", "tool"]
    markdown = io.StringIO()
    assert export_markdown(scan(murmur_home)[0], markdown) == 3
    text = markdown.getvalue()
    assert text.startswith("# r / c")
    assert "**call bash** `t1`" in text and "## result of bash `t1` (error)" in text
    assert "> hmm" in text and "garbage" not in text

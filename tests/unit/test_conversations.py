"""Listing, previews, search and export over real record files."""

from __future__ import annotations

import io
import json
from pathlib import Path

from tests.fakes import write_conversation as make
from tui.core.chat import assistant_message, tool_message, user_message
from tui.core.record.catalog import read_preview, scan, search_all, search_file
from tui.core.record.export import export_jsonl, export_markdown


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
    # the fence is not what the reader sees: its words find nothing, the snippet has none
    assert list(search_file(conversation, "untrusted-content")) == []
    assert [h.snippet for h in search_file(conversation, "found")] == ["needle found"]


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


def hostile_lines(path: Path) -> None:
    lines = [
        json.dumps({"role": "user", "content": "first \x1b]0;t\x07\u009b2J task\nline two"}),
        json.dumps({"role": "assistant", "content": [
            {"type": "image", "source": "a string"}, {"type": "image", "source": {"sha256": 5}},
            {"type": "text", "text": None}, {"type": "tool_call", "name": ["n"], "id": 3,
                                              "input": "```\n# not a heading\n```"},
            "bare string", {"type": "thinking", "text": {"x": "y"}}], "id": {"an": "id"}}),
        json.dumps({"role": "tool", "tool_call_id": 3, "is_error": "no",
                    "content": {"not": "a list"}}),
        '{"role":"user","content":"\\ud800 lone"}',
        json.dumps({"role": "user", "content": "the final line, without a newline"}),
    ]
    path.write_text("\n".join(lines), encoding="utf-8")


def test_export_of_a_hostile_record_is_valid_and_complete(murmur_home: Path) -> None:
    path = make(murmur_home, "r", "c", [])
    path.parent.mkdir(parents=True, exist_ok=True)
    hostile_lines(path)
    out = io.StringIO()
    assert export_jsonl(path, out) == 4
    raw = out.getvalue()
    assert "\u009b" not in raw and "\\u009b" in raw  # C1 escaped, safe to print
    exported = [json.loads(line) for line in raw.encode("utf-8").decode().splitlines()]
    assert exported[0]["content"].startswith("first \x1b]0;t\x07")  # JSON keeps it, escaped
    assert exported[-1]["content"] == "the final line, without a newline"
    markdown = io.StringIO()
    conversation = scan(murmur_home)[0]
    assert export_markdown(conversation, markdown) == 4
    text = markdown.getvalue()
    text.encode("utf-8")
    assert [ch for ch in text if not ch.isprintable() and ch != "\n"] == []
    assert "first ␛]0;t␇<U+009B>2J task\nline two" in text
    assert "*image a string*" in text and "*image  5*" in text
    assert '**call ["n"]** `3`' in text
    assert "````json\n\"```\\n# not a heading\\n```\"\n````" in text  # the fence holds
    assert '"bare string"' in text and '> {"x":"y"}' in text
    assert "## result of [\"n\"] `3`\n" in text  # is_error "no" is not an error
    assert '```json\n{"not":"a list"}\n```' in text
    assert "the final line, without a newline" in text and "lone" not in text


def test_preview_and_search_of_a_hostile_record_are_printable(murmur_home: Path) -> None:
    path = make(murmur_home, "r", "c", [])
    path.parent.mkdir(parents=True, exist_ok=True)
    hostile_lines(path)
    conversation = scan(murmur_home)[0]
    assert read_preview(conversation) == "first ␛]0;t␇<U+009B>2J task line two"
    hits = list(search_file(conversation, "task"))
    assert [hit.snippet for hit in hits] == ["first ␛]0;t␇<U+009B>2J task line two"]
    assert [hit.located.message["content"] for hit in search_file(conversation, "FINAL")] == \
        ["the final line, without a newline"]

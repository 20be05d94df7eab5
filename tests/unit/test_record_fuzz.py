"""Record files made of hostile lines: every reader returns messages and a count of skipped
lines, never an exception; the readers agree; what the browser draws and what export writes is
valid for any of them."""

from __future__ import annotations

import io
import json
import re
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rich.console import Console

from tui.app.browser.message_render import MAX_CHARS, render_message
from tui.core.errors import ConversationReadError, TraceFormatError
from tui.core.record.backward import BackwardReader, count_messages, read_forward
from tui.core.record.catalog import Conversation, read_preview, search_file
from tui.core.record.export import export_jsonl, export_markdown
from tui.core.record.reader import RecordReader, decode_cursor, parse_record_bytes
from tui.core.trace.reader import read_trace

UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\ud800-\udfff]")  # what no terminal may receive

# -- hostile lines ----------------------------------------------------------------------------
nasty_text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["\x1b[2J", "\x1b]0;title\x07", "\x1b]52;c;aGk=\x07", "\u009b31m", "\x00",
                     "a\rb", "\r\n", "\t", "\ud800", "x\udfffy", "\U0001F600", "é" * 30,
                     "# heading\n> quote\n```\ncode", "|a|b|\n|-|-|\n|1|2|", "`" * 10]),
)
scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), nasty_text)
values = st.recursive(scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(nasty_text, inner, max_size=4)), max_leaves=12)
block = st.one_of(
    values,
    st.fixed_dictionaries(
        {"type": st.one_of(st.sampled_from(["text", "thinking", "tool_call", "image"]), values)},
        optional={"text": st.one_of(nasty_text, values), "name": values, "id": values,
                  "input": values, "source": st.one_of(values, st.fixed_dictionaries(
                      {}, optional={"media_type": values, "sha256": values, "bytes": values}))}),
)
message = st.fixed_dictionaries(
    {"role": st.one_of(st.sampled_from(["user", "assistant", "tool"]), nasty_text,
                       st.just("r" * 3000))},
    optional={"content": st.one_of(values, st.lists(block, max_size=6)),
              "id": st.one_of(st.just("msg_0199aaaaaaaa7000800000000000000a"),
                              st.just("msg_ffffffffffffffffffffffffffffffff"), values),
              "tool_call_id": values, "is_error": values, "source_id": values,
              "fence": values})


def encoded(value: Any, ascii_only: bool) -> bytes:
    """JSON as a writer might write it: a lone surrogate ends up an escape or bad UTF-8."""
    return json.dumps(value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")


def cut(data: bytes, at: int) -> bytes:
    return data[:at % (len(data) + 1)]


def spoiled(data: bytes, at: int, byte: int) -> bytes:
    index = at % (len(data) + 1)
    return data[:index] + bytes([byte]) + data[index:]


def nested(depth: int, opener: str) -> bytes:
    closer = "]" if opener == "[" else "}"
    body = ('{"a":' if opener == "{" else "[") * depth + "1" + closer * depth
    return f'{{"role":"user","content":{body}}}'.encode()


huge = json.dumps({"role": "assistant", "content": [{"type": "text",
                                                     "text": "h" * 1_000_000}]}).encode()
line = st.one_of(
    st.builds(encoded, message, st.booleans()),
    st.builds(encoded, values, st.booleans()),
    st.builds(cut, st.builds(encoded, message, st.booleans()), st.integers(0, 10_000)),
    st.builds(spoiled, st.builds(encoded, message, st.just(False)), st.integers(0, 10_000),
              st.sampled_from([0x00, 0x0A, 0x80, 0xC3, 0xED, 0xFF])),
    st.builds(nested, st.sampled_from([1, 126, 127, 128, 1000, 50_000]), st.sampled_from("[{")),
    st.sampled_from([b"", b"   ", b"\r", b"NaN", b'{"role":"user","content":NaN}',
                     b'{"role":"user","content":1e999}', b'{"role":"user","n":' + b"9" * 5000
                     + b"}", b"\xef\xbb\xbf{\"role\":\"user\"}", b"[" * 100_000,
                     b'{"type":"murmur.record","capsule":"x"}', huge]),
    st.binary(max_size=40),
)
record_file = st.builds(lambda lines, newline: b"\n".join(lines) + (b"\n" if newline else b""),
                        st.lists(line, max_size=10), st.booleans())
cursor = st.one_of(st.text(max_size=12), st.builds(lambda d: f"mc_{d}", st.one_of(
    st.integers(0, 20).map(str), st.just("9" * 5000), st.just("0" * 4400 + "1"),
    st.text(alphabet="0123456789+-_ ٣", max_size=8))))


# -- what every reader must do ----------------------------------------------------------------
def check_file(path: Path, limit: int, hostile_cursor: str) -> None:
    data = path.read_bytes()
    messages, skipped = parse_record_bytes(data)
    blank = sum(1 for raw in data.split(b"\n") if not raw.strip())
    assert len(messages) + len(skipped) + blank == data.count(b"\n") + 1

    reader = RecordReader()
    pages: list[list[str]] = []
    next_cursor: str | None = None
    while True:
        page = reader.read_page(path, next_cursor, limit)
        assert page.total == len(messages)
        for wit in page.messages:  # what a hook receives must lower to a WIT string
            for text in (wit.role, wit.content, wit.id or "", wit.source_id or ""):
                text.encode("utf-8")
        pages.append([wit.content for wit in page.messages])
        next_cursor = page.next_cursor
        if next_cursor is None:
            break
    try:
        end = decode_cursor(hostile_cursor, len(messages))
        assert 0 <= end <= len(messages)
    except ConversationReadError as exc:
        assert exc.code == "invalid-cursor"

    backward = [located.message for page in BackwardReader(path).walk(limit) for located in page]
    assert backward == list(reversed(messages))
    assert count_messages(path) == (len(messages), len(skipped))
    forward, _ = read_forward(path, 0, 10_000)
    assert [located.message for located in forward] == messages

    conversation = Conversation("r", "c", str(path), len(data), 0.0)
    assert UNSAFE.search(read_preview(conversation)) is None
    for hit in search_file(conversation, "a"):
        assert UNSAFE.search(hit.snippet) is None

    console = Console(width=80, file=io.StringIO(), color_system="truecolor")
    names: dict[str, str] = {}
    for located in (m for page in BackwardReader(path).walk(limit) for m in page):
        drawn = render_message(located.message, names, console, 80,
                               size=located.end - located.start)
        assert all(UNSAFE.search(text.plain) is None for text in drawn)
        assert sum(len(text.plain.rstrip()) for text in drawn) < MAX_CHARS * 3

    out = io.StringIO()
    assert export_jsonl(path, out) == len(messages)
    exported = out.getvalue().encode("utf-8").decode("utf-8").splitlines()  # any line end
    assert [json.loads(text, parse_constant=refuse) for text in exported] == messages
    document = io.StringIO()
    assert export_markdown(conversation, document) == len(messages)
    # a Markdown document keeps line ends and tabs (code keeps its indentation), nothing else
    assert UNSAFE.search(document.getvalue().replace("\n", "").replace("\t", "")) is None
    document.getvalue().encode("utf-8")

    try:  # the same bytes as a trace: read, or refused naming the file and line
        read_trace(path)
    except TraceFormatError as exc:
        assert re.match(re.escape(str(path)) + r":\d+: ", str(exc))


def refuse(name: str) -> None:
    raise ValueError(f"{name} is not JSON")


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=record_file, limit=st.integers(1, 5), hostile_cursor=cursor)
def test_hostile_record_files_are_read_drawn_and_exported(data: bytes, limit: int,
                                                          hostile_cursor: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "conversation.jsonl"
        path.write_bytes(data)
        check_file(path, limit, hostile_cursor)


@pytest.mark.parametrize("depth", [126, 127, 128, 129, 5000])
def test_nesting_is_read_up_to_murmurs_limit_at_any_depth_of_the_stack(
        tmp_path: Path, depth: int) -> None:
    """127 levels are a message (serde_json's limit); more are skipped, however deep the
    caller's own stack already is."""
    path = tmp_path / "conversation.jsonl"
    path.write_bytes(nested(depth - 1, "[") + b"\n")

    def at_depth(levels: int) -> tuple[int, int]:
        return at_depth(levels - 1) if levels else count_messages(path)

    expected = (1, 0) if depth <= 127 else (0, 1)
    assert count_messages(path) == expected
    assert at_depth(900) == expected
    check_file(path, 3, "mc_1")

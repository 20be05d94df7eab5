"""The SSE parser: Murmur's frames, comments, line endings, any chunking, a line cap."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.text.sse import ServerEvent, SseParser

STREAM = (b"event: connection-ack\ndata: {\"role\":\"observer\"}\n\n"
          b":heartbeat\n\n"
          b"id: 3\r\nevent: status\r\ndata: {\"id\":\"tsk_1\"}\r\n\r\n"
          b"id: 4\revent: text\rdata: one\rdata:two\r\r"
          b"data: no event name\n\n"
          b"event: empty\n\n"
          b"id: 9\nevent: cut\ndata: never ended")
EXPECTED = [ServerEvent("connection-ack", "{\"role\":\"observer\"}"),
            ServerEvent("status", "{\"id\":\"tsk_1\"}", "3"),
            ServerEvent("text", "one\ntwo", "4"),
            ServerEvent("message", "no event name")]


def parse(pieces: list[bytes], cap: int = 1 << 20) -> tuple[list[ServerEvent], SseParser]:
    parser = SseParser(cap)
    frames = [f for piece in pieces for f in parser.feed(piece)]
    return frames, parser


def test_frames_comments_and_line_endings() -> None:
    frames, parser = parse([STREAM])
    assert frames == EXPECTED
    assert parser.comments == 1  # the heartbeat; a frame the stream cut off is not delivered


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=20))
def test_any_chunking_gives_the_same_frames(cuts: list[int]) -> None:
    points = sorted(set(cuts))
    pieces = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert parse(pieces)[0] == EXPECTED


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=3000), max_size=12), st.binary(max_size=64))
def test_a_huge_line_is_dropped_whole_in_any_chunking(cuts: list[int], junk: bytes) -> None:
    junk = junk.replace(b"\n", b"").replace(b"\r", b"")
    stream = (b"event: text\ndata: " + b"x" * 2000 + junk + b"\n\n"
              b"id: 1\nevent: status\ndata: {}\n\n")
    points = sorted({c for c in cuts if c <= len(stream)})
    pieces = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True)]
    frames, parser = parse(pieces, cap=1000)
    assert frames == [ServerEvent("status", "{}", "1")]
    assert parser.dropped == 1


def test_memory_stays_bounded_while_a_line_never_ends() -> None:
    parser = SseParser(4096)
    for _ in range(1000):
        assert parser.feed(b"data: " + b"y" * 10_000) == []
        assert len(parser._buffer) <= 4096
    assert parser.feed(b"\n\nevent: status\ndata: {}\n\n") == [ServerEvent("status", "{}")]
    assert parser.dropped == 1


def test_invalid_utf8_is_replaced_not_raised() -> None:
    assert parse([b"data: \xff\xfe ok\n\n"])[0] == [ServerEvent("message", "\ufffd\ufffd ok")]

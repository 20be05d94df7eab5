"""A driver's stream that also hears about tool calls the model is writing.

The loop's sink (`loop.report.DeltaSink`) has `tool_call_composing(call_id, name, input_bytes)`;
a driver calls it when a call starts (0 bytes) and each time its input JSON grew, as a
WebAssembly driver does through `murmur:stream/events`. Other sinks lack it: then nothing is
said.
"""

from __future__ import annotations

from collections.abc import Callable

from tui.core.inference.driver import StreamSink

Composing = Callable[[str, str, int], None]


def composing_of(sink: StreamSink) -> Composing | None:
    told = getattr(sink, "tool_call_composing", None)
    return told if callable(told) else None


class CallSizes:
    """What was told of each call so far: its start once, then only counts that grow."""

    def __init__(self, composing: Composing | None) -> None:
        self._composing = composing
        self._told: dict[str, int] = {}

    def tell(self, call_id: str | None, name: str | None, input_bytes: int) -> None:
        if self._composing is None or not call_id or not name:
            return
        if call_id not in self._told:
            self._told[call_id] = 0
            self._composing(call_id, name, 0)
        if input_bytes > self._told[call_id]:
            self._told[call_id] = input_bytes
            self._composing(call_id, name, input_bytes)

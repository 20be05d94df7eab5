"""`murmur:stream/events@0.1.0`: what a component signals while a turn is still in flight.

`emit-chunk` / `emit-thinking-chunk` do what `murmur:text/chunks` does (a driver's text and
thinking as it arrives; a tool's text, while its call runs, is that call's progress:
`ToolProgress`, at most 4 KiB a message; its thinking is the turn's). `tool-call-started(id, name)`
and `tool-call-input-bytes(id, bytes)` tell that the model has begun writing a tool call and how
many bytes of its input JSON it has written so far (cumulative). As in Murmur they count only
from the session's inference driver, and only the first start of a non-empty id and counts
that grow are kept; everything else is ignored. None of them ever fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from tui.core.wasm.calls import CallContext, current


@runtime_checkable
class ToolCallSink(Protocol):
    """A driver's stream that also hears about tool calls being composed."""

    def tool_call_composing(self, call_id: str, tool_name: str, input_bytes: int) -> None: ...


def emit_chunk(chunk: str) -> None:
    stream = current().stream
    if stream is not None:
        stream.text(chunk)


def emit_thinking_chunk(chunk: str) -> None:
    stream = current().stream
    if stream is not None:
        stream.thinking(chunk)


def _driver_sink(context: CallContext) -> ToolCallSink | None:
    stream: object = context.stream
    if context.kind != "driver" or not isinstance(stream, ToolCallSink):
        return None
    return stream


def tool_call_started(call_id: str, name: str) -> None:
    context = current()
    sink = _driver_sink(context)
    if sink is None or not call_id:
        return
    calls = context.composing
    if call_id in calls:
        return
    calls[call_id] = (name, 0)
    sink.tool_call_composing(call_id, name, 0)


def tool_call_input_bytes(call_id: str, input_bytes: int) -> None:
    context = current()
    sink = _driver_sink(context)
    if sink is None:
        return
    calls = context.composing
    started = calls.get(call_id)
    if started is None or input_bytes <= started[1]:
        return
    calls[call_id] = (started[0], input_bytes)
    sink.tool_call_composing(call_id, started[0], input_bytes)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "emit-chunk": emit_chunk, "emit-thinking-chunk": emit_thinking_chunk,
    "tool-call-started": tool_call_started, "tool-call-input-bytes": tool_call_input_bytes}

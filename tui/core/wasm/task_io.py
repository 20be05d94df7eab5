"""`murmur:task-io/read@0.1.0` (Murmur v0.3.0 on): a hook reads its task's input and output.

Gated as Murmur gates it, by `capabilities.task_io.read: true` on the hook's entry: an ungranted
hook still links, and every read answers `not-granted`. murmur-tui does not serve the task's
text through it yet: a granted read answers `no-task`, as Murmur does outside a task, so a hook
built for Murmur loads, runs and takes the path it already has for "nothing to read"
(docs/wit.md, "Interface versions").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tui.core.wasm.calls import current


def _refusal() -> str:
    context = current()
    return "not-granted" if not context.task_io_read else "no-task"


def input_len(form: str) -> Any:
    return _refusal()  # result<u64, io-error>: an enum's case is a str, a length an int


def read_input(form: str, offset: int, max_bytes: int) -> Any:
    from wasmtime.component import Variant

    return Variant("err", _refusal())  # result<string, io-error>: both str, so tagged


def output_len() -> Any:
    return _refusal()


def read_output(offset: int, max_bytes: int) -> Any:
    from wasmtime.component import Variant

    return Variant("err", _refusal())


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "input-len": input_len, "read-input": read_input, "output-len": output_len,
    "read-output": read_output}

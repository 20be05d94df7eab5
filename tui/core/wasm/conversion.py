"""Faster conversion of values into a component call, on the pinned wasmtime-py.

1. Remember a component type's structure on the type object.

wasmtime-py 50 reads a component type's structure back through the C API every time it is
asked: converting a `list<record>` re-reads the record's fields (and each option field's payload
type) for every element, making new type objects each time. Handing 1,000 messages to an
`on-compaction` hook cost ~110 ms that way, nearly all of it re-reading the same type. A type
object's structure never changes, so murmur-tui keeps what the first read returned on the object
itself, and keeps each function's type on the function (a `Func` belongs to one store, whose
types do not change); the values themselves are converted exactly as before.

2. Copy a string into the C API once. wasmtime-py copies each string's bytes into a ctypes
array and then again into the vector it hands to wasmtime; one copy is enough.

Together they take a 1,000-message on-compaction call from ~110 ms to the figure in
docs/benchmarks.md.

3. Lift a result only up to its caps. wasmtime-py turns a lifted string into a Python `str` by
copying all of its bytes (twice: a bytearray, then the decoded text), and a lifted list into one
Python object per element. A tool returning a 100 MiB string cost gigabytes that way. While the
result of a call made `with limited(caps)` is lifted, a string keeps at most `caps.string_bytes`
bytes (cut at a character boundary) and all the result's strings together at most
`caps.total_bytes`; a list keeps its first `caps.list_items` elements. A cut string is a
`CutStr` and a cut list a `CutList`, each saying how big the original was; the rest is freed
where it lies, never copied into Python. What wasmtime itself holds while it lifts (the guest's
memory, and two copies of the value) is outside Python's reach and is measured in
docs/components.md. A string a component passes to a host import while a call runs (a
`request-input` prompt, a streamed chunk, a script capsule's tool input) keeps at most
`ARGUMENT_BYTES` (1 MiB) the same way; lists passed to imports (a hook's messages) are whole.

`install` runs once, when the runtime starts, and only on the wasmtime-py version pinned
(another version may build its types, copy strings or call functions differently).
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from typing import Any

from wasmtime import _ffi as ffi
from wasmtime.component import Func, _func, _types

PINNED = "50.0.1"
MEMOIZED = (
    (_types.RecordType, "fields"),
    (_types.TupleType, "elements"),
    (_types.ListType, "element"),
    (_types.OptionType, "payload"),
    (_types.ResultType, "ok"),
    (_types.ResultType, "err"),
    (_types.VariantType, "cases"),
)
_installed = False


@dataclass(frozen=True)
class LiftCaps:
    """How much of one call's result is copied into Python."""

    string_bytes: int   # one string
    total_bytes: int    # all the result's strings together
    list_items: int     # one list


RESULT_BYTES = 1 << 20  # a tool's or driver's result text, as Spice caps it
RESULT_CAPS = LiftCaps(string_bytes=RESULT_BYTES, total_bytes=2 * RESULT_BYTES, list_items=64)
ARGUMENT_BYTES = 1 << 20  # one string argument of a host import


class CutStr(str):
    """A lifted string cut at its cap; `full_bytes` is its size in the component."""

    full_bytes: int


class CutList(list[Any]):
    """A lifted list cut at its cap; `full_length` is its length in the component."""

    full_length: int


class _Lift:
    def __init__(self, caps: LiftCaps | None) -> None:
        self.caps = caps
        self.active = False  # set once the call has returned: only its result is capped
        self.used = 0


_local = threading.local()


def _stack() -> list[_Lift]:
    stack: list[_Lift] | None = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


@contextmanager
def limited(caps: LiftCaps | None) -> Iterator[None]:
    """Cap the result of the component call made inside (None: no caps). Calls nest."""
    stack = _stack()
    stack.append(_Lift(caps))
    try:
        yield
    finally:
        stack.pop()


def _capping() -> _Lift | None:
    stack = _stack()
    if stack and stack[-1].active and stack[-1].caps is not None:
        return stack[-1]
    return None


def _in_call() -> bool:
    """A component call on this thread is running (what is lifted now is an import's
    argument, not the call's result)."""
    stack = _stack()
    return bool(stack) and not stack[-1].active


def _memo(name: str, read: Any) -> property:
    key = f"_murmur_{name}"

    def get(self: Any) -> Any:
        try:
            return self.__dict__[key]
        except KeyError:
            value = self.__dict__[key] = read(self)
            return value

    return property(get, doc=f"{name} (read once per type object by murmur-tui)")


def install() -> None:
    """Memoize the structural properties (once; only on the pinned wasmtime-py version)."""
    global _installed
    if _installed:
        return
    try:
        version = metadata.version("wasmtime")
    except metadata.PackageNotFoundError:
        return
    if version != PINNED:  # another version may cache, or build types, differently
        return
    for cls, name in MEMOIZED:
        original = cls.__dict__.get(name)
        if isinstance(original, property) and original.fget is not None:
            setattr(cls, name, _memo(name, original.fget))
    read_type = Func.type

    def func_type(self: Func, store: Any) -> Any:
        """A function's type: the same for the life of its store (a Func is one store's)."""
        try:
            return self.__dict__["_murmur_type"]
        except KeyError:
            value = self.__dict__["_murmur_type"] = read_type(self, store)
            return value

    Func.type = func_type  # type: ignore[method-assign]
    ffi.str_to_capi = _str_to_capi
    ffi.bytes_to_capi = _bytes_to_capi
    _func.enter_wasm = _entering(_func.enter_wasm)  # type: ignore[attr-defined, assignment]
    _types.String.convert_from_c = _lift_string  # type: ignore[method-assign]
    _types.ListType.convert_from_c = _lift_list  # type: ignore[method-assign]
    _installed = True


def _entering(enter: Callable[[Any], None]) -> Callable[[Any], None]:
    """`Func.__call__` runs the call through `enter_wasm`, then lifts the result: once the
    call has returned, what is lifted next on this thread is that result."""

    def enter_wasm(run: Any) -> None:
        enter(run)
        stack = _stack()
        if stack:
            stack[-1].active = True

    return enter_wasm


def _lift_string(self: Any, c: Any) -> str:
    vec = c.of.string
    try:
        size = int(vec.size)
        if size == 0:
            return ""
        lift = _capping()
        if lift is None or lift.caps is None:
            if size <= ARGUMENT_BYTES or not _in_call():
                return ctypes.string_at(vec.data, size).decode("utf-8")
            keep = _boundary(vec.data, ARGUMENT_BYTES)
        else:
            keep = min(size, lift.caps.string_bytes, max(0, lift.caps.total_bytes - lift.used))
            if keep < size:
                keep = _boundary(vec.data, keep)
            lift.used += keep
        text = ctypes.string_at(vec.data, keep).decode("utf-8") if keep else ""
        if keep == size:
            return text
        cut = CutStr(text)
        cut.full_bytes = size
        return cut
    finally:
        ffi.wasm_byte_vec_delete(ctypes.byref(vec))


def _boundary(data: Any, keep: int) -> int:
    """`keep`, moved back to the start of a UTF-8 character (the bytes are valid UTF-8)."""
    view = ctypes.cast(data, ctypes.POINTER(ctypes.c_uint8))
    while keep > 0 and view[keep] & 0xC0 == 0x80:
        keep -= 1
    return keep


def _lift_list(self: Any, c: Any) -> Any:
    raw = c.of.list
    try:
        size = int(raw.size)
        lift = _capping()
        keep = size if lift is None or lift.caps is None else min(size, lift.caps.list_items)
        element = self.element
        items: list[Any] = []
        for i in range(keep):
            value = raw.data[i]
            items.append(element.convert_from_c(value))
            value.kind = ffi.WASMTIME_COMPONENT_BOOL  # freed above: not again below
            value.of.boolean = False
        if self._is_bytes():
            return bytes(items)
        if keep == size:
            return items
        cut = CutList(items)
        cut.full_length = size
        return cut
    finally:
        ffi.wasmtime_component_vallist_delete(ctypes.byref(raw))


def _bytes_to_capi(s: bytes | bytearray) -> ffi.wasm_byte_vec_t:
    if not isinstance(s, (bytes, bytearray)):
        raise TypeError("expected bytes or bytearray")
    vec = ffi.wasm_byte_vec_t()
    ffi.wasm_byte_vec_new_uninitialized(ctypes.byref(vec), len(s))
    if s:
        ctypes.memmove(vec.data, bytes(s), len(s))
    return vec


def _str_to_capi(s: str) -> ffi.wasm_byte_vec_t:
    if not isinstance(s, str):
        raise TypeError("expected a string")
    return _bytes_to_capi(s.encode("utf-8"))

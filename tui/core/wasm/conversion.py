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
docs/benchmarks.md. `install` runs once, when the runtime starts, and only on the wasmtime-py
version pinned (another version may build its types, or copy strings, differently).
"""

from __future__ import annotations

import ctypes
from importlib import metadata
from typing import Any

from wasmtime import _ffi as ffi
from wasmtime.component import Func, _types

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
    _installed = True


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

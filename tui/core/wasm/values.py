"""WIT values in wasmtime-py: records carry kebab-case attribute names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # wasmtime is imported when a value is built: a session without
    from wasmtime.component import Record  # components never loads it


def record(**fields: Any) -> Record:
    """A Record from snake_case keywords (`log_path=` becomes the WIT field `log-path`)."""
    from wasmtime.component import Record

    value = Record()
    for name, field_value in fields.items():
        setattr(value, name.replace("_", "-"), field_value)
    return value


def field(value: Any, name: str, default: Any = None) -> Any:
    """A record field by its WIT name (`data-path`), or `default` when absent."""
    return getattr(value, name, default)


def plain(value: Any) -> Any:
    """Lifted values as plain Python: dicts with snake_case keys, {tag, payload} variants."""
    from wasmtime.component import Record, Variant

    if isinstance(value, Record):
        return {key.replace("-", "_"): plain(item) for key, item in vars(value).items()}
    if isinstance(value, Variant):
        return {"tag": value.tag, "payload": plain(value.payload)}
    if isinstance(value, list):
        return [plain(item) for item in value]
    if isinstance(value, tuple):
        return tuple(plain(item) for item in value)
    return value

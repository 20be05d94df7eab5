"""Single path segments: the values that name one file or folder — the capsule's name, the
record store and context id that name a conversation record, a store version."""

from __future__ import annotations

from tui.core.errors import LaunchError

MAX_NAME_BYTES = 255  # the longest file or folder name Linux (and macOS) take, in bytes


def segment_problem(value: str) -> str | None:
    """Why `value` is not a single path segment, or None when it is one (spec §3.1)."""
    if value == "":
        return "is empty; it must be a single path segment"
    if "/" in value or "\\" in value:
        return "is not a single path segment (it contains a '/')"
    if value in (".", ".."):
        return "is not a single path segment (it is '.' or '..')"
    if value.startswith("."):
        return "is not a single path segment (it starts with a '.')"
    if "\x00" in value:
        return "is not a single path segment (it contains a NUL byte)"
    size = len(value.encode("utf-8", "surrogatepass"))
    if size > MAX_NAME_BYTES:
        return (f"is {size} bytes long; a file or folder name holds at most {MAX_NAME_BYTES} "
                "bytes")
    return None


def check_segment(value: str, field: str) -> str:
    """Return `value` or raise LaunchError naming the field and the value."""
    problem = segment_problem(value)
    if problem:
        raise LaunchError(f"{field} {value!r} {problem}", code="E-CAP-011")
    return value

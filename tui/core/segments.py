"""Single path segments: the record store and context id that name a conversation record."""

from __future__ import annotations


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
    return None


def check_segment(value: str, field: str) -> str:
    """Return `value` or raise ValueError naming the field and the value."""
    problem = segment_problem(value)
    if problem:
        raise ValueError(f"{field} {value!r} {problem} [E-CAP-011]")
    return value

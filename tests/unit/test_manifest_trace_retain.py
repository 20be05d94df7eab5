"""`trace.retain` in murmur.yaml: `max_sessions` and `max_age` read (murmur-tui applies them to
formation directories, tui/core/formation/retention.py); wrong values refused naming the key."""

from __future__ import annotations

from tests.unit.test_manifest import FILE, MINIMAL, refused
from tui.core.manifest.reader import parse_capsule


def test_trace_retain_is_read() -> None:
    capsule = parse_capsule(FILE, MINIMAL + "trace:\n  capture: meta\n  retain:\n"
                                            "    max_sessions: 50\n    max_age: 30d\n")
    retain = capsule.trace.retain
    assert retain is not None
    assert (retain.max_sessions, retain.max_age_seconds) == (50, 30 * 86400)
    assert capsule.warnings == ()


def test_no_trace_retain_bounds_nothing() -> None:
    assert parse_capsule(FILE, MINIMAL).trace.retain is None
    only_age = parse_capsule(FILE, MINIMAL + "trace:\n  retain: {max_age: 12h}\n").trace.retain
    assert only_age is not None
    assert (only_age.max_sessions, only_age.max_age_seconds) == (None, 12 * 3600)


def test_a_wrong_max_age_is_refused_naming_the_key() -> None:
    error = refused(MINIMAL + "trace:\n  retain:\n    max_age: a month\n")
    assert str(error) == (f"{FILE}:13: trace.retain.max_age: expected a duration like 30d, "
                          "12h, 90m or 45s; got 'a month'")


def test_max_sessions_below_one_is_refused() -> None:
    error = refused(MINIMAL + "trace:\n  retain:\n    max_sessions: 0\n")
    assert error.problems[0].key == "trace.retain.max_sessions"


def test_an_unknown_key_in_trace_retain_is_warned() -> None:
    capsule = parse_capsule(FILE, MINIMAL + "trace:\n  retain:\n    max_session: 5\n")
    assert [w.key for w in capsule.warnings] == ["trace.retain.max_session"]
    assert capsule.trace.retain is not None and capsule.trace.retain.max_sessions is None

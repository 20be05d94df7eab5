"""The redundant-call rule alone (spec §6.2): which resource, which effect, in file order."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tui.core.trace.redundant import (
    Call,
    RedundantCall,
    effect_of,
    redundant_calls,
    resource_of,
)


def read(turn: int, resource: str, tool: str = "read-file") -> Call:
    return Call(turn, tool, {}, "read", resource)


def test_a_second_read_of_the_same_resource_is_redundant() -> None:
    found = redundant_calls([read(0, "a.md"), read(1, "b.md"), read(2, "a.md"), read(3, "a.md")])
    assert found == [RedundantCall(2, "read-file", "a.md", 0),
                     RedundantCall(3, "read-file", "a.md", 2)]


def test_a_mutate_or_an_undeclared_effect_in_between_forgets_the_read() -> None:
    calls = [read(0, "a.md"), Call(1, "write-file", {}, "mutate", "a.md"), read(2, "a.md"),
             Call(3, "touch", {}, None, "a.md"), read(4, "a.md"),
             Call(5, "odd", {}, "peek", "a.md"), read(6, "a.md")]
    assert redundant_calls(calls) == []


def test_a_mutate_of_another_resource_leaves_the_read_standing() -> None:
    calls = [read(0, "a.md"), Call(1, "write-file", {}, "mutate", "b.md"), read(2, "a.md")]
    assert [(r.turn, r.prior_turn) for r in redundant_calls(calls)] == [(2, 0)]


def test_resource_id_wins_over_the_input_and_is_taken_verbatim() -> None:
    assert resource_of("sym://Foo.bar", {"path": "x.py"}) == "sym://Foo.bar"
    assert resource_of("./A.md", None) == "./A.md"  # never normalised: ./A.md is not a.md
    assert redundant_calls([read(0, "./A.md"), read(1, "a.md")]) == []


def test_an_empty_resource_id_falls_back_to_the_input() -> None:
    assert resource_of("", {"path": "x.py"}) == "x.py"
    assert resource_of(None, {"path": "x.py"}) == "x.py"


def test_the_path_keys_in_priority_order_case_insensitively_on_the_key() -> None:
    assert resource_of(None, {"filename": "n", "FILE_PATH": "fp", "File": "f"}) == "f"
    assert resource_of(None, {"filename": "n", "FilePath": "fp"}) == "fp"
    assert resource_of(None, {"PATH": "p", "file": "f"}) == "p"
    assert resource_of(None, {"filename": "Notes.TXT"}) == "Notes.TXT"  # the value as it is


def test_a_key_whose_value_is_not_a_string_is_passed_over() -> None:
    assert resource_of(None, {"path": 3, "file": "f"}) == "f"
    assert resource_of(None, {"path": ["a"], "Path": "b"}) == "b"


def test_calls_with_no_resource_are_left_out_entirely() -> None:
    assert resource_of(None, {"command": "cat a.md"}) is None
    assert resource_of(None, {"dir": {"path": "nested.md"}}) is None  # top level only
    assert resource_of(None, ["path", "a.md"]) is None
    assert resource_of(None, "a.md") is None
    # a call the rule leaves out neither flags nor forgets
    calls = [Call(0, "read-file", {"path": "a.md"}, "read"),
             Call(1, "bash", {"command": "echo > a.md"}, "mutate"),
             Call(2, "read-file", {"Path": "a.md"}, "read")]
    assert redundant_calls(calls) == [RedundantCall(2, "read-file", "a.md", 0)]


def test_effects() -> None:
    assert [effect_of(value) for value in ("read", "mutate", None, "READ", "")] == [
        "read", "mutate", "unknown", "unknown", "unknown"]


def test_status_does_not_matter() -> None:
    # the rule reads the order of calls only: a failed read still counts as a read
    assert len(redundant_calls([read(0, "a"), read(0, "a"), read(1, "a")])) == 2


effects = st.sampled_from(["read", "mutate", None, "other"])
names = st.sampled_from(["a", "b", "c"])


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(names, effects), max_size=30))
def test_a_read_is_flagged_exactly_when_the_last_call_on_its_resource_was_a_read(
        steps: list[tuple[str, Any]]) -> None:
    calls = [Call(turn, "t", None, effect, name) for turn, (name, effect) in enumerate(steps)]
    flagged = {r.turn: r for r in redundant_calls(calls)}
    for turn, (name, effect) in enumerate(steps):
        earlier = [(t, e) for t, (n, e) in enumerate(steps[:turn]) if n == name]
        expected = effect == "read" and bool(earlier) and earlier[-1][1] == "read"
        assert (turn in flagged) == expected
        if expected:
            assert flagged[turn].prior_turn == earlier[-1][0]

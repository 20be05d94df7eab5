"""The one resolver of Murmur's session addresses (spec §6.1): which form a text is, and which
id of a newest-first list it names — or why none, in words that name the address."""

from __future__ import annotations

import pytest

from tui.core.errors import SessionNotFound
from tui.core.trace.address import parse, pick

IDS = [f"ses_019ad{n:027x}" for n in range(30, 0, -1)]  # newest first


def named(text: str, ids: list[str] = IDS) -> str:
    return pick(parse(text), ids, "here", lambda why: SessionNotFound(why))


def refusal(text: str, ids: list[str] = IDS) -> str:
    with pytest.raises(SessionNotFound) as refused:
        named(text, ids)
    return refused.value.text


def test_the_forms_are_told_apart_as_murmur_tells_them() -> None:
    assert [parse(text).form for text in
            ("@1", "@x", IDS[0], "d399", "a/b", "t.jsonl", IDS[0].upper())] == \
        ["ordinal", "ordinal", "id", "suffix", "path", "path", "suffix"]


def test_each_form_names_one_id_or_says_why_not() -> None:
    assert named("@1") == IDS[0] and named("@30") == IDS[-1]
    assert named(IDS[5]) == IDS[5] and named(IDS[5][-4:].upper()) == IDS[5]
    assert named("legacy", ["other", "legacy"]) == "legacy"  # an id of another shape, exactly
    assert refusal("@31") == "@31 is out of range — here has 30 sessions"
    assert refusal("@0").startswith("'@0' is not an ordinal")
    assert refusal("@1", []) == "no sessions in here"
    assert refusal("abc").startswith("'abc' is too short")
    assert refusal("a/b").startswith("'a/b' is a path")
    assert refusal("ffff") == "no session found matching suffix 'ffff' in here"
    assert refusal(f"ses_{'f' * 32}") == f"session ses_{'f' * 32} not found in here"
    same = [f"ses_{n:028x}beef" for n in range(14, 0, -1)]
    lines = refusal("BEEF", same).splitlines()
    assert lines[0] == "ambiguous: 'BEEF' matches 14 sessions — provide more characters"
    assert lines[1:11] == [f"  {found}" for found in same[:10]]
    assert lines[11:] == ["  … and 4 more"]
    assert "\x1b" not in refusal("\x1b[31mzzzz")  # a terminal escape is not replayed

"""The header and the status line fitted to a width: whole parts left out, never a word cut."""

from __future__ import annotations

import pytest

from tui.app.models.fitting import cut_at_word, fit_header, fit_parts, short_id

SESSION = "ses_01a22a87acf972798d61cf52b46826b6"
PARTS = ["finished ok", "turn 4/8", "11.4k in / 213 out", "context 51%", "0:12",
         "4 hook faults"]


def test_a_line_that_fits_keeps_its_wide_spacing() -> None:
    assert fit_parts(PARTS, None) == \
        "finished ok  ·  turn 4/8  ·  11.4k in / 213 out  ·  context 51%  ·  0:12  ·  " \
        "4 hook faults"
    assert fit_parts(PARTS, 200) == fit_parts(PARTS, None)


def test_a_tight_line_draws_closer_then_leaves_out_the_rightmost_parts_whole() -> None:
    assert fit_parts(PARTS, 80) == \
        "finished ok · turn 4/8 · 11.4k in / 213 out · context 51% · 0:12 · 4 hook faults"
    assert fit_parts(PARTS, 79) == \
        "finished ok · turn 4/8 · 11.4k in / 213 out · context 51% · 0:12"
    assert fit_parts(PARTS, 58) == "finished ok · turn 4/8 · 11.4k in / 213 out · context 51%"
    assert fit_parts(PARTS, 11) == "finished ok"


@pytest.mark.parametrize("width", range(1, 90))
def test_at_every_width_the_state_stays_and_no_part_is_cut(width: int) -> None:
    line = fit_parts(PARTS, width)
    assert len(line) <= width
    if width >= len(PARTS[0]):
        assert line.split(" · ")[0] == "finished ok"
        assert all(part in PARTS for part in line.split(" · ")) or \
            all(part in PARTS for part in line.split("  ·  "))


def test_a_state_too_long_for_the_width_ends_at_a_word() -> None:
    waiting = "waiting for the next task (type it below)"
    assert fit_parts([waiting, "0:05"], 30) == "waiting for the next task…"
    assert cut_at_word("retrying in 5 s (connection broke)", 20) == "retrying in 5 s…"
    assert cut_at_word("short", 20) == "short"


def test_the_header_keeps_the_session_id_shortened_to_its_end() -> None:
    assert short_id(SESSION) == "ses_…2b46826b6"
    assert SESSION.endswith(short_id(SESSION).partition("…")[2])
    assert fit_header("murmur-demo", "0.1.0", "scripted-demo", SESSION, 120) == \
        f"murmur-demo 0.1.0  ·  model scripted-demo  ·  {SESSION}"
    assert fit_header("murmur-demo", "0.1.0", "scripted-demo", SESSION, 78) == \
        f"murmur-demo 0.1.0 · model scripted-demo · {SESSION}"
    assert fit_header("screen-fixture", "1.0.0", "fixture-model", SESSION, 78) == \
        "screen-fixture 1.0.0  ·  model fixture-model  ·  ses_…2b46826b6"
    assert fit_header("screen-fixture", "1.0.0", "fixture-model", SESSION, 58) == \
        "screen-fixture 1.0.0  ·  ses_…2b46826b6"
    assert fit_header("screen-fixture", "1.0.0", "fixture-model", SESSION, 31) == \
        "screen-fixture · ses_…2b46826b6"
    assert fit_header("screen-fixture", "1.0.0", "fixture-model", SESSION, 20) == \
        "ses_…2b46826b6"

"""Lists, tables and the transcript draw in the theme's colours: rows carry the theme's
background and text, the cursor row the theme's cursor (brighter while the list has focus),
the row under the mouse the hover colour — in every bundled theme, Textual's own and a user
theme, and again after the theme changes."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.segment import Segment
from textual.color import Color
from textual.pilot import Pilot

from tests.app.conftest import recorded, replay
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.app.themes import user_theme_dir
from tui.app.widgets.row_list import RowList

USER_THEME = ("name: mine\ndark: true\nprimary: '#d04030'\nbackground: '#101820'\n"
              "surface: '#1c2a38'\nforeground: '#e8e0c8'\n")
THEMES = ("murmur-dark", "murmur-light", "murmur-high-contrast", "textual-dark",
          "textual-light", "mine")


def variable(app: SupervisorApp, name: str) -> Color:
    return Color.parse(app.theme_variables[name])


def backgrounds(segments: list[Segment]) -> set[tuple[int, int, int] | None]:
    """Each segment's background as RGB (None where a segment has none: a default)."""
    found: set[tuple[int, int, int] | None] = set()
    for segment in segments:
        colour = segment.style.bgcolor if segment.style else None
        found.add(None if colour is None else tuple(colour.get_truecolor()))
    return found


def foregrounds(segments: list[Segment]) -> set[tuple[int, int, int] | None]:
    found: set[tuple[int, int, int] | None] = set()
    for segment in segments:
        if not segment.text.strip():
            continue  # padding: only its background shows
        colour = segment.style.color if segment.style else None
        found.add(None if colour is None else tuple(colour.get_truecolor()))
    return found


def rgb(colour: Color) -> tuple[int, int, int]:
    return colour.rgb


def plain_row(rows: RowList) -> int:
    """A row drawn in the list's own colours (no style of its own), not under the cursor."""
    for position, row in enumerate(rows.rows):
        if not row.style and position != rows.cursor:
            return position
    raise AssertionError("no plain row")


def drawn(rows: RowList, position: int) -> list[Segment]:
    return list(rows.render_line(position - rows.scroll_offset.y))


async def replayed(app: SupervisorApp, pilot: Pilot[int]) -> RowList:
    await replay(pilot, recorded())
    rows = app.supervisor.tools.rows
    await wait_until(pilot, lambda: rows.row_count >= 2 and rows.cursor is not None)
    app.supervisor.prompt.focus()  # neither the list nor the transcript has focus
    await wait_until(pilot, lambda: app.supervisor.prompt.has_focus)
    await pilot.pause()  # and the list drawn without it
    return rows


@pytest.mark.parametrize("theme", THEMES)
async def test_rows_and_transcript_draw_in_the_theme(murmur_home: Path, theme: str) -> None:
    user_theme_dir(murmur_home).mkdir(parents=True, exist_ok=True)
    (user_theme_dir(murmur_home) / "mine.yaml").write_text(USER_THEME)
    app = SupervisorApp(murmur_home, theme=theme)
    async with app.run_test(size=(140, 40)) as pilot:
        rows = await replayed(app, pilot)
        assert app.theme == theme
        surface, foreground = variable(app, "surface"), variable(app, "foreground")

        plain = drawn(rows, plain_row(rows))
        assert backgrounds(plain) == {rgb(surface)}
        assert foregrounds(plain) == {rgb(surface + foreground)}

        assert rows.cursor is not None
        cursor = drawn(rows, rows.cursor)
        assert backgrounds(cursor) == {
            rgb(surface + variable(app, "block-cursor-blurred-background"))}

        # past the last row, the list's background still fills the pane (no black slab)
        below = list(rows.render_line(rows.row_count - rows.scroll_offset.y + 1))
        assert backgrounds(below) == {rgb(surface)}

        transcript = app.supervisor.transcript
        background = variable(app, "background")
        lines = [list(transcript.render_line(y)) for y in range(4)]
        for line in lines:
            assert backgrounds(line) == {rgb(background)}
        assert None not in set().union(*(foregrounds(line) for line in lines))


async def test_focus_moves_the_cursor_colour_and_hover_marks_a_row(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home, theme="murmur-light")
    async with app.run_test(size=(140, 40)) as pilot:
        rows = await replayed(app, pilot)
        assert rows.cursor is not None
        blurred = backgrounds(drawn(rows, rows.cursor))

        rows.focus()
        await wait_until(pilot, lambda: backgrounds(drawn(rows, rows.cursor or 0)) != blurred)
        focused = variable(app, "block-cursor-background")
        if focused.a == 1:
            assert backgrounds(drawn(rows, rows.cursor)) == {rgb(focused)}

        position = plain_row(rows)
        before = backgrounds(drawn(rows, position))
        await pilot.hover(rows, offset=(2, position - rows.scroll_offset.y))
        await wait_until(pilot, lambda: rows.hover == position)
        hovered = backgrounds(drawn(rows, position))
        assert hovered != before and None not in hovered
        await pilot.hover(app.supervisor.transcript)
        await wait_until(pilot, lambda: rows.hover is None)
        assert backgrounds(drawn(rows, position)) == before

        transcript = app.supervisor.transcript
        unfocused = backgrounds(list(transcript.render_line(0)))
        transcript.focus()
        await wait_until(pilot, lambda: backgrounds(list(transcript.render_line(0))) != unfocused)
        assert None not in backgrounds(list(transcript.render_line(0)))


async def test_switching_theme_restyles_the_rows(murmur_home: Path) -> None:
    app = SupervisorApp(murmur_home, theme="murmur-dark")
    async with app.run_test(size=(140, 40)) as pilot:
        rows = await replayed(app, pilot)
        position = plain_row(rows)
        dark = backgrounds(drawn(rows, position))
        dark_text = backgrounds(list(app.supervisor.transcript.render_line(0)))
        assert dark == {rgb(variable(app, "surface"))}

        app.theme = "murmur-light"
        await wait_until(pilot, lambda: rgb(variable(app, "surface")) not in dark)
        light_surface = rgb(variable(app, "surface"))
        await wait_until(pilot, lambda: backgrounds(drawn(rows, position)) == {light_surface})
        assert light_surface not in dark
        light_text = backgrounds(list(app.supervisor.transcript.render_line(0)))
        assert light_text == {rgb(variable(app, "background"))} and light_text != dark_text


def colour_of(transcript: object, starts: str) -> list[tuple[str, tuple[int, int, int] | None]]:
    """The drawn segments (text, foreground) of the first transcript line starting `starts`."""
    from tui.app.widgets.transcript import Transcript

    assert isinstance(transcript, Transcript)
    for y, line in enumerate(transcript._lines):
        if line.plain.startswith(starts):
            transcript.scroll_to(y=y, animate=False, immediate=True, force=True)
            segments = list(transcript.render_line(y - transcript.scroll_offset.y))
            return [(s.text, None if s.style is None or s.style.color is None
                     else tuple(s.style.color.get_truecolor())) for s in segments
                    if s.text.strip()]  # not the padding to the edge
    raise AssertionError(f"no line starts {starts!r}")


@pytest.mark.parametrize("theme", ("murmur-dark", "murmur-light"))
async def test_the_transcript_marks_outcomes_in_the_themes_colours(murmur_home: Path,
                                                                  theme: str) -> None:
    app = SupervisorApp(murmur_home, theme=theme)
    async with app.run_test(size=(140, 40)) as pilot:
        await replayed(app, pilot)
        transcript = app.supervisor.transcript
        success, error = rgb(variable(app, "success")), rgb(variable(app, "error"))
        primary = rgb(variable(app, "primary"))
        ok = colour_of(transcript, "✓ $ echo hello")
        assert ok[0] == ("✓", success)  # the mark in the success colour, the rest dim
        failed = colour_of(transcript, "✗ $ echo oops")
        assert {fg for _, fg in failed} == {error}  # a failure is red all along
        header = colour_of(transcript, "turn 1 ")
        assert header[0][1] == primary and set(header[-1][0]) == {"─"}
        if theme == "murmur-light":  # a switch redraws the kept turns in the new colours
            app.theme = "murmur-dark"
            await wait_until(pilot, lambda: colour_of(transcript, "✓ $ echo hello")[0][1]
                           == rgb(variable(app, "success")))

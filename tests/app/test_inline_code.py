"""Inline code in the transcript is legible in every bundled theme: the theme's secondary
colour on its panel colour — not Rich's cyan on black, a black block on a light screen."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from rich.color import Color

from tests.app.conftest import recorded, replay
from tests.waits import wait_until
from tui.app.app import SupervisorApp
from tui.core.events import vocabulary as ev


def luminance(color: Color) -> float:
    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = color.get_truecolor()
    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(one: Color, other: Color) -> float:
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("theme", ["murmur-dark", "murmur-light", "murmur-high-contrast"])
async def test_inline_code_takes_the_themes_colours(murmur_home: Path, theme: str) -> None:
    events = [dataclasses.replace(event, text="`two` ")
              if isinstance(event, ev.TextDelta) and event.text == "**two** " else event
              for event in recorded()]
    app = SupervisorApp(murmur_home, theme=theme)
    async with app.run_test(size=(100, 30)) as pilot:
        await replay(pilot, events)
        transcript = app.supervisor.transcript

        def drawn() -> list[str]:
            return [line.plain.strip() for line in transcript._lines]

        await wait_until(pilot, lambda: "Running two commands." in drawn())
        line = transcript._lines[drawn().index("Running two commands.")]
        at = line.plain.index("two")
        styles = {str(span.style) for span in line.spans
                  if span.start <= at and span.end >= at + 3}
        variables = app.theme_variables
        colour = Color.parse(variables["secondary"])
        panel = Color.parse(variables["panel"])
        assert any(f"{colour.name} on {panel.name}" in style or
                   f"{colour.get_truecolor().hex} on {panel.get_truecolor().hex}" in style
                   for style in styles), styles
        assert contrast(colour, panel) >= 4.5  # WCAG AA for text
        if theme == "murmur-light":
            assert "black" not in " ".join(styles)

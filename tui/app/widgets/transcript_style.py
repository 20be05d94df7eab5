"""How the transcript's lines look, in the theme's colours: a task's header and heavy rule, a
turn's header and rule, a call running (its arrow in the accent colour), a call that ended
well (its ✓ in the success colour, the rest dim) or badly (the whole line in the error
colour), a question (warning), a note (dim), and code blocks in a code theme that suits a
dark or a light background; inline code in the theme's secondary colour on its panel colour
(Rich's own, cyan on black, was a black block on a light background)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.markdown import Markdown
from rich.style import Style
from rich.text import Text
from rich.theme import Theme

from tui.core.events.wording import LineKind

DIM = Style(dim=True)


@dataclass(frozen=True)
class Palette:
    made_from: tuple[object, ...]
    running: Style
    success: Style
    failure: Style
    question: Style
    title: Style
    rule: Style
    task: Style
    code_theme: str
    code: Style  # inline code


def palette(variables: Mapping[str, str], dark: bool) -> Palette:
    """The styles for a theme's variables (Textual's `theme_variables`)."""
    def colour(name: str, fallback: str) -> str:
        return variables.get(name) or fallback

    primary = colour("primary", "blue")
    return Palette(
        made_from=(dark, *(variables.get(name) for name in
                           ("primary", "accent", "success", "error", "warning",
                            "secondary", "panel", "foreground"))),
        running=Style(color=colour("accent", "cyan")),
        success=Style(color=colour("success", "green")),
        failure=Style(color=colour("error", "red")),
        question=Style(color=colour("warning", "yellow")),
        title=Style(color=primary, bold=True),
        rule=Style(color=primary, dim=True),
        task=Style(bold=True),
        code_theme="monokai" if dark else "default",
        code=Style(color=colour("secondary", colour("foreground", "default")),
                   bgcolor=colour("panel", "default")),
    )


class ThemedMarkdown(Markdown):
    """Markdown whose inline code takes the palette's style (Rich looks `markdown.code` up in
    the console's theme while it builds the lines: the style is in force just for that)."""

    def __init__(self, text: str, colours: Palette) -> None:
        super().__init__(text, code_theme=colours.code_theme,
                         inline_code_theme=colours.code_theme)
        self._styles = Theme({"markdown.code": colours.code})

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        console.push_theme(self._styles)
        try:
            yield from super().__rich_console__(console, options)
        finally:
            console.pop_theme()


def entry_line(kind: LineKind, text: str, colours: Palette) -> Text:
    """One transcript entry (it may hold line breaks: an answer keeps them)."""
    match kind:
        case LineKind.SUCCESS | LineKind.RUNNING if text and text[0] in "✓→✎⇢":
            mark = colours.success if kind is LineKind.SUCCESS else colours.running
            return Text.assemble((text[0], mark), (text[1:], DIM))
        case LineKind.RUNNING | LineKind.SUCCESS | LineKind.NOTE:
            return Text(text, style=DIM)
        case LineKind.FAILURE:
            return Text(text, style=colours.failure)
    return Text(text, style=colours.question)  # LineKind.QUESTION


def turn_header(number: int, width: int, colours: Palette) -> Text:
    """`turn 3 ──────…`: the turn's number and a rule to the edge."""
    label = f"turn {number} "
    return Text.assemble((label, colours.title), ("─" * max(0, width - len(label)), colours.rule))


def task_header(header: str, width: int, colours: Palette) -> Text:
    """`▌ Task 2 · typed ━━━…`: a task's block begins — heavier than a turn's rule."""
    label = f"▌ {header} "
    return Text.assemble((label, colours.title), ("━" * max(0, width - len(label)), colours.rule))

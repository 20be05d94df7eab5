"""How the transcript's lines look, in the theme's colours: a task's header and heavy rule, a
turn's header and rule, a call running (its arrow in the accent colour), a call that ended
well (its ✓ in the success colour, the rest dim) or badly (the whole line in the error
colour), a question (warning), a note (dim), and code blocks in a code theme that suits a
dark or a light background."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text

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


def palette(variables: Mapping[str, str], dark: bool) -> Palette:
    """The styles for a theme's variables (Textual's `theme_variables`)."""
    def colour(name: str, fallback: str) -> str:
        return variables.get(name) or fallback

    primary = colour("primary", "blue")
    return Palette(
        made_from=(dark, *(variables.get(name) for name in
                           ("primary", "accent", "success", "error", "warning"))),
        running=Style(color=colour("accent", "cyan")),
        success=Style(color=colour("success", "green")),
        failure=Style(color=colour("error", "red")),
        question=Style(color=colour("warning", "yellow")),
        title=Style(color=primary, bold=True),
        rule=Style(color=primary, dim=True),
        task=Style(bold=True),
        code_theme="monokai" if dark else "default",
    )


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

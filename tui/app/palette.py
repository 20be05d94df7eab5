"""The supervisor's command palette (`Ctrl+P`): every action of the screen and the themes, in
murmur-tui's own words — Textual's entries that would say something else (its Quit, "as soon
as possible", never asks) are replaced by ours."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Protocol

from textual.app import SystemCommand

QUIT_HELP = "Quit murmur-tui (asks first while a task runs)"


class PaletteHost(Protocol):
    """What the palette's entries call (the supervisor app)."""

    def action_quit(self) -> object: ...

    def cancel_now(self) -> None: ...

    def action_answer(self) -> None: ...

    def action_copy_result(self) -> None: ...

    def action_help(self) -> None: ...

    def action_browse(self) -> None: ...


def commands(host: PaletteHost, textual: Iterable[SystemCommand], jump: Callable[[], None],
             themes: list[str]) -> Iterable[SystemCommand]:
    """`textual`: Textual's own entries, its Quit made ours (the action `q` and `Ctrl+Q`
    run); `jump`: to the latest output; `themes`: the themes offered."""
    for command in textual:
        if command.title == "Quit":
            yield SystemCommand("Quit", QUIT_HELP, host.action_quit)
        else:
            yield command
    yield SystemCommand("Cancel the running turn", "End the session as canceled",
                        host.cancel_now)
    yield SystemCommand("Answer the waiting question", "Reopen the question dialog",
                        host.action_answer)
    yield SystemCommand("Copy the result", "Copy the task's result to the clipboard",
                        host.action_copy_result)
    yield SystemCommand("Jump to latest", "Follow the newest output", jump)
    yield SystemCommand("Help", "Keys and what they do", host.action_help)
    yield SystemCommand("Browse conversations", "Every conversation record, newest first",
                        host.action_browse)
    for name in themes:
        yield SystemCommand(f"Theme: {name}", "Switch to this theme", _theme(host, name))


def _theme(host: PaletteHost, name: str) -> Callable[[], None]:
    return lambda: setattr(host, "theme", name)  # the app's theme (Textual's reactive)

"""The transcript drawn with Textual's line API: the session on top, then each task as a
block — its header (where it came from) and text, each model turn (thinking dimmed, the answer
as Markdown, one line per tool call and question; a running call's line counts its seconds)
and the task's end line. What it holds is `tui.app.models.transcript`; this widget only
draws it.

A long session must not slow the screen down, so the transcript is a single scrolling widget,
not a widget per turn: each turn is rendered once to lines (again only while it streams, or
when the width changes; a streaming answer shows as plain text and becomes Markdown when its
turn is done), the widget keeps the lines of the model's window of recent turns and
draws only the ones on screen; scrolling to the top brings older turns back into the window.
The view follows new output only while the reader is at the bottom.

A widget a screen places: its padding stays in `DEFAULT_CSS`, which the screen can override;
screens keep their styles in `.tcss` files beside them.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Collection
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size
from textual.timer import Timer

from tui.app.models.transcript import (
    LOAD_OLDER,
    MODEL_TURNS,
    WINDOW,
    TaskBlock,
    TaskResultView,
    TranscriptModel,
    TurnModel,
)
from tui.app.models.transcript_text import session_line
from tui.app.widgets.lines_view import LinesView
from tui.app.widgets.scrolling import resize_content
from tui.app.widgets.transcript_style import (
    Palette,
    ThemedMarkdown,
    entry_line,
    palette,
    task_header,
    turn_header,
)
from tui.core.events import vocabulary as ev

__all__ = ["LOAD_OLDER", "MODEL_TURNS", "WINDOW", "Transcript"]

DIM = Style(dim=True)
THINKING = Style(dim=True, italic=True)
REDRAW_SECONDS = 0.1  # batches redraw the transcript at most this often (~10 Hz)


def now_ms() -> int:
    """The wall clock in Unix ms, as events are stamped: a running call's age."""
    return time.time_ns() // 1_000_000


@dataclass
class _Segment:
    """A run of window lines drawn from one source (the session, a task's header or end, a
    turn)."""

    key: object
    count: int


class Transcript(LinesView):
    DEFAULT_CSS = "Transcript { padding: 0 1; }"
    FOCUS_ON_CLICK = False  # a click (a selection) leaves the keys in the prompt
    BINDINGS = [
        Binding("t", "toggle_thinking", "Thinking", show=False),
        Binding("o", "toggle_answers", "Member answers", show=False),
        Binding("up", "scroll_up", show=False),
        Binding("down", "scroll_down", show=False),
        Binding("pageup", "page_up", show=False),
        Binding("pagedown", "page_down", show=False),
        Binding("home", "scroll_home", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.model = TranscriptModel()
        self.show_thinking = True
        self.show_answers = False  # a member's answer whole (`o`), not folded to a few lines
        self._segments: list[_Segment] = []
        # each turn's drawn lines and the (version, width, thinking) they were drawn for
        self._drawn_turns: WeakKeyDictionary[TurnModel, tuple[tuple[object, ...],
                                                              list[Text]]] = \
            WeakKeyDictionary()
        # each block's drawn header and end, and what they were drawn for
        self._drawn_blocks: dict[tuple[int, bool], tuple[tuple[object, ...], list[Text]]] = {}
        self._clocks: tuple[str, ...] = ()  # the running calls' times at the last redraw
        self._top: tuple[tuple[object, ...], list[Text]] | None = None  # the session's line
        self._dirty = False
        self._redrawn_at = 0.0  # monotonic time of the last redraw a batch made
        self._late: Timer | None = None  # the redraw put off to keep to REDRAW_SECONDS
        self._drawn = 0  # lines at the last redraw
        self._follow = True
        self._colours: Palette | None = None  # made from the theme when first drawn

    # -- the model, as tests and the screen read it ------------------------------------------
    @property
    def turns(self) -> deque[TurnModel]:
        return self.model.turns

    @property
    def dropped(self) -> int:
        return self.model.dropped

    @property
    def task_text(self) -> str:
        return self.model.task_text

    @property
    def result(self) -> TaskResultView | None:
        return self.model.result

    @property
    def blocks(self) -> list[TaskBlock]:
        return list(self.model.blocks)

    @property
    def window_turns(self) -> list[TurnModel]:
        return list(self.model.window)

    @property
    def hidden_older(self) -> int:
        return self.model.hidden_older

    @property
    def is_following(self) -> bool:
        """The view sticks to the newest output until the reader scrolls up, and again once
        they come back to the bottom."""
        return self._follow

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        bottom = max(0, self._drawn - self.scrollable_content_region.height)
        if new_value < old_value and new_value < bottom - 1:
            self._follow = False
        elif new_value >= bottom - 1:
            self._follow = True

    def on_mount(self) -> None:
        self.set_interval(REDRAW_SECONDS, self._tick)

    def _tick(self) -> None:
        """A running call's line counts its seconds: redrawn when what it shows changed, at
        the redraw rate at most (and not at all while nothing runs)."""
        if self.model.running and self._clock_labels(now_ms()) != self._clocks:
            self._dirty = True
            self.flush()

    def _clock_labels(self, now: int) -> tuple[str, ...]:
        return tuple(running.text(now) for model in self.model.window
                     for running in model.running.values())

    # -- events -------------------------------------------------------------------------------
    async def apply(self, event: ev.Event) -> None:
        """Take in one event (kept async so callers can treat every pane the same)."""
        self.take(event)

    def take(self, event: ev.Event) -> None:
        if self.model.take(event):
            self._dirty = True

    def waiting(self, calls: Collection[str]) -> None:
        """The calls (id, or tool name) waiting for the person's approval now."""
        if self.model.awaiting(calls, now_ms()):
            self._dirty = True
            self.flush()

    def tail(self, work_id: str, line: str) -> None:
        """Running background work's newest output line, on its call's line."""
        if self.model.tail(work_id, line):
            self._dirty = True
            self.flush()

    def flush(self) -> None:
        """After a batch of events: re-render once what changed, at most every
        REDRAW_SECONDS (a batch sooner than that is drawn with the next, or by a timer)."""
        if not self._dirty:
            return
        wait = REDRAW_SECONDS - (time.monotonic() - self._redrawn_at)
        if wait > 0:
            if self._late is None:
                self._late = self.set_timer(wait, self._flush_late)
            return
        self._dirty = False
        self._redrawn_at = time.monotonic()
        if self._late is not None:
            self._late.stop()
            self._late = None
        self.redraw()

    @property
    def drawn(self) -> bool:
        """Everything taken in is drawn (no redraw waits for its turn)."""
        return not self._dirty and self._late is None

    def _flush_late(self) -> None:
        self._late = None
        self.flush()

    def redraw(self) -> None:
        """Re-render what changed (usually only the turn that streams) and redraw."""
        width = max(10, self.scrollable_content_region.width or self.size.width or 80)
        following = self.is_following
        if width != self._width:
            self._width = width
            self._drawn_turns.clear()
            self._drawn_blocks.clear()
        if following:
            for gone in self.model.trim():  # drawn again if scrolled back to
                self._drawn_turns.pop(gone, None)
        self._rebuild()
        self._drawn = len(self._lines)
        resize_content(self, Size(width, self._drawn))
        if following:
            self.call_after_refresh(self._to_end)
        self.refresh()

    def _to_end(self, tries: int = 20) -> None:
        target = max(0, self._drawn - self.scrollable_content_region.height)
        if target > self.max_scroll_y and tries > 0:
            # the new size is not laid out yet (a busy machine): scrolling now would stop at
            # the old end, and the view would stay there while claiming to follow
            self.call_after_refresh(self._to_end, tries - 1)
            return
        # force: until the scrollbars are laid out Textual ignores a scroll it thinks the
        # overflow does not allow, which left a following view stuck at the top
        # to the true end: the laid-out end may lie a row past the computed one (a row the
        # view's own scrollbar takes), which left the last line, the result, out of sight
        self.scroll_to(y=max(target, self.max_scroll_y), animate=False, immediate=True,
                       force=True)
        self.call_after_refresh(self._sync_scrollbar)

    def _sync_scrollbar(self) -> None:
        """The scrollbar's thumb where the view is: a scrollbar that came into view after
        the scroll kept the thumb at the top."""
        bar = self.vertical_scrollbar
        if self.show_vertical_scrollbar and bar.position != self.scroll_y:
            bar.position = self.scroll_y

    def _rebuild(self) -> None:
        """Lay the window's lines out again, reusing every turn and block whose render is
        current."""
        lines: list[Text] = []
        segments: list[_Segment] = []
        colours = self.colours
        if self.model.session.session_id:
            top = self._top_lines(colours)
            lines += top
            segments.append(_Segment("session", len(top)))
        older = self.model.hidden_older
        if older:
            kept = older - self.dropped
            more = f" ({self.dropped} more are in the conversation record)" \
                if self.dropped else ""
            note = Text(f"▲ {kept} earlier turn{'s' if kept != 1 else ''} — scroll to the top "
                        f"to show them{more}", style=DIM, justify="center")
            lines += [note, Text("")]
            segments.append(_Segment("older", 2))
        now = now_ms()
        clocks: list[str] = []
        shown: set[int] = set()
        for item in self.model.visible():
            if isinstance(item, TurnModel):
                rendered = self._turn_lines(item, now)
                clocks += (running.text(now) for running in item.running.values())
                key: object = item.key
            else:
                ended = item.number in shown
                shown.add(item.number)
                rendered = self._block_lines(item, ended)
                key = (item.number, ended)
                if not ended and lines and lines[-1].plain:  # a block after an end line
                    rendered = [Text(""), *rendered]
            lines += rendered
            segments.append(_Segment(key, len(rendered)))
        self._clocks = tuple(clocks)
        self._lines = lines
        self._segments = segments

    def _top_lines(self, colours: Palette) -> list[Text]:
        """The session's line (drawn again only when it says something else)."""
        text = session_line(self.model)
        state = (text, self._width, colours.made_from)
        if self._top is None or self._top[0] != state:
            self._top = (state, [*self._to_lines(Text(text, style=colours.title)), Text("")])
        return self._top[1]

    def _block_lines(self, block: TaskBlock, ended: bool) -> list[Text]:
        """A task's header and text, or (`ended`) its end line and a failure's reason."""
        colours = self.colours
        state = (block.version, self._width, colours.made_from)
        drawn = self._drawn_blocks.get((block.number, ended))
        if drawn is not None and drawn[0] == state:
            return drawn[1]
        if not ended:
            out = self._to_lines(task_header(block.header, self._width, colours))
            if block.note:
                out += self._to_lines(Text(block.note, style=DIM))
            out += self._to_lines(Text(block.text, style=colours.task))
        elif block.result is not None:
            title, body = block.result
            out = [Text(title, style=(colours.success if not body else colours.failure)
                        + Style(bold=True))]
            if body:
                out += self._to_lines(Text(body))
        else:
            out = []
        if not ended:
            out.append(Text(""))
        if len(self._drawn_blocks) > 4 * WINDOW:  # only blocks near the window are kept
            self._drawn_blocks.clear()
        self._drawn_blocks[(block.number, ended)] = (state, out)
        return out

    @property
    def colours(self) -> Palette:
        """The transcript's styles in the current theme's colours (made again when the theme
        changes)."""
        colours = self._colours
        if colours is None:
            theme = self.app.current_theme
            colours = self._colours = palette(self.app.theme_variables, theme.dark)
        return colours

    def notify_style_update(self) -> None:
        """The theme may have changed: its colours are drawn into the kept turns."""
        super().notify_style_update()
        before = self._colours
        self._colours = None
        if before is not None and self.is_mounted and before.made_from != self.colours.made_from:
            self._drawn_turns.clear()
            self._drawn_blocks.clear()
            self.redraw()

    def _turn_lines(self, model: TurnModel, now: int) -> list[Text]:
        colours = self.colours
        clocks = tuple(running.text(now) for running in model.running.values())
        state = (model.version, self._width, self.show_thinking, self.show_answers,
                 colours.made_from, clocks)
        drawn = self._drawn_turns.get(model)
        if drawn is not None and drawn[0] == state:
            return drawn[1]
        out = [turn_header(model.number, self._width, colours)]
        if model.thinking:
            if self.show_thinking:
                out += self._to_lines(Text(model.thinking, style=THINKING))
            else:
                out.append(Text(f"  (thinking hidden: {len(model.thinking)} characters — "
                                "press t)", style=THINKING))
        if model.text:
            # while the turn streams its answer is plain text, wrapped again as it grows;
            # once the turn is done it is rendered as Markdown, once (a Markdown render parses
            # the whole answer, which every batch of a long answer would pay again)
            out += self._to_lines(ThemedMarkdown(model.text, colours)
                                  if model.done else Text(model.text))
        for kind, text in model.entries(now if clocks else None, not self.show_answers):
            out += self._to_lines(entry_line(kind, text, colours))
        out.append(Text(""))
        self._drawn_turns[model] = (state, out)
        return out

    def on_resize(self) -> None:
        self.redraw()

    def load_older(self) -> int:
        """Bring up to LOAD_OLDER earlier turns back into the window; returns how many."""
        batch = self.model.load_older()
        if not batch:
            return 0
        before = len(self._lines)
        self._rebuild()
        added = len(self._lines) - before
        self._drawn = len(self._lines)
        resize_content(self, Size(self._width, self._drawn))
        self.scroll_to(y=self.scroll_y + max(0, added), animate=False, immediate=True,
                       force=True)
        self.refresh()
        return len(batch)

    def action_toggle_thinking(self) -> None:
        self.show_thinking = not self.show_thinking
        self.redraw()

    def action_toggle_answers(self) -> None:
        self.show_answers = not self.show_answers
        self.redraw()


"""The transcript: the task, each model turn (thinking dimmed, the answer as Markdown, one line
per tool call and question) and the result — drawn with Textual's line API.

A long session must not slow the screen down or grow it without bound, so the transcript is a
single scrolling widget, not a widget per turn: each turn is rendered once to lines (again
only while it streams, or when the width changes), the widget keeps the lines of a window of
recent turns and draws only the ones on screen. Turn data is kept for the last `MODEL_TURNS`
turns; scrolling to the top brings older turns back into the window; the whole session is in
the conversation record and the trace. The view follows new output only while the reader is at
the bottom.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field

from rich.markdown import Markdown
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.geometry import Size

from tui.app.widgets.lines_view import LinesView
from tui.core import events as ev

WINDOW = 40  # turns whose lines are kept while following the output
MODEL_TURNS = 2000  # turns whose text is kept in memory
LOAD_OLDER = 10  # turns brought back per step when scrolling to the top

DIM = Style(dim=True)
THINKING = Style(dim=True, italic=True)
TITLE = Style(bold=True, dim=True)
ERROR = Style(color="red")
ASK = Style(color="yellow")
TASK = Style(bold=True)


@dataclass
class TurnModel:
    key: tuple[str, int]
    number: int
    thinking: str = ""
    text: str = ""
    lines: dict[str, str] = field(default_factory=dict)  # key -> line, in order
    done: bool = False
    version: int = 0  # bumped on every change: the rendered lines are stale
    rendered: tuple[int, int, bool] | None = None  # (version, width, thinking) of `cache`
    cache: list[Text] = field(default_factory=list)

    def touch(self) -> None:
        self.version += 1


@dataclass
class _Segment:
    """A run of window lines drawn from one source (the task, a turn, the result)."""

    key: object
    count: int


def _short(value: object, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _line_style(text: str) -> Style:
    if text.startswith("✗"):
        return ERROR
    if text.startswith("?"):
        return ASK
    return DIM


class Transcript(LinesView):
    DEFAULT_CSS = "Transcript { padding: 0 1; }"
    BINDINGS = [
        Binding("t", "toggle_thinking", "Thinking", show=False),
        Binding("up", "scroll_up", show=False),
        Binding("down", "scroll_down", show=False),
        Binding("pageup", "page_up", show=False),
        Binding("pagedown", "page_down", show=False),
        Binding("home", "scroll_home", show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.turns: deque[TurnModel] = deque(maxlen=MODEL_TURNS)
        self.dropped = 0  # turns no longer in the model (older than MODEL_TURNS)
        self.task_text = ""
        self.result: tuple[str, str] | None = None  # (title, body)
        self.show_thinking = True
        self._segments: list[_Segment] = []
        self._window: deque[TurnModel] = deque()  # the turns whose lines are in `_lines`
        self._dirty = False
        self._drawn = 0  # lines at the last redraw
        self._follow = True

    # -- the model ----------------------------------------------------------------------------
    def _turn(self, task_id: str, turn: int) -> TurnModel:
        key = (task_id, turn)
        if self.turns and self.turns[-1].key == key:
            return self.turns[-1]
        for model in reversed(self.turns):
            if model.key == key:
                return model
        if len(self.turns) == self.turns.maxlen:
            self.dropped += 1
        model = TurnModel(key, turn + 1)
        self.turns.append(model)
        self._window.append(model)
        return model

    @property
    def window_turns(self) -> list[TurnModel]:
        return list(self._window)

    @property
    def hidden_older(self) -> int:
        first = self._window[0] if self._window else None
        older = 0
        for model in self.turns:
            if model is first:
                break
            older += 1
        return older + self.dropped

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

    # -- events -------------------------------------------------------------------------------
    async def apply(self, event: ev.Event) -> None:
        """Take in one event (kept async so callers can treat every pane the same)."""
        self.take(event)

    def take(self, event: ev.Event) -> None:
        match event:
            case ev.TaskStarted():
                self.task_text = event.text.strip() or "(no task text)"
                self._changed(None)
            case ev.TextDelta():
                model = self._turn(event.task_id, event.turn)
                model.text += event.text
                self._changed(model)
            case ev.ThinkingDelta():
                model = self._turn(event.task_id, event.turn)
                model.thinking += event.text
                self._changed(model)
            case ev.TurnStarted():
                self._changed(self._turn(event.task_id, event.turn))
            case ev.InferenceRetry() if event.task_id:
                model = self._turn(event.task_id, event.turn)
                model.text, model.thinking = "", ""  # the next attempt streams it again
                self._line(event.task_id, event.turn, f"retry{event.seq}",
                           f"↻ model call failed ({event.status or 'connection broke'}); "
                           f"retrying in {event.delay_ms / 1000:.1f} s "
                           f"(attempt {event.attempt + 1} of {event.max_attempts})")
            case ev.TurnCompleted() if event.origin is None:
                model = self._turn(event.task_id, event.turn)
                model.done = True
                if event.decision == "error":
                    model.lines[f"err{event.seq}"] = \
                        f"✗ the model call failed: {_short(event.error or '', 300)}"
                self._changed(model)
            case ev.ToolCallStarted():
                self._line(event.task_id, event.turn, _call_key(event.call_id, event.tool_name,
                                                                event.turn),
                           f"→ {event.tool_name} {_short(event.input)}")
            case ev.ToolCallFinished():
                mark = "✓" if event.status == "ok" else "✗"
                self._line(event.task_id, event.turn, _call_key(event.call_id, event.tool_name,
                                                                event.turn),
                           f"{mark} {event.tool_name} {_short(event.input, 60)} · "
                           f"{event.duration_ms} ms · {event.output_bytes} B")
            case ev.ShellExecuted() if event.call_id:
                mark = "✓" if event.exit_code == 0 else "✗"
                cut = " · truncated" if event.truncated else ""
                self._line(event.task_id, event.turn,
                           _call_key(event.call_id, "", event.turn),
                           f"{mark} $ {_short(event.command, 80)} · exit {event.exit_code} · "
                           f"{event.duration_ms} ms{cut}")
            case ev.InputRequested() if event.task_id:
                self._line(event.task_id, self._current_turn(event.task_id),
                           f"ask{event.request_id}",
                           f"? {event.tool_name} asks: {_short(event.prompt, 200)}")
            case ev.InputAnswered() if event.task_id:
                self._line(event.task_id, self._current_turn(event.task_id),
                           f"ans{event.request_id}", f"  you answered: {_short(event.answer)}")
            case ev.Compacted():
                self._line(event.task_id, event.turn, f"compact{event.seq}",
                           f"⇣ context compacted: {event.tokens_before} → "
                           f"{event.tokens_after} tokens")
            case ev.CompactionDeclined():
                self._line(event.task_id, event.turn, f"compact{event.seq}",
                           f"⇣ compaction declined ({event.reason}) at {event.tokens} tokens")
            case ev.TaskReopened():
                self._line(event.task_id, self._current_turn(event.task_id),
                           f"reopen{event.seq}",
                           f"↻ reopened by {event.hook_name}: {_short(event.reason)}")
            case ev.TaskEnded():
                ok = event.exit_status == "ok"
                title = (f"{'✓' if ok else '✗'} task {event.exit_status} · {event.turns} turns "
                         f"· {event.tool_calls} tool calls")
                self.result = (title, "" if ok else event.result)
                for model in self._window:
                    model.done = True
                self._changed(None)

    def _current_turn(self, task_id: str) -> int:
        for model in reversed(self.turns):
            if model.key[0] == task_id:
                return model.key[1]
        return 0

    def _line(self, task_id: str, turn: int, key: str, text: str) -> None:
        model = self._turn(task_id, turn)
        model.lines[key] = text
        self._changed(model)

    # -- lines --------------------------------------------------------------------------------
    def _changed(self, model: TurnModel | None) -> None:
        if model is not None:
            model.touch()
        self._dirty = True

    def flush(self) -> None:
        """After a batch of events: re-render once what changed."""
        if self._dirty:
            self._dirty = False
            self.redraw()

    def redraw(self) -> None:
        """Re-render what changed (usually only the turn that streams) and redraw."""
        width = max(10, self.scrollable_content_region.width or self.size.width or 80)
        following = self.is_following
        if width != self._width:
            self._width = width
            for model in self._window:
                model.rendered = None
        self._trim(following)
        self._rebuild()
        self._drawn = len(self._lines)
        self.virtual_size = Size(width, self._drawn)
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
        self.scroll_to(y=target, animate=False, immediate=True, force=True)

    def _trim(self, following: bool) -> None:
        if not following:
            return
        while len(self._window) > WINDOW and self._window[0].done:
            gone = self._window.popleft()
            gone.rendered, gone.cache = None, []  # rendered again if scrolled back to

    def _rebuild(self) -> None:
        """Lay the window's lines out again, reusing every turn whose render is current."""
        lines: list[Text] = []
        segments: list[_Segment] = []
        older = self.hidden_older
        if older:
            kept = older - self.dropped
            more = f" ({self.dropped} more are in the conversation record)" \
                if self.dropped else ""
            note = Text(f"▲ {kept} earlier turn{'s' if kept != 1 else ''} — scroll to the top "
                        f"to show them{more}", style=DIM, justify="center")
            lines += [note, Text("")]
            segments.append(_Segment("older", 2))
        if self.task_text:
            task = self._to_lines(Text(f"Task: {self.task_text}", style=TASK))
            lines += [*task, Text("")]
            segments.append(_Segment("task", len(task) + 1))
        for model in self._window:
            rendered = self._turn_lines(model)
            lines += rendered
            segments.append(_Segment(model.key, len(rendered)))
        if self.result is not None:
            title, body = self.result
            block = [Text(title, style="bold green" if not body else "bold red")]
            if body:
                block += self._to_lines(Text(body))
            lines += block
            segments.append(_Segment("result", len(block)))
        self._lines = lines
        self._segments = segments

    def _turn_lines(self, model: TurnModel) -> list[Text]:
        state = (model.version, self._width, self.show_thinking)
        if model.rendered == state:
            return model.cache
        out = [Text(f"turn {model.number}", style=TITLE)]
        if model.thinking:
            if self.show_thinking:
                out += self._to_lines(Text(model.thinking, style=THINKING))
            else:
                out.append(Text(f"  (thinking hidden: {len(model.thinking)} characters — "
                                "press t)", style=THINKING))
        if model.text:
            out += self._to_lines(Markdown(model.text))
        for text in model.lines.values():
            out += self._to_lines(Text(text, style=_line_style(text)))
        out.append(Text(""))
        model.cache = out
        model.rendered = state
        return out

    def on_resize(self) -> None:
        self.redraw()

    def load_older(self) -> int:
        """Bring up to LOAD_OLDER earlier turns back into the window; returns how many."""
        first = self._window[0] if self._window else None
        older: list[TurnModel] = []
        for model in self.turns:
            if model is first:
                break
            older.append(model)
        batch = older[-LOAD_OLDER:]
        if not batch:
            return 0
        before = len(self._lines)
        self._window.extendleft(reversed(batch))
        self._rebuild()
        added = len(self._lines) - before
        self._drawn = len(self._lines)
        self.virtual_size = Size(self._width, self._drawn)
        self.scroll_to(y=self.scroll_y + max(0, added), animate=False, immediate=True,
                       force=True)
        self.refresh()
        return len(batch)

    def action_toggle_thinking(self) -> None:
        self.show_thinking = not self.show_thinking
        self.redraw()


def _call_key(call_id: str | None, tool: str, turn: int) -> str:
    return f"call:{call_id or tool}:{turn}"

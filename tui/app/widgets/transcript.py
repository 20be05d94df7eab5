"""The transcript: the task, each model turn (thinking dimmed and collapsible, the answer
streaming as Markdown, one line per tool call and question), and the result.

It stays light on a session of thousands of turns: turn data is kept in a bounded model
(`MODEL_TURNS`), at most `WINDOW` turns are mounted as widgets, older ones come back when the
reader scrolls to the top, and the view follows new output only while the reader is at the
bottom (the screen shows a "jump to latest" control otherwise). The whole session stays in the
conversation record and the trace.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field

from textual.containers import Vertical, VerticalScroll
from textual.widgets import Collapsible, Markdown, Static
from textual.widgets._markdown import MarkdownStream

from tui.core import events as ev

WINDOW = 30  # turns mounted while following the output
MODEL_TURNS = 2000  # turns whose text is kept in memory
LOAD_OLDER = 10  # turns mounted per step when scrolling back


@dataclass
class TurnModel:
    key: tuple[str, int]
    number: int
    thinking: str = ""
    text: str = ""
    lines: dict[str, str] = field(default_factory=dict)  # key -> line, in order


class TurnView(Vertical):
    DEFAULT_CSS = """
    TurnView { height: auto; margin: 0 0 1 0; }
    TurnView .turn-title { color: $text-muted; text-style: bold; }
    TurnView .thinking { color: $text-muted; text-style: italic; }
    TurnView Collapsible { border: none; padding: 0; background: transparent; }
    TurnView Markdown { margin: 0; padding: 0; background: transparent; }
    TurnView .line { color: $text-muted; }
    TurnView .line-error { color: $error; }
    TurnView .line-ask { color: $warning; }
    """

    def __init__(self, model: TurnModel) -> None:
        super().__init__()
        self.model = model
        self._thinking: Static | None = None
        self._collapsible: Collapsible | None = None
        self._markdown = Markdown(model.text)
        self._stream: MarkdownStream | None = None
        self._lines: dict[str, Static] = {}

    def compose(self):  # type: ignore[no-untyped-def]
        yield Static(f"turn {self.model.number}", classes="turn-title")
        if self.model.thinking:
            yield self._make_thinking()
        yield self._markdown
        for key, text in self.model.lines.items():
            yield self._make_line(key, text)

    def _make_thinking(self) -> Collapsible:
        self._thinking = Static(self.model.thinking, classes="thinking")
        self._collapsible = Collapsible(self._thinking, title="thinking", collapsed=False)
        return self._collapsible

    def _make_line(self, key: str, text: str) -> Static:
        line = Static(text, classes=_line_class(text), markup=False)
        self._lines[key] = line
        return line

    def add_thinking(self, text: str) -> None:
        if self._thinking is None:
            self.mount(self._make_thinking(), before=self._markdown)
        else:
            self._thinking.update(self.model.thinking)

    async def add_text(self, text: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self._markdown)
        await self._stream.write(text)

    def set_line(self, key: str, text: str) -> None:
        line = self._lines.get(key)
        if line is None:
            self.mount(self._make_line(key, text))
        else:
            line.update(text)
            line.set_classes(_line_class(text))

    async def finish(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None


def _line_class(text: str) -> str:
    if text.startswith("✗"):
        return "line line-error"
    if text.startswith("?"):
        return "line line-ask"
    return "line"


def _short(value: object, limit: int = 100) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class Transcript(VerticalScroll):
    DEFAULT_CSS = """
    Transcript { padding: 0 1; }
    Transcript .task { border-left: thick $primary; padding: 0 1; margin: 0 0 1 0; }
    Transcript .older { color: $text-muted; text-align: center; }
    Transcript .result { border: round $success; padding: 0 1; }
    Transcript .result-failed { border: round $error; padding: 0 1; }
    """

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's name
        super().__init__(id=id)
        self.turns: deque[TurnModel] = deque(maxlen=MODEL_TURNS)
        self.views: dict[tuple[str, int], TurnView] = {}
        self.dropped = 0  # turns no longer in the model (older than MODEL_TURNS)
        self._older = Static("", classes="older")
        self._task_line = Static("", classes="task", markup=False)

    def compose(self):  # type: ignore[no-untyped-def]
        self._older.display = False
        yield self._older
        yield self._task_line

    def on_mount(self) -> None:
        self.anchor()

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
        return model

    async def _view(self, model: TurnModel) -> TurnView:
        """The turn's widget, mounted (and composed) before anything streams into it."""
        view = self.views.get(model.key)
        if view is None:
            view = TurnView(model)
            self.views[model.key] = view
            await self.mount(view)
            self._trim()
        return view

    def _trim(self) -> None:
        """Keep at most WINDOW turns mounted while the reader follows the output."""
        if not self.is_following:
            return
        while len(self.views) > WINDOW:
            key = next(iter(self.views))
            self.views.pop(key).remove()
        self._update_older()

    @property
    def is_following(self) -> bool:
        return self.scroll_y >= self.max_scroll_y - 1

    @property
    def hidden_older(self) -> int:
        mounted = set(self.views)
        return sum(1 for model in self.turns if model.key not in mounted) + self.dropped

    def _update_older(self) -> None:
        hidden = self.hidden_older
        self._older.display = hidden > 0
        if hidden:
            kept = hidden - self.dropped
            more = f" ({self.dropped} more are in the conversation record)" \
                if self.dropped else ""
            self._older.update(f"▲ {kept} earlier turn{'s' if kept != 1 else ''} — scroll to "
                               f"the top to show them{more}")

    def load_older(self) -> int:
        """Mount up to LOAD_OLDER turns above the mounted ones; returns how many."""
        mounted = set(self.views)
        older = [m for m in self.turns if m.key not in mounted]
        batch = older[-LOAD_OLDER:]
        if not batch:
            return 0
        first = next(iter(self.views.values()), None)
        new_views = {model.key: TurnView(model) for model in batch}
        if first is not None:
            self.mount_all(list(new_views.values()), before=first)
        else:
            self.mount_all(list(new_views.values()))
        self.views = {**new_views, **self.views}
        self._update_older()
        return len(batch)

    # -- events -------------------------------------------------------------------------------
    async def apply(self, event: ev.Event) -> None:
        match event:
            case ev.TaskStarted():
                self._task_line.update(f"Task: {event.text.strip() or '(no task text)'}")
            case ev.TextDelta():
                model = self._turn(event.task_id, event.turn)
                model.text += event.text
                view = await self._view(model)
                await view.add_text(event.text)
            case ev.ThinkingDelta():
                model = self._turn(event.task_id, event.turn)
                model.thinking += event.text
                (await self._view(model)).add_thinking(event.text)
            case ev.TurnStarted():
                await self._view(self._turn(event.task_id, event.turn))
            case ev.TurnCompleted() if event.origin is None:
                finished = self.views.get((event.task_id, event.turn))
                if finished is not None:
                    await finished.finish()
                if event.decision == "error":
                    await self._line(event.task_id, event.turn, f"err{event.seq}",
                               f"✗ the model call failed: {_short(event.error or '', 300)}")
            case ev.ToolCallStarted():
                await self._line(event.task_id, event.turn, _call_key(event),
                                 f"→ {event.tool_name} {_short(event.input)}")
            case ev.ToolCallFinished():
                mark = "✓" if event.status == "ok" else "✗"
                await self._line(event.task_id, event.turn, _call_key(event),
                                 f"{mark} {event.tool_name} {_short(event.input, 60)} · "
                           f"{event.duration_ms} ms · {event.output_bytes} B")
            case ev.InputRequested() if event.task_id:
                await self._line(event.task_id, self._current_turn(event.task_id),
                                 f"ask{event.request_id}", f"? {event.tool_name} asks: "
                           f"{_short(event.prompt, 200)}")
            case ev.InputAnswered() if event.task_id:
                await self._line(event.task_id, self._current_turn(event.task_id),
                                 f"ans{event.request_id}",
                                 f"  you answered: {_short(event.answer)}")
            case ev.TaskReopened():
                await self._line(event.task_id, self._current_turn(event.task_id),
                                 f"reopen{event.seq}", f"↻ reopened by {event.hook_name}: "
                           f"{_short(event.reason)}")
            case ev.TaskEnded():
                await self._result(event)

    def _current_turn(self, task_id: str) -> int:
        for model in reversed(self.turns):
            if model.key[0] == task_id:
                return model.key[1]
        return 0

    async def _line(self, task_id: str, turn: int, key: str, text: str) -> None:
        model = self._turn(task_id, turn)
        model.lines[key] = text
        (await self._view(model)).set_line(key, text)

    async def _result(self, event: ev.TaskEnded) -> None:
        for view in self.views.values():
            await view.finish()
        ok = event.exit_status == "ok"
        title = f"{'✓' if ok else '✗'} task {event.exit_status} · {event.turns} turns · " \
                f"{event.tool_calls} tool calls"
        body = title if ok else f"{title}\n{event.result}"
        result = Static(body, classes="result" if ok else "result-failed", markup=False)
        await self.mount(result)


def _call_key(event: ev.ToolCallStarted | ev.ToolCallFinished) -> str:
    return f"call:{event.call_id or event.tool_name}:{event.turn}"

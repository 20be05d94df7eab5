"""The supervisor screen: header, transcript, the queue of prompts, the tool call / shell /
hook-fault / background / tools panes, the prompt and the status bar.

Side by side from `NARROW_BELOW` columns up; narrower, the transcript and the panes take the
whole width one at a time (`p` switches), re-laid out live as the terminal is resized."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Button, Static, TabbedContent, TabPane, TextArea

from tui.app.models.queue import QueuedTask, TaskQueue
from tui.app.models.status import SessionState
from tui.app.screens.heading import Heading
from tui.app.transcript_export import TranscriptCommands, export_transcript
from tui.app.widgets.background_pane import BackgroundPane
from tui.app.widgets.fitted_footer import FittedFooter
from tui.app.widgets.hook_faults import HookFaultsPane
from tui.app.widgets.prompt import PromptArea
from tui.app.widgets.shell_pane import ShellPane
from tui.app.widgets.task_queue import QueueView
from tui.app.widgets.tool_calls import ToolCallsPane
from tui.app.widgets.tools_pane import ToolsPane
from tui.app.widgets.transcript import Transcript
from tui.core.events import vocabulary as ev


class Prompts(Protocol):
    """The prompt queue, as the screen's prompt and queue view use it (tui/app/prompt_queue.py)."""

    @property
    def queue(self) -> TaskQueue: ...

    def enter(self, text: str) -> None: ...

    def take(self, index: int, typing: str) -> QueuedTask | None: ...

    def remove(self, index: int) -> bool: ...

    def move(self, index: int, by: int) -> None: ...


NARROW_BELOW = 100  # columns: below this the transcript and the panes take turns


class SupervisorScreen(Screen[None]):
    CSS_PATH = "supervisor.tcss"
    AUTO_FOCUS = "#prompt"  # the prompt has the keys (docs/screen.md, "Keys and the prompt")
    BINDINGS = [
        Binding("1", "show_pane('tab-tools')", "Tools", show=False),
        Binding("2", "show_pane('tab-shell')", "Shell", show=False),
        Binding("3", "show_pane('tab-faults')", "Faults", show=False),
        Binding("4", "show_pane('tab-background')", "Background", show=False),
        Binding("5", "show_pane('tab-contracts')", "Tools", show=False),
        Binding("p", "switch_view", "Panes / transcript"),
        Binding("end", "jump", "Latest"),
        Binding("i", "focus_prompt", "Prompt"),
        Binding("f2", "focus_queue", "Queue", key_display="F2"),
        Binding("ctrl+c", "copy_text", "Copy selection", show=False),
        Binding("e", "export_transcript", "Export transcript", show=False),
        Binding("g", "jump_to_callee", "Go to callee", show=False),
    ]
    COMMANDS = {TranscriptCommands}

    class Shown(Message):
        """The screen is the one showing again (the browser or a dialog closed)."""

    def __init__(self, state: SessionState, prompts: Prompts) -> None:
        super().__init__()
        self.state = state
        self.prompts = prompts
        self.queue = prompts.queue
        self.queue_view = QueueView(id="queue")
        self.prompt = PromptArea(id="prompt")
        self.header = Static("murmur-tui", id="session-header", markup=False)
        self.heading = Heading(self, self.header)  # what the header names, fitted
        self.transcript = Transcript(id="transcript")
        self.tools = ToolCallsPane()
        self.shell = ShellPane()
        self.faults = HookFaultsPane()
        self.work_pane = BackgroundPane()
        self.tool_list = ToolsPane()
        self.status = Static("", id="status-bar", markup=False)
        self._status_line = ""
        self.jump = Button("↓ new output below — jump to latest (End)", id="jump")
        self.narrow = False
        self.showing_panes = False  # in the narrow layout: the panes, not the transcript

    def compose(self) -> ComposeResult:
        yield self.header
        with Horizontal(id="body"):
            with Vertical(id="left"):
                yield self.transcript
                yield self.jump
                yield self.queue_view
            with TabbedContent(id="panes", initial="tab-tools"):
                with TabPane("Calls", id="tab-tools"):
                    yield self.tools
                with TabPane("Shell", id="tab-shell"):
                    yield self.shell
                with TabPane("Hook faults", id="tab-faults"):
                    yield self.faults
                with TabPane("Background", id="tab-background"):
                    yield self.work_pane
                with TabPane("Tools", id="tab-contracts"):
                    yield self.tool_list
        yield self.prompt
        yield self.status
        yield FittedFooter()

    def on_mount(self) -> None:
        self._lay_out(self.app.size.width)
        # `launch --serve` puts the door's address in the app's subtitle: the header shows it
        self.watch(self.app, "sub_title", lambda _: self.fit_header(), init=True)
        self.set_interval(1.0, self._tick)
        self.refresh_status()
        self.show_queue()
        self.prompt.border_title = "Prompt · Enter sends · Shift+Enter / Ctrl+J new line · " \
            "↑ earlier prompts"

    def show_queue(self, highlight: int | None = None) -> None:
        """Draw the queue of prompts again (it changed)."""
        self.queue_view.show(self.queue, highlight)

    def on_resize(self, event: events.Resize) -> None:
        self._lay_out(event.size.width)
        self.call_after_refresh(self.refresh_status)  # the bar's width is known after layout
        self.call_after_refresh(self.fit_header)

    def fit_header(self) -> None:
        self.heading.fit()

    def _lay_out(self, width: int) -> None:
        """Side by side, or (narrower than NARROW_BELOW columns) one column at a time."""
        narrow = width < NARROW_BELOW
        if narrow != self.narrow:
            self.narrow = narrow
            self.set_class(narrow, "narrow")
            self.refresh_bindings()
        self.set_class(narrow and self.showing_panes, "showing-panes")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """`p` is offered only where it does something: in the narrow layout."""
        if action == "switch_view":
            return self.narrow
        return True

    def action_switch_view(self) -> None:
        """In the narrow layout: from the transcript to the panes and back."""
        self._show_view(not self.showing_panes)

    def _show_view(self, panes: bool) -> None:
        self.showing_panes = panes
        self._lay_out(self.size.width or self.app.size.width)
        if not self.narrow:
            return
        if panes:
            self.call_after_refresh(self._focus_pane)
        else:
            self.transcript.focus()

    def _focus_pane(self) -> None:
        tabs = self.query_one(TabbedContent)
        focus = {"tab-tools": self.tools.rows, "tab-shell": self.shell,
                 "tab-faults": self.faults.rows,
                 "tab-background": self.work_pane.rows,
                 "tab-contracts": self.tool_list.rows}.get(tabs.active)
        if focus is not None:
            focus.focus()

    def on_screen_resume(self) -> None:
        self.post_message(self.Shown())
        self.call_after_refresh(self._after_dialog)

    def _after_dialog(self) -> None:
        """A question dialog hidden (Esc) over an empty prompt: the keys leave the prompt,
        so that `a` brings the question back at once (typing still goes to the prompt)."""
        if self.state.questions and self.prompt.has_focus and not self.prompt.text:
            self.transcript.focus()

    def _tick(self) -> None:
        self.heading.tick()  # a rename elsewhere shows here
        self.refresh_status()
        self._update_jump()
        self._maybe_load_older()

    # -- events -------------------------------------------------------------------------------
    async def apply(self, events: list[ev.Event]) -> None:
        """A batch from the bridge, in order."""
        for event in events:
            self.state.apply(event)
            await self.transcript.apply(event)
            match event:
                case ev.SessionStarted():
                    self.heading.started(event)
                    if event.trace_path:  # a session here: its tools' contracts
                        contracts = Path(event.trace_path).parent / "tools" / "contracts.json"
                        self.tools.read_contracts(contracts)
                        self.tool_list.read_contracts(contracts)
                    self.work_pane.session(event)
                case ev.SessionEnded() if self.app.sub_title:
                    self.heading.door_closed = True
                    self.fit_header()
                case ev.ShellDetached():
                    self.work_pane.detached(event)
                    self.tools.moved(event)
                    self._label_background()
                case ev.ShellCompleted():
                    self.work_pane.completed(event)
                    self._label_background()
                case ev.ShellAbandoned():
                    self.work_pane.abandoned(event)
                    self._label_background()
                case ev.ShellLost():
                    self.work_pane.lost(event)
                    self._label_background()
                case ev.ToolCallStarted():
                    self.tools.started(event)
                    self.shell.started(event)
                case ev.ShellOutput():
                    self.shell.output(event)
                    self.tools.live(event.call_id, event.text)
                case ev.ToolProgress():
                    self.tools.live(event.call_id, event.text)
                case ev.ToolCallFinished():
                    self.tools.finished(event)
                case ev.CallDenied():
                    self.tools.denied(event)
                case ev.ShellExecuted():
                    self.shell.executed(event)
                    self.tools.shell_exited(event)
                case ev.HookFault():
                    self.faults.fault(event)
                    self.query_one(TabbedContent).get_tab("tab-faults").label = \
                        f"Hook faults ({self.faults.count})"
                case ev.Warning():
                    self.notify(event.text, title=event.code, severity="warning", timeout=8)
                case ev.Progress() if not event.task_id:  # a task's own (waiting on a
                    self.notify(event.text, timeout=5)  # member) is its status line's
        self.after_batch()

    def on_background_pane_newest(self, message: BackgroundPane.Newest) -> None:
        self.transcript.tail(message.work_id, message.line)


    def _label_background(self) -> None:
        running = self.work_pane.running
        self.query_one(TabbedContent).get_tab("tab-background").label = \
            f"Background ({running} running)" if running else "Background"

    def after_batch(self) -> None:
        self.transcript.flush()
        self.tools.flush()
        self.faults.flush()
        self.work_pane.flush()
        self.refresh_status()
        self._maybe_load_older()
        self.call_after_refresh(self._update_jump)

    def _maybe_load_older(self) -> None:
        """The reader scrolled up to the top: bring earlier turns back."""
        transcript = self.transcript
        if not transcript.is_following and transcript.scroll_y <= 0 and \
                transcript.hidden_older > transcript.dropped:
            transcript.load_older()

    def _update_jump(self) -> None:
        """"Jump to latest" shows while the reader is away from the newest output."""
        self.jump.display = not self.transcript.is_following

    def refresh_status(self) -> None:
        state = self.state
        waiting = {call for call, _ in state.approvals}
        self.tools.waiting(waiting)
        self.transcript.waiting(waiting)
        line = state.line(self.status.size.width or None)  # its width inside its padding
        if line != self._status_line:  # unchanged: no new layout of the bar
            self._status_line = line
            self.status.update(line, layout=False)  # one row, the width of the screen
        status = state.kind
        cls = status
        if status == "finished":
            cls = "finished-ok" if state.exit_status == "ok" else "finished-bad"
        if set(self.status.classes) != {cls}:
            self.status.set_classes(cls)

    # -- actions ------------------------------------------------------------------------------
    def keys_to_prompt(self, event: events.Key) -> None:
        """Out of the prompt, a printable key with no action here starts the prompt with it:
        typing is never lost for want of `i`. A key with an action (`q`, `a` while a question
        waits, `x` in Background…) does that instead. Called by the app as the key arrives,
        before it goes to the focused widget: the focus moves at once, so the keys typed
        after it go to the prompt too, in order."""
        if event.is_printable and event.character is not None and \
                not isinstance(self.focused, TextArea) and \
                event.key not in self.active_bindings:
            self.set_focus(self.prompt)

    def on_prompt_area_left(self, _: PromptArea.Left) -> None:
        self.transcript.focus()

    def on_prompt_area_sent(self, message: PromptArea.Sent) -> None:
        self.prompts.enter(message.text)

    def on_queue_view_edit(self, message: QueueView.Edit) -> None:
        item = self.prompts.take(message.index, self.prompt.text)
        if item is not None:
            self.prompt.take_back(item.text)

    def on_queue_view_remove(self, message: QueueView.Remove) -> None:
        if self.prompts.remove(message.index) and not self.queue:
            self.prompt.focus()

    def on_queue_view_move(self, message: QueueView.Move) -> None:
        self.prompts.move(message.index, message.by)

    def action_focus_prompt(self) -> None:
        self.set_focus(self.prompt)  # at once: the keys that follow are the prompt's

    def action_focus_queue(self) -> None:
        if self.queue.items:
            self.queue_view.focus()
        else:
            self.notify("No prompt is waiting in the queue.", timeout=3)

    def action_show_pane(self, pane: str) -> None:
        """`1`–`5`: the pane comes forward and its list takes the keys (`x` in Background,
        the arrows in Calls), in the narrow layout too."""
        tabs = self.query_one(TabbedContent)
        focused = self.app.focused
        tabs.active = pane
        if focused is not None and tabs in focused.ancestors:
            # at once: left in the pane now hidden, the focus would be handed on, and a tab
            # taking it back comes forward
            self._focus_pane()
        elif self.narrow and not self.showing_panes:
            self._show_view(True)  # focuses the pane once it shows
        else:
            self.call_after_refresh(self._focus_pane)

    def action_jump(self) -> None:
        if self.narrow and self.showing_panes:
            self._show_view(False)
        self.transcript.scroll_end(animate=False, immediate=True)
        self.transcript.redraw()
        self.jump.display = False
        self.transcript.focus()

    async def on_click(self, event: events.Click) -> None:
        """Clicking the status bar while a question waits brings the dialog back."""
        if event.widget is self.status and self.state.questions:
            await self.app.run_action("answer")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "jump":
            self.action_jump()

    def action_jump_to_callee(self) -> None:
        from tui.app.callee_jump import jump_to_callee

        jump_to_callee(self.app, self.state)  # type: ignore[arg-type]  # an AppBase's screen

    def action_export_transcript(self) -> None:
        export_transcript(self, self.transcript.model)

    def action_copy_text(self) -> None:
        selection = self.get_selected_text()
        if not selection:
            self.notify("Select text with the mouse first; nothing was copied.", timeout=4)
            return
        self.app.copy_to_clipboard(selection)
        self.notify(f"Copied {len(selection)} characters.", timeout=3)

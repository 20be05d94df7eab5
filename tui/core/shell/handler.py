"""The shell tool as the session's tool table sees it: one handler per allowed binary."""

from __future__ import annotations

import time

from tui.core.cancel import CancelToken
from tui.core.errors import ShellRefused
from tui.core.events.kinds import ToolStatus
from tui.core.shell.tool import INPUT_SCHEMA, ShellTool, tool_description
from tui.core.tools.table import (
    SILENT,
    CallProgress,
    ToolCall,
    ToolOutcome,
    ToolSpec,
    ms_since,
    refusal,
)


class ShellHandler:
    def __init__(self, binary: str, shell: ShellTool) -> None:
        self.spec = ToolSpec(binary, tool_description(binary), dict(INPUT_SCHEMA), "shell")
        self._shell = shell
        self.background = shell.background  # the session's demoted commands (None: none)

    def call(self, call: ToolCall, cancel: CancelToken,
             progress: CallProgress = SILENT) -> ToolOutcome:
        started = time.perf_counter()
        try:
            result = self._shell.run(self.spec.name, call.data, cancel,
                                     None if progress is SILENT else progress.output,
                                     (call.task_id, call.turn, call.call_id))
        except ShellRefused as exc:
            return refusal(f"error: {exc}", "shell", ms_since(started))
        if result.work_id is not None:  # demoted: its shell_detached line stands for `shell`
            return ToolOutcome(status="passed", text=result.text, fenced=True, kind="shell",
                               duration_ms=result.duration_ms,
                               metadata=(("work_id", result.work_id),
                                         ("output_path", result.full_output_path or "")))
        metadata: tuple[tuple[str, str], ...] = ()
        if result.full_output_path:
            metadata = (("full_output_path", result.full_output_path),)
        # A non-zero exit is data; a command killed at its deadline or on cancel failed.
        status: ToolStatus = "passed" if result.stopped is None else "failed"
        return ToolOutcome(status=status, text=result.text, fenced=True, kind="shell",
                           duration_ms=result.duration_ms, metadata=metadata, shell=result)

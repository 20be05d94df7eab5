"""A Murmur `artifact` frame as the events a local session emits for the call, in its order:
`ToolCallStarted`, then `ShellExecuted` for a command, then `ToolCallFinished`.

Murmur's frames never carry a call's input: it comes from the trace's `tool_call` line when
the session's trace is on this machine, else the call says it was not sent
(`input_known=False`). The call's start is the line's time less its duration; a command's
line (`shell`) gives its binary, command and sizes, else they are read from the artifact's
fenced content (`$ command`, `Stdout:`, `Stderr:`).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from tui.core.events import vocabulary as ev
from tui.core.events.kinds import ToolKind
from tui.core.remote import from_trace

Held = Callable[..., "dict[str, Any] | None"]  # take(kind, **match): a trace line, or None
_COMMAND = re.compile(r"^\$ (.*)$", re.MULTILINE)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def call_events(task_id: str, turn: int, artifact: dict[str, Any], held: Held
                ) -> list[tuple[ev.Event, int | None]]:
    """The call's events with the session's time for each (None: not known here)."""
    name = str(artifact["tool_name"])
    given, named = artifact.get("content"), artifact.get("tool_call_id")
    content = given if isinstance(given, str) else ""
    call = named if isinstance(named, str) else None
    exit_code = _int(artifact.get("exit_code"))
    duration = _int(artifact.get("duration_ms")) or 0
    truncated = artifact.get("truncated") is True
    line = held("tool_call", tool_call_id=call) if call is not None else None
    tool_input, input_bytes, known = from_trace.call_input(line)
    command = _COMMAND.search(content)
    shell_line = None
    if exit_code is not None or (command and artifact.get("fence_source")):
        shell_line = (held("shell", task_id=task_id, command=command.group(1))
                      if command else None) or held("shell", task_id=task_id, turn=turn)
    kind: ToolKind = "shell" if exit_code is not None or shell_line is not None else \
        "wasm" if isinstance(artifact.get("fence_source"), str) else \
        "skill" if call is None else "unknown"
    finished_at = from_trace.at(line)
    out: list[tuple[ev.Event, int | None]] = [(ev.ToolCallStarted(
        task_id=task_id, turn=turn, call_id=call, tool_name=name, kind=kind,
        input=tool_input, input_known=known),
        finished_at - duration if finished_at is not None else None)]
    if kind == "shell":
        out.append(_shell(task_id, turn, call, name, content, exit_code, duration, truncated,
                          shell_line))
    out.append((ev.ToolCallFinished(
        task_id=task_id, turn=turn, call_id=call, tool_name=name, kind=kind,
        status="error" if artifact.get("is_error") is True else "ok", duration_ms=duration,
        input=tool_input, input_bytes=input_bytes, output=content,
        output_bytes=len(content.encode()), truncated=truncated, input_known=known),
        finished_at))
    return out


def _shell(task_id: str, turn: int, call: str | None, name: str, content: str,
           exit_code: int | None, duration: int, truncated: bool,
           line: dict[str, Any] | None) -> tuple[ev.Event, int | None]:
    stdout, stderr = sections(content)
    command = _COMMAND.search(content)
    if line is not None:
        return ev.ShellExecuted(
            task_id=task_id, turn=turn, call_id=call, binary=str(line.get("binary") or name),
            command=str(line.get("command") or ""),
            exit_code=_int(line.get("exit_code")) or (exit_code or 0), stdout=stdout,
            stderr=stderr, stdout_bytes=_int(line.get("stdout_bytes")) or 0,
            stderr_bytes=_int(line.get("stderr_bytes")) or 0,
            duration_ms=_int(line.get("duration_ms")) or duration,
            truncated=truncated), from_trace.at(line)
    return ev.ShellExecuted(
        task_id=task_id, turn=turn, call_id=call, binary=name,
        command=command.group(1) if command else "", exit_code=exit_code or 0, stdout=stdout,
        stderr=stderr, stdout_bytes=len(stdout.encode()), stderr_bytes=len(stderr.encode()),
        duration_ms=duration, truncated=truncated), None


def sections(content: str) -> tuple[str, str]:
    """A shell result's stdout and stderr, as Murmur writes them inside the fence
    (`Stdout:\\n…\\n\\nStderr:\\n…`); the whole content as stdout when it is shaped otherwise."""
    out_at, err_at = content.find("Stdout:\n"), content.find("\nStderr:\n")
    if out_at < 0 or err_at < out_at:
        return content, ""
    stdout = content[out_at + len("Stdout:\n"):err_at].removesuffix("\n")
    stderr = content[err_at + len("\nStderr:\n"):]
    stderr = stderr.removesuffix("</untrusted-content>").removesuffix("\n").removesuffix("\n")
    return stdout, stderr

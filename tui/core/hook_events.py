"""The records each lifecycle handler receives (`murmur:hook/lifecycle@0.8.0`)."""

from __future__ import annotations

from typing import Any

from wasmtime.component import Record

from tui.core.wasm.values import record


def stage_event(shell_allow: tuple[str, ...]) -> Record:
    return record(shell_allow=list(shell_allow))


def session_context(name: str, version: str, session_id: str, model: str,
                    capabilities: tuple[str, ...]) -> Record:
    return record(capsule_name=name, capsule_version=version, session_id=session_id,
                  model=model, capabilities=list(capabilities))


def task_start_event(task_id: str, context_id: str, source: str, input_bytes: int,
                     budget_tokens: int, context_window: int, prior_tokens: int) -> Record:
    return record(task_id=task_id, context_id=context_id, source=source,
                  input_bytes=input_bytes, budget_tokens=budget_tokens,
                  context_window=context_window, prior_tokens=prior_tokens)


def inference_event(turn: int, input_tokens: int, output_tokens: int, decision: str,
                    tool_name: str | None, prompt: str | None, output: str | None,
                    tools: str | None) -> Record:
    return record(turn=turn, input_tokens=input_tokens, output_tokens=output_tokens,
                  decision=decision, tool_name=tool_name, prompt=prompt, output=output,
                  tools=tools)


def tool_event(turn: int, tool_name: str, input_bytes: int, output_bytes: int,
               duration_ms: int, status: str) -> Record:
    return record(turn=turn, tool_name=tool_name, input_bytes=input_bytes,
                  output_bytes=output_bytes, duration_ms=duration_ms, status=status)


def shell_event(turn: int, binary: str, command: str, exit_code: int, stdout: str,
                stderr: str, stdout_bytes: int, stderr_bytes: int, duration_ms: int) -> Record:
    return record(turn=turn, binary=binary, command=command, exit_code=exit_code,
                  stdout=stdout, stderr=stderr, stdout_bytes=stdout_bytes,
                  stderr_bytes=stderr_bytes, duration_ms=duration_ms)


def task_end_event(task_id: str, exit_status: str) -> Record:
    return record(task_id=task_id, exit_status=exit_status)


def session_end_event(**totals: Any) -> Record:
    return record(**totals)

"""The session's hook points (seed 001's table): when each handler fires, the record it
receives (`murmur:hook/lifecycle@0.8.0`) and what a committed arm does. Nothing is built for a
handler no hook is bound to."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.core.artifacts.resolve import resolve_wasm
from tui.core.chat import compact_json
from tui.core.errors import ComponentLoadError, IncompatibleComponent, LaunchError
from tui.core.events import vocabulary as ev
from tui.core.events.kinds import TaskSource
from tui.core.fs.private_files import append_private, write_private
from tui.core.fs.workdir import SessionPaths
from tui.core.loop.report import Report
from tui.core.loop.state import Reopen
from tui.core.manifest.model import Capsule
from tui.core.text.secrets import redact
from tui.core.text.segments import segment_problem
from tui.core.wasm.values import record

if TYPE_CHECKING:  # the hook runner (and wasmtime) load only for a capsule with hooks
    from wasmtime.component import Record

    from tui.core.tools.table import ShellResult
    from tui.core.wasm.calls import HostServices
    from tui.core.wasm.hooks import Fault, Hook, HookRunner
    from tui.core.wasm.runtime import WasmRuntime

KEEP_ENCODED = 1 << 16  # a message's JSON longer than this is not kept between turns


def hooks_of(capsule: Capsule, home: Path, paths: SessionPaths,
             component_env: dict[str, str]) -> list[Hook]:
    """The capsule's hook artifacts, resolved, with their contracts and sandboxes."""
    hooks: list[Hook] = []
    for entry in capsule.artifacts:
        if entry.runtime != "hook":
            continue
        from tui.core.wasm.hooks import Hook, contract
        from tui.core.wasm.sandbox import sandbox

        resolved = resolve_wasm(capsule, entry, home)
        binding, mode, policy = contract(resolved)
        hooks.append(Hook(
            name=entry.name, resolved=resolved, binding=binding, execution_mode=mode,
            commit_policy=policy,
            sandbox=sandbox(capsule, entry, workdir=paths.accessible, logs=paths.logs,
                            extra_env=component_env),
            conversation_read=bool(entry.capabilities and entry.capabilities.conversation_read),
            task_io_read=bool(entry.capabilities and entry.capabilities.task_io_read),
        ))
    return hooks


class HookPoints:
    def __init__(self, hooks: list[Hook], runtime: WasmRuntime | None, host: HostServices,
                 paths: SessionPaths, report: Report) -> None:
        self._paths = paths
        self._report = report
        self.runner: HookRunner | None = None
        self._encoded: dict[str, str] = {}  # message id -> its payload JSON
        if hooks:
            from tui.core.wasm.hooks import HookRunner

            assert runtime is not None
            try:
                self.runner = HookRunner(runtime, hooks, host, paths.logs, self._fault)
            except (ComponentLoadError, IncompatibleComponent) as exc:
                raise LaunchError(str(exc)) from None

    def bound(self, handler: str) -> bool:
        return self.runner is not None and self.runner.bound(handler)

    def _dispatch(self, handler: str, event: Record) -> list[tuple[Hook, Any]]:
        assert self.runner is not None
        return self.runner.dispatch(handler, event)

    def _fault(self, fault: Fault) -> None:
        self._report.emit(ev.HookFault(
            hook=fault.hook, handler=fault.handler, arm=fault.arm, error=fault.error,
            task_id=self._report.position.task_id,
            traced=fault.blocking and fault.handler != "on-stage"))

    # -- the points -------------------------------------------------------------------------
    def stage(self, shell_allow: tuple[str, ...]) -> None:
        if not self.bound("on-stage"):
            return
        for hook, output in self._dispatch("on-stage", record(shell_allow=list(shell_allow))):
            for manifest in output.payload or []:
                name = str(getattr(manifest, "binary-name"))
                if segment_problem(name):
                    from tui.core.wasm.hooks import Fault

                    self._fault(Fault(hook.name, "on-stage", None,
                                      f"write-manifests: {name!r} is not a tool name", True))
                    continue
                write_private(self._paths.tools / name / "murmur.yaml",
                              redact(str(manifest.content)))

    def session_start(self, name: str, version: str, session_id: str, model: str,
                      capabilities: tuple[str, ...]) -> None:
        if self.bound("on-session-start"):
            self._dispatch("on-session-start", record(
                capsule_name=name, capsule_version=version, session_id=session_id,
                model=model, capabilities=list(capabilities)))

    def task_start(self, task_id: str, context_id: str, input_bytes: int, budget_tokens: int,
                   context_window: int, prior_tokens: int, source: TaskSource = "task_md"
                   ) -> None:
        if self.bound("on-task-start"):
            self._dispatch("on-task-start", record(
                task_id=task_id, context_id=context_id, source=source,
                input_bytes=input_bytes, budget_tokens=budget_tokens,
                context_window=context_window, prior_tokens=prior_tokens))

    def inference(self, turn: int, input_tokens: int, output_tokens: int, decision: str,
                  tool_name: str | None, payload: Sequence[Mapping[str, Any]],
                  message_ids: list[str],
                  content: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        if not self.bound("on-inference"):
            return
        event = inference_event(turn, input_tokens, output_tokens, decision, tool_name,
                                self._prompt(payload, message_ids), compact_json(content),
                                compact_json(tools))
        for hook, output in self._dispatch("on-inference", event):
            self._keep_artifact(hook.name, turn, str(output.payload))

    def _prompt(self, payload: Sequence[Mapping[str, Any]], message_ids: list[str]) -> str:
        """The prompt's JSON (the payload's messages), each message encoded once: a long
        session's payload is re-sent to on-inference every turn. A message holding an image
        (megabytes of base64) is encoded again each time instead of kept."""
        encoded = self._encoded
        if len(encoded) > 2 * len(message_ids) + 64:  # after a compaction: drop what left
            keep = set(message_ids)
            encoded = self._encoded = {k: v for k, v in encoded.items() if k in keep}
        parts = []
        for key, message in zip(message_ids, payload, strict=True):
            text = encoded.get(key)
            if text is None:
                text = compact_json(message)
                if len(text) <= KEEP_ENCODED:
                    encoded[key] = text
            parts.append(text)
        return "[" + ",".join(parts) + "]"

    def _keep_artifact(self, hook: str, turn: int, artifact: str) -> None:
        """A committed on-inference `artifact`: one line in `out/hook-artifacts.jsonl`."""
        line = json.dumps({"hook": hook, "turn": turn, "artifact": artifact},
                          ensure_ascii=False)
        append_private(self._paths.out / "hook-artifacts.jsonl", redact(line) + "\n")

    def tool_call(self, turn: int, name: str, input_bytes: int, output_bytes: int,
                  duration_ms: int, status: str) -> None:
        if self.bound("on-tool-call"):
            self._dispatch("on-tool-call", tool_event(turn, name, input_bytes, output_bytes,
                                                      duration_ms, status))

    def shell(self, turn: int, shell: ShellResult) -> None:
        if self.bound("on-shell"):
            self._dispatch("on-shell", record(
                turn=turn, binary=shell.binary, command=shell.command,
                exit_code=shell.exit_code, stdout=shell.stdout, stderr=shell.stderr,
                stdout_bytes=shell.stdout_bytes, stderr_bytes=shell.stderr_bytes,
                duration_ms=shell.duration_ms))

    def compaction(self, event: Record, failures: list[Fault]) -> list[tuple[Hook, Any]]:
        """on-compaction: the committed replacements, and the hooks that failed."""
        assert self.runner is not None
        return self.runner.dispatch("on-compaction", event, failures)

    def task_end(self, task_id: str, exit_status: str) -> Reopen | None:
        """on-task-end: the first committed `reopen-task`, if any."""
        if not self.bound("on-task-end"):
            return None
        committed = self._dispatch("on-task-end", record(task_id=task_id,
                                                         exit_status=exit_status))
        if not committed:
            return None
        hook, output = committed[0]
        return Reopen(hook.name, str(output.payload))

    def session_end(self, **totals: Any) -> None:
        if self.bound("on-session-end"):
            self._dispatch("on-session-end", record(**totals))

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()


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

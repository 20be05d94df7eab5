"""The session's hook points (seed 001's table): when each handler fires, what it receives and
what a committed arm does. Nothing is built for a handler no hook is bound to."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.core import events as ev
from tui.core import hook_events
from tui.core.artifacts import resolve_wasm
from tui.core.chat import compact_json
from tui.core.errors import LaunchError
from tui.core.hooks import Fault, Hook, HookRunner, contract
from tui.core.private import append_private
from tui.core.secrets import redact
from tui.core.segments import segment_problem
from tui.core.wasm.cache import ComponentLoadError
from tui.core.wasm.sandbox import sandbox
from tui.core.wasm.versions import IncompatibleComponent

if TYPE_CHECKING:
    from tui.core.session import Session


class SessionHooks:
    def __init__(self, session: Session, component_env: dict[str, str]) -> None:
        self._session = session
        capsule = session.capsule
        hooks: list[Hook] = []
        for entry in capsule.artifacts:
            if entry.runtime != "hook":
                continue
            resolved = resolve_wasm(capsule, entry, session.home)
            binding, mode, policy = contract(resolved)
            hooks.append(Hook(
                name=entry.name, resolved=resolved, binding=binding, execution_mode=mode,
                commit_policy=policy,
                sandbox=sandbox(capsule, entry, workdir=session.paths.accessible,
                                logs=session.paths.logs, extra_env=component_env),
                conversation_read=bool(entry.capabilities and
                                       entry.capabilities.conversation_read),
            ))
        self.runner: HookRunner | None = None
        self._encoded: dict[str, str] = {}  # message id -> its payload JSON
        if hooks:
            assert session.runtime is not None
            try:
                self.runner = HookRunner(session.runtime, hooks, session.host,
                                         session.paths.logs, self._fault)
            except (ComponentLoadError, IncompatibleComponent) as exc:
                raise LaunchError(str(exc)) from None

    def bound(self, handler: str) -> bool:
        return self.runner is not None and self.runner.bound(handler)

    def _dispatch(self, handler: str, event: Any) -> list[tuple[Hook, Any]]:
        assert self.runner is not None
        return self.runner.dispatch(handler, event)

    def _fault(self, fault: Fault) -> None:
        session = self._session
        session._emit(ev.HookFault, hook=fault.hook, handler=fault.handler, arm=fault.arm,
                      error=fault.error, task_id=session.current_task,
                      traced=fault.blocking and fault.handler != "on-stage")

    # -- the points -------------------------------------------------------------------------
    def stage(self) -> None:
        if not self.bound("on-stage"):
            return
        session = self._session
        event = hook_events.stage_event(session.capsule.capabilities.shell_allow)
        for hook, output in self._dispatch("on-stage", event):
            for manifest in output.payload or []:
                name = str(getattr(manifest, "binary-name"))
                if segment_problem(name):
                    self._fault(Fault(hook.name, "on-stage", None,
                                      f"write-manifests: {name!r} is not a tool name", True))
                    continue
                folder = session.paths.tools / name
                folder.mkdir(parents=True, exist_ok=True)
                (folder / "murmur.yaml").write_text(str(manifest.content), encoding="utf-8")

    def session_start(self, capabilities: tuple[str, ...]) -> None:
        if self.bound("on-session-start"):
            s = self._session
            self._dispatch("on-session-start", hook_events.session_context(
                s.capsule.name, s.capsule.version, s.session_id, s.inference.model,
                capabilities))

    def task_start(self, task_id: str, input_bytes: int, prior_tokens: int) -> None:
        if self.bound("on-task-start"):
            s = self._session
            window = s.capsule.context.max_tokens or 0
            budget = int(window * s.capsule.context.seed_budget)
            self._dispatch("on-task-start", hook_events.task_start_event(
                task_id, s.context_id, "task_md", input_bytes, budget, window, prior_tokens))

    def inference(self, turn: int, input_tokens: int, output_tokens: int, decision: str,
                  tool_name: str | None, payload: list[dict[str, Any]], message_ids: list[str],
                  content: list[dict[str, Any]], tools: list[dict[str, Any]]) -> None:
        if not self.bound("on-inference"):
            return
        event = hook_events.inference_event(
            turn, input_tokens, output_tokens, decision, tool_name,
            self._prompt(payload, message_ids), compact_json(content), compact_json(tools))
        for hook, output in self._dispatch("on-inference", event):
            self._keep_artifact(hook.name, turn, str(output.payload))

    def _prompt(self, payload: list[dict[str, Any]], message_ids: list[str]) -> str:
        """The prompt's JSON (the payload's messages), each message encoded once: a long
        session's payload is re-sent to on-inference every turn."""
        encoded = self._encoded
        if len(encoded) > 2 * len(message_ids) + 64:  # after a compaction: drop what left
            keep = set(message_ids)
            encoded = self._encoded = {k: v for k, v in encoded.items() if k in keep}
        parts = []
        for key, message in zip(message_ids, payload, strict=True):
            text = encoded.get(key)
            if text is None:
                text = encoded[key] = compact_json(message)
            parts.append(text)
        return "[" + ",".join(parts) + "]"

    def _keep_artifact(self, hook: str, turn: int, artifact: str) -> None:
        """A committed on-inference `artifact`: one line in `out/hook-artifacts.jsonl`."""
        path: Path = self._session.paths.out / "hook-artifacts.jsonl"
        line = json.dumps({"hook": hook, "turn": turn, "artifact": artifact},
                          ensure_ascii=False)
        append_private(path, redact(line) + "\n")

    def tool_call(self, turn: int, name: str, input_bytes: int, output_bytes: int,
                  duration_ms: int, status: str) -> None:
        if self.bound("on-tool-call"):
            self._dispatch("on-tool-call", hook_events.tool_event(
                turn, name, input_bytes, output_bytes, duration_ms, status))

    def shell(self, turn: int, shell: Any) -> None:
        if self.bound("on-shell"):
            self._dispatch("on-shell", hook_events.shell_event(
                turn, shell.binary, shell.command, shell.exit_code, shell.stdout, shell.stderr,
                shell.stdout_bytes, shell.stderr_bytes, shell.duration_ms))

    def dispatch_compaction(self, event: Any, failures: list[Fault]) -> list[tuple[Hook, Any]]:
        """on-compaction: the committed replacements, and the hooks that failed."""
        assert self.runner is not None
        return self.runner.dispatch("on-compaction", event, failures)

    def task_end(self, task_id: str, exit_status: str) -> list[tuple[Hook, Any]]:
        if not self.bound("on-task-end"):
            return []
        return self._dispatch("on-task-end", hook_events.task_end_event(task_id, exit_status))

    def session_end(self, **totals: Any) -> None:
        if self.bound("on-session-end"):
            self._dispatch("on-session-end", hook_events.session_end_event(**totals))

    def close(self) -> None:
        if self.runner is not None:
            self.runner.close()

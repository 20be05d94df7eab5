"""Test guest: a hook as Murmur v0.2.0 built them (componentize-py, world `hook` of
wit/murmur-v0.2.0: exports murmur:hook/lifecycle@0.5.0, imports murmur:runtime/inference@0.2.0
over 0.5.0's `message`, which is role and content only).

Built by tests/guests/build.py (`build_guest("py_first_hook")`); never committed as a binary.

* on-task-start  -> none (its event has no budget-tokens, context-window, prior-tokens)
* on-inference   -> artifact("turn <n> v0.2.0")
* on-compaction  -> run-inference with one user message, then replace-context([a user message
                    "<response text> [<k> messages]"])
* every other handler -> none
"""

from __future__ import annotations

import json

import wit_world
import wit_world.exports
from componentize_py_types import Err
from wit_world.imports import inference
from wit_world.imports import lifecycle as lc


def _text_content(text: str) -> str:
    return json.dumps([{"type": "text", "text": text}])


def _none() -> lc.HookOutput:
    return lc.HookOutput_None_()


class Lifecycle(wit_world.exports.Lifecycle):
    def on_stage(self, event: lc.StageEvent) -> lc.HookOutput:
        return _none()

    def on_session_start(self, ctx: lc.SessionContext) -> lc.HookOutput:
        return _none()

    def on_task_start(self, event: lc.TaskStartEvent) -> lc.HookOutput:
        return _none()

    def on_inference(self, event: lc.InferenceEvent) -> lc.HookOutput:
        return lc.HookOutput_Artifact(f"turn {event.turn} v0.2.0")

    def on_tool_call(self, event: lc.ToolEvent) -> lc.HookOutput:
        return _none()

    def on_shell(self, event: lc.ShellEvent) -> lc.HookOutput:
        return _none()

    def on_compaction(self, event: lc.CompactionEvent) -> lc.HookOutput:
        ask = lc.Message(role="user",
                         content=_text_content(f"Summarise {len(event.messages)} messages."))
        try:
            response = inference.run_inference(inference.InferenceRequest(
                messages=[ask], system_prompt=event.system_prompt, model=event.model))
        except Err as e:
            raise Err(f"inference failed: {e.value}") from None
        return lc.HookOutput_ReplaceContext([
            lc.Message(role="user",
                       content=_text_content(f"{response.text} [{len(event.messages)} messages]")),
        ])

    def on_task_end(self, event: lc.TaskEndEvent) -> lc.HookOutput:
        return _none()

    def on_session_end(self, event: lc.SessionEndEvent) -> lc.HookOutput:
        return _none()

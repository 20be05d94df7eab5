"""Test guest: a murmur lifecycle hook in Python (componentize-py, world `hook`).

Built by tests/guests/build.py (`build_guest("py_hook")`); never committed as a binary.

* on-session-start -> writes a line to stderr; none
* on-task-start    -> read-messages(none, 3); err("read failed: <e>") if that fails, else none
* on-inference     -> artifact("turn <n>")
* on-compaction    -> run-inference with one user message, then
                      replace-context([user message whose content is the JSON
                      [{"type": "text", "text": <response text>}]])
* every other handler -> none
"""

from __future__ import annotations

import json
import sys

import wit_world
import wit_world.exports
from componentize_py_types import Err
from wit_world.imports import inference, read
from wit_world.imports import lifecycle as lc


def _text_content(text: str) -> str:
    return json.dumps([{"type": "text", "text": text}])


def _none() -> lc.HookOutput:
    return lc.HookOutput_None_()


class Lifecycle(wit_world.exports.Lifecycle):
    def on_stage(self, event: lc.StageEvent) -> lc.HookOutput:
        return _none()

    def on_session_start(self, ctx: lc.SessionContext) -> lc.HookOutput:
        print(f"hook_py session start {ctx.session_id}", file=sys.stderr, flush=True)
        return _none()

    def on_task_start(self, event: lc.TaskStartEvent) -> lc.HookOutput:
        try:
            read.read_messages(None, 3)
        except Err as e:
            raise Err(f"read failed: {e.value}") from None
        return _none()

    def on_inference(self, event: lc.InferenceEvent) -> lc.HookOutput:
        return lc.HookOutput_Artifact(f"turn {event.turn}")

    def on_tool_call(self, event: lc.ToolEvent) -> lc.HookOutput:
        return _none()

    def on_shell(self, event: lc.ShellEvent) -> lc.HookOutput:
        return _none()

    def on_compaction(self, event: lc.CompactionEvent) -> lc.HookOutput:
        ask = lc.Message(role="user",
                         content=_text_content(f"Summarise {len(event.messages)} messages."),
                         id=None, source_id=None)
        try:
            response = inference.run_inference(inference.InferenceRequest(
                messages=[ask], system_prompt=event.system_prompt, model=event.model))
        except Err as e:
            raise Err(f"inference failed: {e.value}") from None
        return lc.HookOutput_ReplaceContext([
            lc.Message(role="user", content=_text_content(response.text), id=None,
                       source_id=None),
        ])

    def on_task_end(self, event: lc.TaskEndEvent) -> lc.HookOutput:
        return _none()

    def on_session_end(self, event: lc.SessionEndEvent) -> lc.HookOutput:
        return _none()

"""Test guest: a hook as Murmur v0.4.0 to v0.11.0 build them (componentize-py, world
`newest-hook`: exports murmur:hook/lifecycle@0.9.0, imports runtime@0.4.0's inference and
tokens, task-io/read@0.1.0 and conversation/read@0.2.0).

Built by tests/guests/build.py (`build_guest("py_newest_hook")`); never committed as a binary.

* on-task-start  -> read-messages(none, 3) and task-io input-len(as-given); err naming what
                    failed (a task-io refusal is not a failure: it is reported on-inference)
* on-inference   -> artifact("turn <n> tokens <count('hello world')> task-io <error or length>")
* on-compaction  -> run-inference with one user message, then replace-context([a user message
                    "<response text> [inserted-by replace-context: <k>]"]), k being how many of
                    the event's messages carry inserted-by = replace-context
* every other handler -> none
"""

from __future__ import annotations

import json

import wit_world
import wit_world.exports
from componentize_py_types import Err
from wit_world.imports import inference, tokens
from wit_world.imports import lifecycle as lc
from wit_world.imports import murmur_conversation_read as read  # two `read`s: named by package
from wit_world.imports import murmur_task_io_read as task_io

_task_io_seen = "not called"


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
        global _task_io_seen
        try:
            read.read_messages(None, 3)
        except Err as e:
            raise Err(f"read failed: {e.value}") from None
        try:
            _task_io_seen = str(task_io.input_len(task_io.TaskInputForm.AS_GIVEN))
        except Err as e:
            _task_io_seen = e.value.name.lower().replace("_", "-")
        return _none()

    def on_inference(self, event: lc.InferenceEvent) -> lc.HookOutput:
        counted = tokens.count("hello world")
        return lc.HookOutput_Artifact(f"turn {event.turn} tokens {counted} task-io "
                                      f"{_task_io_seen}")

    def on_tool_call(self, event: lc.ToolEvent) -> lc.HookOutput:
        return _none()

    def on_shell(self, event: lc.ShellEvent) -> lc.HookOutput:
        return _none()

    def on_compaction(self, event: lc.CompactionEvent) -> lc.HookOutput:
        inserted = sum(1 for m in event.messages
                       if m.inserted_by == lc.ContextInsertion.REPLACE_CONTEXT)
        ask = lc.Message(role="user",
                         content=_text_content(f"Summarise {len(event.messages)} messages."),
                         id=None, source_id=None, inserted_by=None)
        try:
            response = inference.run_inference(inference.InferenceRequest(
                messages=[ask], system_prompt=event.system_prompt, model=event.model))
        except Err as e:
            raise Err(f"inference failed: {e.value}") from None
        summary = f"{response.text} [inserted-by replace-context: {inserted}]"
        return lc.HookOutput_ReplaceContext([
            lc.Message(role="user", content=_text_content(summary), id=None, source_id=None,
                       inserted_by=None),
        ])

    def on_task_end(self, event: lc.TaskEndEvent) -> lc.HookOutput:
        return _none()

    def on_session_end(self, event: lc.SessionEndEvent) -> lc.HookOutput:
        return _none()

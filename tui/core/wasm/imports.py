"""The murmur host imports, defined once per linker (ARCHITECTURE §8).

Each import answers to the innermost `CallContext` of the calling thread, so one linker serves
every component: whether an import is allowed (request-input only for tools, read-messages only
with the grant, invoke, manage and message/send only for script capsules) is decided per call.
"""

from __future__ import annotations

from typing import Any

from wasmtime.component import Linker, Record

from tui.core.errors import ConversationReadError, TrapGuest
from tui.core.record.reader import MessagePage
from tui.core.wasm import artifact_manager, message_send, stream_events
from tui.core.wasm.calls import current, host_function
from tui.core.wasm.stream_events import STREAM, define_stream_events
from tui.core.wasm.values import record

TASK = "murmur:task/task@0.1.0"
CHUNKS = "murmur:text/chunks@0.1.0"
INFERENCE = "murmur:runtime/inference@0.2.0"
CONVERSATION = "murmur:conversation/read@0.1.0"
REGISTRY = "murmur:tool-registry/invoke@0.1.0"
LIFECYCLE = "murmur:hook/lifecycle@0.8.0"
TOOL_TYPES = "murmur:tool/run@0.1.0"  # tool-registry's types: imported for them alone
HANDLERS = ("on-stage", "on-session-start", "on-task-start", "on-inference", "on-tool-call",
            "on-shell", "on-compaction", "on-task-end", "on-session-end")
MANAGE = artifact_manager.MANAGE
SEND = message_send.SEND
# murmur:stream/events (tui/core/wasm/stream_events.py) is linked beside text/chunks
PROVIDED = frozenset({TASK, CHUNKS, STREAM, INFERENCE, CONVERSATION, REGISTRY, LIFECYCLE,
                      TOOL_TYPES, MANAGE, SEND})


def define_murmur_imports(linker: Linker) -> None:
    with linker.root() as root:
        with root.add_instance(TASK) as task:
            task.add_func("request-input", host_function(request_input))
        with root.add_instance(CHUNKS) as chunks:
            # the same two functions as murmur:stream/events has (one place for them)
            chunks.add_func("emit-chunk", host_function(stream_events.emit_chunk))
            chunks.add_func("emit-thinking-chunk",
                            host_function(stream_events.emit_thinking_chunk))
        with root.add_instance(INFERENCE) as inference:
            inference.add_func("run-inference", host_function(run_inference))
        with root.add_instance(CONVERSATION) as conversation:
            conversation.add_func("read-messages", host_function(read_messages))
        with root.add_instance(REGISTRY) as registry:
            registry.add_func("invoke", host_function(invoke))
        # a language guest that calls `invoke` imports the tool interface it takes its
        # `tool-input` and `tool-result` from; it needs the types, never the function (an
        # instance is only defined with something in it, so `run` is a stub that traps)
        with root.add_instance(TOOL_TYPES) as tool_types:
            tool_types.add_func("run", host_function(_exported_stub(TOOL_TYPES, "run",
                                                                    "tools")))
        # `inference` and `read` use lifecycle's `message`, so language guests import the
        # whole lifecycle interface; its functions are the hook's exports, never the host's.
        with root.add_instance(LIFECYCLE) as lifecycle:
            for handler in HANDLERS:
                lifecycle.add_func(handler, host_function(_lifecycle_stub(handler)))
        # -- murmur:artifact-manager/manage (script capsules; tui/core/wasm/artifact_manager.py)
        with root.add_instance(MANAGE) as manage:
            for name, function in artifact_manager.HOST_FUNCTIONS.items():
                manage.add_func(name, host_function(function))
        # -- murmur:message/send (script capsules; tui/core/wasm/message_send.py)
        with root.add_instance(SEND) as send:
            send.add_func("send", host_function(message_send.send))
        # -- murmur:stream/events ------------------------------------------------------------
        define_stream_events(root)


def _lifecycle_stub(handler: str) -> Any:
    return _exported_stub(LIFECYCLE, handler, "hooks")


def _exported_stub(interface: str, name: str, by: str) -> Any:
    def stub(*_: Any) -> Any:
        raise TrapGuest(f"{interface}#{name} is exported by {by}; the host does not provide it")
    return stub


def request_input(prompt: str) -> str:
    context = current()
    if context.kind != "tool" or context.services is None:
        raise TrapGuest(f"request-input is available to tools during a task, not to a "
                        f"{context.kind} ({context.artifact})")
    return context.services.ask(context.artifact, prompt)


def run_inference(request: Any) -> Record | str:
    context = current()
    if context.services is None:
        return "run-inference: no session is running"
    messages = [
        {"role": m.role, "content": m.content,
         "id": getattr(m, "id", None), "source_id": getattr(m, "source-id", None)}
        for m in request.messages
    ]
    try:
        text, model, tokens_in, tokens_out = context.services.run_inference(
            context.artifact, messages, getattr(request, "system-prompt"),
            request.model)
    except Exception as exc:  # any failure is the hook's err, never a crash
        return f"run-inference failed: {exc}"
    return record(text=text, model_used=model, input_tokens=tokens_in,
                  output_tokens=tokens_out)


def read_messages(cursor: str | None, limit: int) -> Record | str:
    context = current()
    if not context.conversation_read:
        return "not-granted"
    if context.services is None:
        return page_record(MessagePage([], None, 0))
    try:
        page = context.services.read_messages(cursor, limit)
    except ConversationReadError as exc:
        return exc.code
    return page_record(page)


def page_record(page: MessagePage) -> Record:
    return record(
        messages=[record(role=m.role, content=m.content, id=m.id, source_id=m.source_id)
                  for m in page.messages],
        next_cursor=page.next_cursor,
        total=page.total,
    )


def invoke(name: str, tool_input: Any) -> Record | str:
    context = current()
    if context.kind != "capsule" or context.services is None:
        return f"tool-registry invoke is available to script capsules, not to a {context.kind}"
    result = context.services.invoke_tool(name, tool_input.data)
    if isinstance(result, (Record, str)):
        return result  # a Record in the tool-result@0.1.0 shape, or an error string
    return f"tool {name!r} returned nothing the host can pass back"

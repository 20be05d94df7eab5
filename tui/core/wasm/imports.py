"""The murmur host imports, defined once per linker (ARCHITECTURE §8).

Each import answers to the innermost `CallContext` of the calling thread, so one linker serves
every component: whether an import is allowed (request-input only for tools, read-messages only
with the grant, invoke, manage and message/send only for script capsules) is decided per call.

Every version `versions.INTERFACES` lists is linked, each to the same Python function: a host
function takes the types the component imports, so one implementation serves them all. What
differs between versions is adapted at the boundary: a record the host builds carries every
field of the newest version (an older type reads only its own fields), and a record the host
lifts is read by field name with a default (`inserted-by` and `id` are absent before 0.9.0 and
0.8.0). The versions are linked at start, so a call costs the same in each.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wasmtime.component import Linker, Record

from tui.core.errors import ConversationReadError, TrapGuest
from tui.core.record.reader import MessagePage
from tui.core.text import tokens
from tui.core.wasm import artifact_manager, message_send, stream_events, task_io, versions
from tui.core.wasm.calls import current, host_function
from tui.core.wasm.values import record

HANDLERS = ("on-stage", "on-session-start", "on-task-start", "on-inference", "on-tool-call",
            "on-shell", "on-compaction", "on-task-end", "on-session-end")


def _exported_stub(interface: str, name: str, by: str) -> Callable[..., Any]:
    def stub(*_: Any) -> Any:
        raise TrapGuest(f"{interface}#{name} is exported by {by}; the host does not provide it")
    return stub


def _functions(name: str) -> dict[str, Callable[..., Any]]:
    """The host functions of one versioned interface."""
    interface = name.split("@", 1)[0]
    if interface == "murmur:hook/lifecycle":
        # `inference` and `read` use lifecycle's `message`, so language guests import the
        # whole lifecycle interface; its functions are the hook's exports, never the host's
        return {handler: _exported_stub(name, handler, "hooks") for handler in HANDLERS}
    if interface in ("murmur:tool/run", "murmur:capsule/run"):
        # a guest that calls `invoke` imports the tool interface for its `tool-input` and
        # `tool-result`; it needs the types, never the function (an instance is only defined
        # with something in it, so `run` is a stub that traps)
        by = "tools" if interface == "murmur:tool/run" else "script capsules"
        return {"run": _exported_stub(name, "run", by)}
    functions: dict[str, dict[str, Callable[..., Any]]] = {
        "murmur:task/task": {"request-input": request_input},
        # text/chunks has the same two functions as stream/events' first two (one place)
        "murmur:text/chunks": {"emit-chunk": stream_events.emit_chunk,
                               "emit-thinking-chunk": stream_events.emit_thinking_chunk},
        "murmur:stream/events": stream_events.FUNCTIONS,
        "murmur:runtime/inference": {"run-inference": run_inference},
        "murmur:runtime/tokens": {"count": count_tokens},
        "murmur:conversation/read": {"read-messages": read_messages},
        "murmur:task-io/read": task_io.FUNCTIONS,
        "murmur:tool-registry/invoke": {"invoke": invoke},
        # script capsules: tui/core/wasm/artifact_manager.py and message_send.py
        "murmur:artifact-manager/manage": artifact_manager.HOST_FUNCTIONS,
        "murmur:message/send": {"send": message_send.send},
    }
    return functions[interface]


def define_murmur_imports(linker: Linker) -> None:
    with linker.root() as root:
        for name in versions.linked():
            with root.add_instance(name) as instance:
                for function, implementation in _functions(name).items():
                    instance.add_func(function, host_function(implementation))


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


def count_tokens(text: str) -> int:
    """`murmur:runtime/tokens#count`: the host's own count (cl100k_base), as for a turn."""
    return tokens.count(text)


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
        messages=[record(role=m.role, content=m.content, id=m.id, source_id=m.source_id,
                         inserted_by=m.inserted_by) for m in page.messages],
        next_cursor=page.next_cursor,
        total=page.total,
    )


def invoke(name: str, tool_input: Any) -> Record | str:
    context = current()
    if context.kind != "capsule" or context.services is None:
        return f"tool-registry invoke is available to script capsules, not to a {context.kind}"
    result = context.services.invoke_tool(name, tool_input.data)
    if isinstance(result, Record):
        if not hasattr(result, "attachments"):
            # tool-result@0.2.0 (tool-registry@0.2.0) has attachments; @0.1.0 ignores it
            setattr(result, "attachments", [])  # noqa: B010 (a WIT name, not an identifier)
        return result
    if isinstance(result, str):
        return result  # an error string
    return f"tool {name!r} returned nothing the host can pass back"

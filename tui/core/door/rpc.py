"""JSON-RPC 2.0 on the door (agent-card.md "The JSON-RPC door"): the request checks in Murmur's
order, and each method. A method answers a `Reply` — a JSON body, or a stream of frames."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from tui.core.door.frames import DoorFrame
from tui.core.door.residue import residue_artifact
from tui.core.door.tasks import STATES, DoorTask, TaskTable
from tui.core.errors import BadJsonSyntax, NotJson
from tui.core.events.kinds import TaskOrigin
from tui.core.text import strict_json
from tui.core.text.text_rule import lone_surrogate_at, where_lone_surrogate

PARSE_ERROR, INVALID_REQUEST, NO_METHOD, INVALID_PARAMS, INTERNAL = \
    -32700, -32600, -32601, -32602, -32603
TASK_NOT_FOUND, NOT_CANCELABLE, UNSUPPORTED, CONTENT_TYPE, VERSION = \
    -32001, -32002, -32004, -32005, -32009
REASONS = {TASK_NOT_FOUND: "TASK_NOT_FOUND", NOT_CANCELABLE: "TASK_NOT_CANCELABLE",
           UNSUPPORTED: "UNSUPPORTED_OPERATION", CONTENT_TYPE: "CONTENT_TYPE_NOT_SUPPORTED",
           VERSION: "VERSION_NOT_SUPPORTED"}
BUSY = "task rejected: capsule is busy"
CLOSING = "task rejected: the session is closing"


class DoorSession(Protocol):
    """What the door asks of the session it serves (the Door facade implements it)."""

    table: TaskTable

    def methods(self) -> list[str]: ...

    def accepts_peer_tasks(self) -> bool: ...

    def submit(self, task: DoorTask) -> str | None: ...

    def answer(self, task: DoorTask, text: str) -> bool: ...

    def cancel(self, task: DoorTask) -> str | None: ...

    def stop(self) -> dict[str, Any]: ...

    def still_running(self) -> list[dict[str, Any]]: ...

    def extended_card(self) -> dict[str, Any] | None: ...

    def new_ids(self) -> tuple[str, str]: ...

    def conversation_mode(self) -> str: ...


@dataclass
class Reply:
    body: dict[str, Any] | None = None
    stream: str | None = None  # "watch" | "task": the connection streams frames
    last_event_id: int | None = None
    prelude: list[DoorFrame] = field(default_factory=list)
    task_id: str | None = None  # a task stream ends on this task's final status
    start: Callable[[], list[DoorFrame]] | None = None  # run once the stream listens


def error(request_id: Any, code: int, message: str,
          metadata: dict[str, str] | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if code in REASONS:
        body["data"] = [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                         "reason": REASONS[code], "domain": "a2a-protocol.org",
                         "metadata": metadata or {}}]
    return {"jsonrpc": "2.0", "id": request_id, "error": body}


def result(request_id: Any, value: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def version_problem(values: list[str]) -> str | None:
    """The requested version as Murmur reports it when it is not 1.0, else None."""
    if len(values) == 1:
        value = values[0].strip()
        head, dot, rest = value.partition(".")
        minor, _, patch = rest.partition(".")
        if head == "1" and dot and minor == "0" and ((not patch and "." not in rest[1:])
                                                     or patch.isdigit()):
            return None
    return ", ".join(v.strip() for v in values)


def parse(body: bytes) -> tuple[Any, dict[str, Any] | None]:
    """(request, None) or (None, the error body) for steps 6 and 7. A body is UTF-8 JSON
    nested at most MAX_DEPTH deep (Python's decoder recurses: deeper would raise
    RecursionError); a request whose id holds a lone surrogate is not a request (the id is
    echoed in the answer, which could not be written)."""
    try:
        request = strict_json.loads(body)  # never RecursionError: nesting is capped
    except BadJsonSyntax:
        return None, error(None, PARSE_ERROR, "Invalid JSON payload")
    except NotJson as exc:
        return None, error(None, PARSE_ERROR, f"Invalid JSON payload: {exc}")
    if not isinstance(request, dict):
        return None, error(None, INVALID_REQUEST, "Request payload validation error")
    rid = request.get("id")
    valid_id = (isinstance(rid, str) and lone_surrogate_at(rid) is None) or \
        (isinstance(rid, int) and not isinstance(rid, bool))
    if request.get("jsonrpc") != "2.0" or not isinstance(request.get("method"), str) \
            or not valid_id:
        return None, error(rid if valid_id else None, INVALID_REQUEST,
                           "Request payload validation error")
    return request, None


def dispatch(door: DoorSession, request: dict[str, Any], last_event_id: int | None,
             authorize: Callable[[str], Any], origin: TaskOrigin = "user",
             member: str | None = None) -> Reply | Any:
    """Steps 10–14: the method, its scope (`authorize` returns a refusal to pass on, or
    None), its params, then the method itself (a new task runs with `origin`). A formation
    `member`'s call sees only the tasks that member sent: any other is not found."""
    rid, method = request["id"], request["method"]
    if method not in door.methods():
        if method == "GetExtendedAgentCard":
            return Reply(error(rid, UNSUPPORTED, "this door has no extended card"))
        return Reply(error(rid, NO_METHOD, "Method not found"))
    refused = authorize(method)
    if refused is not None:
        return refused
    # omitted, params reads as {}; present, it must be an object (`null` included: step 13)
    params = request.get("params", {})
    if not isinstance(params, dict):
        return Reply(error(rid, INVALID_PARAMS, "Invalid parameters: params must be an object"))
    # the one rule for text from the network: a lone surrogate is refused, naming its field,
    # before anything is written (task.md, the record and the trace could not hold it)
    where = where_lone_surrogate(params, "params")
    if where is not None:
        return Reply(error(rid, INVALID_PARAMS, f"Invalid params: {where} holds a lone "
                           "surrogate (not a character); send text as Unicode characters"))
    if method in ("SendMessage", "SendStreamingMessage"):
        return _send(door, rid, params, streaming=method == "SendStreamingMessage",
                     last_event_id=last_event_id, origin=origin, member=member)
    if method == "GetTask":
        task, problem = _named_task(door, rid, params, "GetTask", member)
        return Reply(problem or result(rid, task.wire() if task else None))
    if method == "CancelTask":
        return Reply(_cancel(door, rid, params, member))
    if method == "stream/watch":
        ack = DoorFrame("connection-ack", {"role": "observer",
                                           "conversation_mode": door.conversation_mode()})
        return Reply(stream="watch", last_event_id=last_event_id if last_event_id is not None
                     else 0, prelude=[ack])
    if method == "session/stop":
        return Reply(result(rid, door.stop()))
    card = door.extended_card()
    if card is None:
        return Reply(error(rid, UNSUPPORTED, "this door has no extended card"))
    return Reply(result(rid, card))


def _named_task(door: DoorSession, rid: Any, params: dict[str, Any], method: str,
                member: str | None = None) -> tuple[DoorTask | None, dict[str, Any] | None]:
    """The task `params.id` names. Murmur's words: GetTask refuses a missing or empty id,
    CancelTask only a missing one (an empty id is a task it never held)."""
    task_id = params.get("id")
    if method == "GetTask" and (not isinstance(task_id, str) or not task_id):
        return None, error(rid, INVALID_PARAMS, "GetTask requires an id")
    if not isinstance(task_id, str):
        return None, error(rid, INVALID_PARAMS, f"Invalid params: {method} requires an id")
    task = _visible(door, task_id, member)
    if task is None:
        return None, error(rid, TASK_NOT_FOUND, "Task not found", {"taskId": task_id})
    return task, None


def _visible(door: DoorSession, task_id: str, member: str | None) -> DoorTask | None:
    """The task, unless a formation member asks for one it did not send (Murmur: not found)."""
    task = door.table.get(task_id)
    if task is None or (member is not None and task.caller_member != member):
        return None
    return task


def _cancel(door: DoorSession, rid: Any, params: dict[str, Any], member: str | None = None
            ) -> dict[str, Any]:
    task, problem = _named_task(door, rid, params, "CancelTask", member)
    if problem is not None or task is None:
        return problem or {}
    context, problem = _callers_context(rid, params)
    if problem is not None:
        return problem
    if context is not None and context != task.context_id:
        return error(rid, INVALID_PARAMS, f"Invalid params: task {task.task_id} is not in "
                     f"context {context}; a caller cancels only its own context's tasks")
    if task.terminal:
        state = STATES[task.state]
        return error(rid, NOT_CANCELABLE, f"Task cannot be canceled: it is already {state}",
                     {"taskId": task.task_id, "state": state})
    refused = door.cancel(task)
    if refused is not None:
        return error(rid, INTERNAL, refused)
    # answered at once, as Murmur's door: the task in TASK_STATE_CANCELED, and a `residue`
    # artifact naming what the session still runs (no key when nothing does)
    body = task.wire()
    body["status"] = {"state": STATES["canceled"]}
    body.pop("artifacts", None)
    items = door.still_running()
    if items:
        body["artifacts"] = [residue_artifact(items)]
    return result(rid, body)


def _callers_context(rid: Any, params: dict[str, Any]
                     ) -> tuple[str | None, dict[str, Any] | None]:
    """The context the caller speaks for: `params.contextId`, else `params.metadata.contextId`
    (A2A's CancelTaskRequest has only `id` and `metadata`); None when it names none."""
    metadata = params.get("metadata")
    for where, value in (("contextId", params.get("contextId")),
                         ("metadata.contextId", metadata.get("contextId")
                          if isinstance(metadata, dict) else None)):
        if value is None:
            continue
        if not isinstance(value, str) or not value:
            return None, error(rid, INVALID_PARAMS, f"Invalid params: CancelTask "
                               f"params.{where} must be a non-empty string")
        return value, None
    return None, None


def message_text(params: dict[str, Any]) -> tuple[dict[str, Any] | None, str, str | None]:
    """(message, its text, None) or (None, "", why it is refused) — Murmur's checks 1–5."""
    message = params.get("message")
    if not isinstance(message, dict):
        return None, "", "params.message must be an object"
    if not isinstance(message.get("messageId"), str) or not message["messageId"]:
        return None, "", "message.messageId must be a non-empty string"
    if message.get("role") != "ROLE_USER":
        return None, "", "message.role must be ROLE_USER"
    parts = message.get("parts")
    if not isinstance(parts, list) or not parts:
        return None, "", "message.parts must be a non-empty array"
    texts: list[str] = []
    for index, part in enumerate(parts):
        kinds = [k for k in ("text", "raw", "url", "data") if isinstance(part, dict) and k in part]
        if len(kinds) != 1:
            return None, "", f"message.parts[{index}] must set exactly one of text, raw, url, data"
        for key in ("text", "raw", "url", "mediaType", "filename"):
            if key in part and not isinstance(part[key], str):
                return None, "", f"message.parts[{index}].{key} must be a string"
        if "text" in part:
            texts.append(part["text"])
        elif "data" in part:
            texts.append(_data_fence(part))
    for key in ("taskId", "contextId"):
        if key in message and not isinstance(message[key], str):
            return None, "", f"message.{key} must be a string"
    refs = message.get("referenceTaskIds")
    if refs is not None and (not isinstance(refs, list) or len(set(map(str, refs))) > 16 or
                             not all(isinstance(r, str) and r for r in refs)):
        return None, "", "message.referenceTaskIds must name at most 16 tasks"
    for index, part in enumerate(parts):
        if "raw" in part or "url" in part:
            return message, "", f"file:{index}"
    return message, "\n".join(texts), None


def _data_fence(part: dict[str, Any]) -> str:
    value = json.dumps(part["data"], indent=2, ensure_ascii=False)
    longest = run = 0
    for char in value:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * max(3, longest + 1)
    label = "data"
    for key, name in (("mediaType", "media-type"), ("filename", "filename")):
        if key in part:
            clean = "".join("_" if c.isspace() or c in "`=" else c for c in part[key])
            label += f" {name}={clean}"
    return f"{fence}{label}\n{value}\n{fence}"


def _send(door: DoorSession, rid: Any, params: dict[str, Any], streaming: bool,
          last_event_id: int | None, origin: TaskOrigin = "user", member: str | None = None
          ) -> Reply:
    message, text, problem = message_text(params)
    if problem is not None and problem.startswith("file:"):
        index = problem.removeprefix("file:")
        part = message["parts"][int(index)] if message else {}
        kind = "raw" if "raw" in part else "url"
        meta = {"partIndex": index}
        if isinstance(part.get("mediaType"), str):
            meta["mediaType"] = part["mediaType"]
        return Reply(error(rid, CONTENT_TYPE, f"message.parts[{index}] is a {kind} part; this "
                           "agent reads text and data parts only", meta))
    if problem is not None or message is None:
        return Reply(error(rid, INVALID_PARAMS, problem or "params.message must be an object"))
    named = message.get("taskId") or ""
    if named:
        task = _visible(door, named, member)
        if task is None:
            return Reply(error(rid, TASK_NOT_FOUND, "Task not found", {"taskId": named}))
        if task.state != "input-required":
            state = STATES[task.state]
            return Reply(error(rid, UNSUPPORTED, f"task {named} is {state}: a task takes a "
                               "message only while it waits in TASK_STATE_INPUT_REQUIRED",
                               {"taskId": named, "state": state}))
        context = message.get("contextId") or task.context_id
        if context != task.context_id:
            return Reply(error(rid, INVALID_PARAMS, f"task {named} is in context "
                               f"{task.context_id}, not {context}"))
        if not door.answer(task, text):
            state = STATES[task.state]
            return Reply(error(rid, UNSUPPORTED, f"task {named} is no longer waiting",
                               {"taskId": named, "state": state}))
        if streaming:
            return Reply(stream="task", task_id=task.task_id, last_event_id=last_event_id)
        # answered in TASK_STATE_WORKING, as it stood when the answer was taken (the task may
        # already have gone on, and even ended, by the time this is written)
        answered = task.wire()
        answered["status"] = {"state": STATES["working"]}
        answered.pop("artifacts", None)
        return Reply(result(rid, {"task": answered}))
    task_id, minted_context = door.new_ids()
    task = DoorTask(task_id, message.get("contextId") or minted_context, text=text,
                    origin=origin, caller_member=member)
    if streaming:
        def start() -> list[DoorFrame]:
            refused = door.submit(task)
            if refused is None:
                return []
            from tui.core.door.frames import status

            task.state, task.message = "rejected", refused
            return [DoorFrame("status", status(task.task_id, "rejected", refused,
                                               context_id=task.context_id, final=True))]

        return Reply(stream="task", task_id=task.task_id, last_event_id=last_event_id,
                     start=start)
    refused = door.submit(task)
    if refused is not None:
        task.state, task.message = "rejected", refused
    return Reply(result(rid, {"task": task.wire()}))

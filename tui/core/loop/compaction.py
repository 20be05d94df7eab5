"""Compaction (spec §5.2 step 8, seed 001): when the session's tokens reach
`compaction.threshold` of `context.max_tokens`, the `on-compaction` hooks receive every message
and may hand back a shorter context, which replaces it.

Outcomes: a hook's `Err` (or trap) fails the task (`compaction_hook`); no replacement — or no
hook bound to `on-compaction` at all — is a `compaction_declined` (`no_hook_replacement`, also
a bootstrap-log line, once per turn) and the task goes on over budget; a replacement
whose assistant tool calls and tool results do not pair is declined (`unresolved_tool_call`);
anything else is committed: the messages get fresh ids and are appended to the record beside
what they replace, the tokens are recounted, and a held driver continuation is dropped.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tui.core.chat import Message, from_wit_message, tool_calls_of
from tui.core.events import vocabulary as ev
from tui.core.fs.private_files import append_private
from tui.core.loop.context import Context
from tui.core.loop.report import Report
from tui.core.loop.state import Failed
from tui.core.manifest.model import Compaction
from tui.core.record.reader import to_wit
from tui.core.text.secrets import redact
from tui.core.wasm.values import record

if TYPE_CHECKING:
    from wasmtime.component import Record

    from tui.core.wasm.hooks import Fault, Hook


class CompactionHooks(Protocol):
    """What compaction needs of the hook points (`HookPoints` is one)."""

    def bound(self, handler: str) -> bool: ...

    def compaction(self, event: Record, failures: list[Fault]) -> list[tuple[Hook, Any]]: ...


@dataclass(frozen=True)
class Decision:
    kind: str  # committed | declined | failed
    messages: list[Message] = field(default_factory=list)  # the committed replacement
    reason: str = ""  # declined: why; failed: the hook's error
    hook: str | None = None


def due(session_tokens: int, window: int | None, threshold: float) -> float | None:
    """The actual ratio of tokens to the window when compaction is due, else None."""
    if not window or window <= 0:
        return None
    ratio = session_tokens / window
    return ratio if ratio >= threshold else None


def compaction_event(messages: Iterable[Message], session_tokens: int, ratio: float,
                     model: str | None, system_prompt: str | None) -> Record:
    """`compaction-event`: tool messages in the envelope form of seed 003."""
    wit = [record(role=m.role, content=m.content, id=m.id, source_id=m.source_id,
                  inserted_by=m.inserted_by)
           for m in (to_wit(message) for message in messages)]
    return record(messages=wit, session_tokens=session_tokens, threshold=ratio, model=model,
                  system_prompt=system_prompt)


def rebuild(payload: Iterable[Any]) -> list[Message]:
    """A `replace-context` payload as the runtime holds messages: fresh ids, `source_id` kept,
    marked `inserted_by: replace-context`, tool messages without the envelope dropped."""
    rebuilt: list[Message] = []
    for item in payload or []:
        wit = {"role": getattr(item, "role", ""), "content": getattr(item, "content", ""),
               "source_id": getattr(item, "source-id", None), "inserted_by": "replace-context"}
        message = from_wit_message(wit)
        if message is not None:
            rebuilt.append(message)
    return rebuilt


def unpaired(messages: list[Message]) -> bool:
    """True when the assistants' tool call ids and the tool results' ids differ."""
    calls = Counter(str(block.get("id")) for m in messages if m.get("role") == "assistant"
                    for block in tool_calls_of(m.get("content")))
    results = Counter(str(m.get("tool_call_id")) for m in messages if m.get("role") == "tool")
    return calls != results


def decide(hooks: CompactionHooks, messages: list[Message], settings: Compaction, model: str,
           session_tokens: int, ratio: float) -> Decision:
    """Dispatch `on-compaction` and judge what came back."""
    failures: list[Fault] = []
    event = compaction_event(messages, session_tokens, ratio, settings.model or model,
                             settings.system_prompt)
    committed = hooks.compaction(event, failures)
    if failures:
        first = failures[0]
        return Decision("failed", reason=f"compaction hook {first.hook} failed: {first.error}",
                        hook=first.hook)
    if not committed:
        return Decision("declined", reason="no_hook_replacement")
    hook, output = committed[0]
    replacement = rebuild(output.payload)
    if unpaired(replacement):
        return Decision("declined", reason="unresolved_tool_call", hook=hook.name)
    return Decision("committed", messages=replacement, hook=hook.name)


def check(context: Context, hooks: CompactionHooks, report: Report, settings: Compaction,
          window: int | None, model: str, out: Path, task_id: str, turn: int,
          session_tokens: int) -> Failed | None:
    """Step 8 of a turn: compact when due. An outcome fails the task; None goes on."""
    ratio = due(session_tokens, window, settings.threshold)
    if ratio is None:
        return None
    decision = decide(hooks, context.messages, settings, model, session_tokens, ratio) \
        if hooks.bound("on-compaction") else Decision("declined", reason="no_hook_replacement")
    if decision.kind == "failed":
        return Failed(f"error: {decision.reason}", "compaction_hook", turn)
    if decision.kind == "declined":
        if decision.reason == "no_hook_replacement":  # Murmur's words for it
            report.log("[compaction] threshold reached but no hook returned replace-context; "
                       "continuing without compaction")
        report.emit(ev.CompactionDeclined(task_id=task_id, turn=turn, tokens=session_tokens,
                                          reason=decision.reason))
        return None
    context.replace(decision.messages)
    tokens_after = context.count()
    report.emit(ev.Compacted(task_id=task_id, turn=turn, tokens_before=session_tokens,
                             tokens_after=tokens_after))
    report.log(f"compaction: turn {turn + 1}, {session_tokens} -> {tokens_after} tokens, "
               f"{len(decision.messages)} messages from hook {decision.hook}")
    if settings.dump_summaries:
        line = {"task_id": task_id, "turn": turn, "hook": decision.hook,
                "tokens_before": session_tokens, "tokens_after": tokens_after,
                "messages": decision.messages}
        append_private(out / "compaction-summaries.jsonl",
                       redact(json.dumps(line, ensure_ascii=False)) + "\n")
    return None

"""What each trace line says: the fields after the envelope, built from one event (spec §2).

Pure functions of the event (and the `capture` level where it decides what is written); the
writer adds the envelope and places the line in the tree.
"""

from __future__ import annotations

from typing import Any

from tui.core.events import vocabulary as ev

ERROR_BYTES = 2000  # an error or reason text in a line: at most this many bytes of UTF-8


def session_start(event: ev.SessionStarted) -> dict[str, Any]:
    return {
        "capsule_name": event.capsule_name,
        "capsule_version": event.capsule_version,
        "model": event.model,
        "max_turns": event.max_turns,
        "max_session_tokens": event.max_session_tokens,
        "machine_tokens_per_day": None,
        "capabilities": list(event.capabilities),
        "tools_declared": list(event.tools),
        "tool_refresh": "compaction",
        "runtime_artifacts": [],
        "containment_declared": "advisory",
        "containment_achieved": "advisory",
        "userns_grant": None,  # where a user-namespace grant came from: none here
        "workdir_exec": False,
        "resumed_from": event.resumed_from,
        "context_id": event.context_id,
        "system_prompt_source": event.system_prompt_source,
        "system_prompt_sha256": event.system_prompt_sha256,
        "credential_source": event.credential_source,
        "gateways": [],
        "effective_grants": {},
        **formation_keys(event),
        **({"spawned_by": event.spawned_by, "delegation_id": event.delegation_id}
           if event.spawned_by is not None else {}),  # a delegated child (§9.1)
    }


def formation_keys(event: ev.SessionStarted) -> dict[str, Any]:
    """A formation member's `session_start` keys (spec murmur-newest §7.6); none otherwise."""
    if event.formation_id is None:
        return {}
    return {"formation_id": event.formation_id, "formation_member": event.formation_member,
            "formation_callees": list(event.formation_callees)}


def formation_ended(event: ev.FormationEnded) -> dict[str, Any]:
    return {"formation_id": event.formation_id}


def task_start(event: ev.TaskStarted) -> dict[str, Any]:
    return {
        "task_id": event.task_id,
        "context_id": event.context_id,
        "source": event.source,
        "origin": event.origin,
        "trust": "trusted",
        "lane": "user",
        "message_parts_bytes": event.message_parts_bytes,
    }


def a2a_task_received(event: ev.TaskStarted) -> dict[str, Any]:
    """A formation member's task as its door took it: who sent it (`caller_member`). The
    caller's message id and traceparent are not kept by the door (null)."""
    return {"task_id": event.task_id, "context_id": event.context_id, "message_id": None,
            "traceparent_from_caller": None, "caller_member": event.caller_member}


def inference(event: ev.TurnCompleted, capture: str) -> dict[str, Any]:
    """The turn's line without `message_ids` (the writer appends those, encoded once)."""
    fields: dict[str, Any] = {
        "turn": event.turn,
        "task_id": event.task_id,
        "input_tokens": event.input_tokens,
    }
    if event.output_tokens is not None:
        fields["output_tokens"] = event.output_tokens
    fields["decision"] = event.decision
    fields["stop_reason"] = event.stop_reason
    fields["tool_name"] = event.tool_name
    for key in ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens",
                "thinking_tokens"):
        if key in event.usage:
            name = f"{key}_actual" if key in ("input_tokens", "output_tokens") else key
            fields[name] = event.usage[key]
    if event.origin is not None:
        fields["origin"] = event.origin
        fields["model"] = event.model
    if capture != "none":
        for key in ("system_sha", "tools_sha", "response_sha"):
            value = getattr(event, key)
            if value is not None:
                fields[key] = value
        if event.message_shas:
            fields["message_shas"] = list(event.message_shas)
    if event.error_code is not None:
        fields["error_code"] = event.error_code
    if event.error is not None:
        fields["error"] = bounded(event.error)
    return fields


def tool_call(event: ev.ToolCallFinished, capture: str) -> tuple[str, dict[str, Any]]:
    """The line's event type (`skill_call` for a skill, else `tool_call`) and its fields."""
    if event.kind == "skill":
        return "skill_call", {
            "turn": event.turn, "task_id": event.task_id, "skill_name": event.tool_name,
            "output_bytes": event.output_bytes, "duration_ms": event.duration_ms,
            "status": event.status, "origin": "operator", "trust": "trusted",
        }
    fields: dict[str, Any] = {
        "turn": event.turn,
        "task_id": event.task_id,
        "tool_name": event.tool_name,
        "tool_call_id": event.call_id,
        "input": event.input,
        "input_bytes": event.input_bytes,
    }
    if capture == "content":
        fields["output"] = event.output
    fields.update({
        "output_bytes": event.output_bytes,
        "duration_ms": event.duration_ms,
        "status": event.status,
    })
    if event.state_effect in ("read", "mutate"):
        fields["state_effect"] = event.state_effect
    if event.resource_id:
        fields["resource_id"] = event.resource_id
    return "tool_call", fields


def shell(event: ev.ShellExecuted) -> dict[str, Any]:
    return {
        "turn": event.turn,
        "task_id": event.task_id,
        "binary": event.binary,
        "command": event.command,
        "exit_code": event.exit_code,
        "stdout_bytes": event.stdout_bytes,
        "stderr_bytes": event.stderr_bytes,
        "duration_ms": event.duration_ms,
    }


def task_failed(event: ev.TaskFailed) -> dict[str, Any]:
    fields: dict[str, Any] = {"task_id": event.task_id}
    if event.turn is not None:
        fields["turn"] = event.turn
    fields["cause"] = event.cause
    fields["reason"] = bounded(event.reason)
    return fields


def task_end(event: ev.TaskEnded) -> dict[str, Any]:
    return {
        "task_id": event.task_id,
        "exit_status": event.exit_status,
        "duration_ms": event.duration_ms,
        "turns": event.turns,
        "input_tokens": event.input_tokens,
        "output_tokens": event.output_tokens,
        "tool_calls": event.tool_calls,
        "shell_calls": event.shell_calls,
        "reopen_count": event.reopen_count,
    }


def session_end(event: ev.SessionEnded) -> dict[str, Any]:
    return {
        "total_turns": event.total_turns,
        "total_input_tokens": event.total_input_tokens,
        "total_output_tokens": event.total_output_tokens,
        "total_tool_calls": event.total_tool_calls,
        "total_shell_calls": event.total_shell_calls,
        "duration_ms": event.duration_ms,
        "exit_status": event.exit_status,
    }


def hook_dispatch_error(event: ev.HookFault) -> dict[str, Any]:
    fields: dict[str, Any] = {"hook_name": event.hook, "event": event.handler,
                              "arm": event.arm or "error"}
    if event.error:
        fields["error"] = bounded(event.error)
    return fields


def task_canceled(event: ev.TaskCanceled) -> dict[str, Any]:
    # detached shell commands are not tied to a task's cancel: that list stays empty; the
    # delegations are the live ones the cancel stopped (docs/formations.md, "Delegation")
    return {"task_id": event.task_id, "turn": event.turn, "phase": event.phase,
            "detached_work_ids": [], "delegation_ids": list(event.delegation_ids)}


def task_reopened(event: ev.TaskReopened) -> dict[str, Any]:
    return {"task_id": event.task_id, "hook_name": event.hook_name, "reason": event.reason,
            "reopen_number": event.reopen_number, "attempt_context": "continued",
            "turns_remaining": event.turns_remaining}


def compaction(event: ev.Compacted) -> dict[str, Any]:
    return {"turn": event.turn, "task_id": event.task_id,
            "tokens_before": event.tokens_before, "tokens_after": event.tokens_after}


def compaction_declined(event: ev.CompactionDeclined) -> dict[str, Any]:
    return {"turn": event.turn, "task_id": event.task_id, "tokens": event.tokens,
            "reason": event.reason}


def bounded(text: str, limit: int = ERROR_BYTES) -> str:
    """At most `limit` bytes of UTF-8, cut on a character boundary."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    return data[:limit].decode("utf-8", errors="ignore")


def call_denied(event: ev.CallDenied) -> dict[str, Any]:
    return {
        "turn": event.turn,
        "event": event.event,
        "hook_name": event.hook_name,
        "target": event.target,
        "reason": bounded(event.reason),
    }


def a2a_send(event: ev.Delegated) -> dict[str, Any]:
    """Murmur's line for a task sent through `murmur:message/send`: `task_id` and
    `context_id` are the peer's; murmur-tui injects no `traceparent` (it has no OTel)."""
    return {"peer_url": event.peer_url, "message_id": event.message_id,
            "task_id": event.peer_task_id, "context_id": event.peer_context_id,
            "traceparent": None}


def shell_detached(event: ev.ShellDetached) -> dict[str, Any]:
    return {"turn": event.turn, "task_id": event.task_id, "work_id": event.work_id,
            "binary": event.binary, "command": event.command, "grace_ms": event.grace_ms}


def shell_completed(event: ev.ShellCompleted) -> dict[str, Any]:
    return {"work_id": event.work_id, "binary": event.binary, "command": event.command,
            "exit_code": event.exit_code, "duration_ms": event.duration_ms,
            "output_path": event.output_path, "output_bytes": event.output_bytes,
            "status": event.status, "completion_task_id": event.completion_task_id}


def shell_abandoned(event: ev.ShellAbandoned) -> dict[str, Any]:
    """Murmur's four fields for work still running; the exit, path and size only for work
    that had ended (absent, never null)."""
    fields: dict[str, Any] = {"work_id": event.work_id, "binary": event.binary,
                              "command": event.command, "running_ms": event.running_ms}
    if event.exit_code is not None:
        fields["exit_code"] = event.exit_code
        fields["output_path"] = event.output_path
        fields["output_bytes"] = event.output_bytes
    if event.reason is not None:
        fields["reason"] = event.reason
    return fields


# -- delegate-task (spec murmur-newest §9.1) ---------------------------------------------------
def delegation_start(event: ev.DelegationStarted) -> dict[str, Any]:
    return {"task_id": event.task_id, "delegation_id": event.delegation_id,
            "capsule": event.capsule, "version": event.version,
            "child_session_id": event.child_session_id, "child_workdir": event.child_workdir}


def delegation(event: ev.DelegationEnded) -> dict[str, Any]:
    """The delegating call's terminal line: `completed`, `timed_out`, `failed` or `refused`."""
    return {"task_id": event.task_id, "capsule": event.capsule, "version": event.version,
            "delegation_id": event.delegation_id, "child_session_id": event.child_session_id,
            "duration_ms": event.duration_ms, "outcome": event.outcome,
            "reason": bounded(event.reason) if event.reason is not None else None}


def spawner_ended(event: ev.SpawnerEnded) -> dict[str, Any]:
    return {"spawned_by": event.spawned_by, "delegation_id": event.delegation_id}

# -- call-member and the task's continuation (spec murmur-newest §7.5, §9.1) --------------------
def member_call_start(event: ev.MemberCallStarted) -> dict[str, Any]:
    """The call was taken by the callee's door (its task id there); never the task's text."""
    return {"turn": event.turn, "task_id": event.task_id, "call_id": event.call_id,
            "member": event.member, "member_task_id": event.callee_task_id,
            "task_bytes": len(event.task.encode())}


def member_call_busy(event: ev.MemberCallBusy) -> dict[str, Any]:
    return {"task_id": event.task_id, "member": event.member, "attempt": event.attempt,
            "retry_in_ms": event.retry_in_ms}


def member_call(event: ev.MemberCallEnded) -> dict[str, Any]:
    """The call's outcome: the answer's size (never its text), the reason when it has none."""
    return {"task_id": event.task_id, "call_id": event.call_id, "member": event.member,
            "status": event.status, "duration_ms": event.duration_ms,
            "answer_bytes": len(event.answer.encode()) if event.answer is not None else None,
            "reason": bounded(event.reason) if event.reason is not None else None}


def task_continued(event: ev.TaskContinued) -> dict[str, Any]:
    return {"task_id": event.task_id, "continuation_number": event.continuation_number,
            "member_calls": list(event.member_calls), "delegations": list(event.delegations),
            "waited_ms": event.waited_ms, "turns_remaining": event.turns_remaining}

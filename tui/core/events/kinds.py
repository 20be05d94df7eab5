"""The closed sets events are reported with, shared by the loop that decides them and every
reader of the stream. Each is a `Literal`: a value outside it is a type error at the seam.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

# How a task (and the session) ended: trace `task_end` / `session_end` exit_status (spec §2).
ExitStatus: TypeAlias = Literal["ok", "failed", "canceled", "max_turns_reached",
                                "spend_ceiling_reached", "reopen_budget_exhausted",
                                "formation_ended", "no_answer"]
# Why a task attempt failed: trace `task_failed` cause (spec §2).
FailureCause: TypeAlias = Literal["driver_error", "malformed_response", "credential_rejected",
                                  "runtime_error", "input_timeout", "compaction_hook",
                                  "reopen_budget_exhausted"]
# What a driver call decided: trace `inference` decision.
TurnDecision: TypeAlias = Literal["tool_call", "end_turn", "text", "error"]
# What a task was doing when it was canceled (Murmur's task_canceled `phase`, the ones a single
# session has).
CancelPhase: TypeAlias = Literal["turn", "inference", "input", "member_call", "delegation"]
# Why a driver call failed: the task_failed causes a driver's failure can carry (spec §2).
DriverCause: TypeAlias = Literal["driver_error", "malformed_response", "credential_rejected",
                                 "runtime_error"]
# How a component call failed: out of time, out of memory, a resource limit, a trap, could not
# start, or canceled before it ran.
GuestFailureKind: TypeAlias = Literal["deadline", "memory", "limit", "trap", "start",
                                      "canceled"]
# Where a task came from: trace `task_start` source — the task file, a message to the running
# session, or the completion of a detached (background) shell command, or its loss.
TaskSource: TypeAlias = Literal["task_md", "a2a", "detached_shell", "detached_lost"]
# Who a task is for: the person, or murmur-tui itself telling the model a background command
# finished, or another capsule that sent it to the door (`x-murmur-task-origin: peer`).
TaskOrigin: TypeAlias = Literal["user", "completion", "peer"]
# How a task reached the session where `source` does not tell: typed on the supervisor's own
# prompt and run at once, or typed while a task ran and waited in the queue; or the first task
# of a session that waited for it at its door (its trace `source` is `task_md`: it is written
# to task.md as a task given at launch). None: `source` tells (the task file, a later door
# task, a completion).
TaskVia: TypeAlias = Literal["typed", "queued", "door"]
# Which kind of tool ran a call (`runtime`: one murmur-tui provides itself, as `call-member`;
# `unknown`: a remote session's call whose tool is not named).
ToolKind: TypeAlias = Literal["shell", "skill", "wasm", "runtime", "unknown"]
# How one call went, as the tool said it (`passed`, `failed`) or the host did (`error`).
ToolStatus: TypeAlias = Literal["passed", "failed", "error"]
# How one call went, as the stream reports it.
CallStatus: TypeAlias = Literal["ok", "error"]
# The stop reasons a driver's response may give that the loop acts on (spec §4.3); any other
# is recorded as given and fails the task (`malformed_response`).
StopReason: TypeAlias = Literal["end_turn", "tool_call", "max_tokens", "error"]
# The hook event a call was gated at before it ran (a denied call names it).
GateEvent: TypeAlias = Literal["on-shell", "on-tool-call"]
# Which of a command's streams a line of live output came from.
OutputStream: TypeAlias = Literal["stdout", "stderr"]

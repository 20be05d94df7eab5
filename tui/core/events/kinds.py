"""The closed sets events are reported with, shared by the loop that decides them and every
reader of the stream. Each is a `Literal`: a value outside it is a type error at the seam.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

# How a task (and the session) ended: trace `task_end` / `session_end` exit_status (spec §2).
ExitStatus: TypeAlias = Literal["ok", "failed", "canceled", "max_turns_reached",
                                "spend_ceiling_reached", "reopen_budget_exhausted"]
# Why a task attempt failed: trace `task_failed` cause (spec §2).
FailureCause: TypeAlias = Literal["driver_error", "malformed_response", "credential_rejected",
                                  "runtime_error", "input_timeout", "compaction_hook",
                                  "reopen_budget_exhausted"]
# What a driver call decided: trace `inference` decision.
TurnDecision: TypeAlias = Literal["tool_call", "end_turn", "text", "error"]
# What a task was doing when it was canceled (Murmur's task_canceled `phase`, the ones a single
# session has).
CancelPhase: TypeAlias = Literal["turn", "inference", "input"]
# Why a driver call failed: the task_failed causes a driver's failure can carry (spec §2).
DriverCause: TypeAlias = Literal["driver_error", "malformed_response", "credential_rejected",
                                 "runtime_error"]
# How a component call failed: out of time, out of memory, a resource limit, a trap, could not
# start, or canceled before it ran.
GuestFailureKind: TypeAlias = Literal["deadline", "memory", "limit", "trap", "start",
                                      "canceled"]

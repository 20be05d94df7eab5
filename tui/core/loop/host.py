"""What a running session offers its components through the host imports (`HostServices`):
asking the human, one inference for a hook, reading the conversation record, calling a tool
from a script capsule, and telling of a task a script capsule sent to a peer."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui.core import ids
from tui.core.asking.request import InputRequest, InputResponder
from tui.core.cancel import CancelToken
from tui.core.chat import compact_json, from_wit_message
from tui.core.errors import StopOnInputTimeout
from tui.core.events import vocabulary as ev
from tui.core.inference.driver import Driver, NullStream
from tui.core.inference.response import parse_response
from tui.core.loop.journal import JournaledQuestions
from tui.core.loop.report import Report
from tui.core.record.reader import EMPTY_PAGE, MessagePage, RecordReader
from tui.core.text import tokens
from tui.core.text.secrets import redact
from tui.core.text.text_rule import whole

if TYPE_CHECKING:
    from tui.core.wasm.calls import ArtifactServices

HOOK_MAX_TOKENS = 8192


@dataclass
class Host:
    """`HostServices` for one session, built with what it reaches. Tools and hooks get this
    one; a script capsule's run gets `for_script`'s, which can also call tools and manage
    artifacts (`invoke` and `artifacts` are a script capsule's alone)."""

    report: Report
    responder: InputResponder
    cancel: CancelToken
    input_timeout_secs: float | None
    model: str
    reader: RecordReader
    record_path: Path | None
    driver: Driver | None = None
    invoke: Callable[[str, str | None], Any] | None = None
    artifacts: ArtifactServices | None = None  # a script capsule's artifact manager
    questions: JournaledQuestions | None = None  # the journal (docs/tools.md, "Durable questions")

    def for_script(self, invoke: Callable[[str, str | None], Any],
                   artifacts: ArtifactServices) -> Host:
        """The same services, and what only a script capsule reaches: `tool-registry.invoke`
        (the dispatcher, built after the tools that take this host) and its artifacts."""
        return dataclasses.replace(self, invoke=invoke, artifacts=artifacts)

    def ask(self, tool_name: str, prompt: str) -> str:
        timeout = self.input_timeout_secs
        task_id = self.report.position.task_id
        prompt = redact(prompt)  # shown to the human: the dialog and stderr see no key
        deadline = int(time.time() * 1000 + timeout * 1000) if timeout else None
        questions = self.questions
        ask = questions.next(task_id or "", tool_name, prompt) if questions else None
        request_id = ask.qid if ask else ids.mint("req")
        if ask is not None and ask.before_restart and ask.deadline_ms is not None:
            deadline = ask.deadline_ms  # the deadline runs from the ask before the restart
            if ask.answer is None and deadline <= time.time() * 1000:
                raise StopOnInputTimeout(f"the question asked before the restart passed its "
                                         f"deadline ({timeout:g} s, lifecycle.input_timeout_secs)"
                                         if timeout else "the question asked before the restart "
                                         "passed its deadline")
        if questions is not None and ask is not None:
            questions.asked(ask, task_id or "", tool_name, prompt, deadline)
        if questions is not None and ask is not None and ask.answer is not None:
            answer = questions.take(ask)  # answered before the restart: not asked again
            self.report.log(f"{tool_name} asked {request_id} again after the restart; it took "
                            "the answer journaled before it")
            self.report.emit(ev.InputAnswered(task_id=task_id, request_id=request_id,
                                              answer=answer, journaled=True))
            return answer
        before = bool(ask and ask.before_restart)
        self.report.emit(ev.InputRequested(task_id=task_id, request_id=request_id,
                                           prompt=prompt, tool_name=tool_name,
                                           deadline_ms=deadline, before_restart=before))
        position = self.report.position
        was, position.phase = position.phase, "input"
        remaining = timeout
        if timeout and deadline is not None:
            remaining = max(0.001, (deadline - time.time() * 1000) / 1000)
        try:
            # typed on the screen, read from stdin, sent through the door: whole text from here
            answer = whole(self.responder.ask(
                InputRequest(request_id, prompt, tool_name, remaining, self.cancel, before)))
        except StopOnInputTimeout:
            raise StopOnInputTimeout(f"no answer came within {timeout:g} s "
                                     "(lifecycle.input_timeout_secs)") from None
        finally:
            if not self.cancel.is_set():  # canceled: the task stopped at its question
                position.phase = was
        if questions is not None and ask is not None:
            questions.answered(ask, answer)  # journaled before the tool gets it
        self.report.emit(ev.InputAnswered(task_id=self.report.position.task_id,
                                          request_id=request_id, answer=answer))
        return answer

    def run_inference(self, hook_name: str, messages: list[dict[str, Any]],
                      system_prompt: str | None, model: str | None
                      ) -> tuple[str, str, int, int]:
        assert self.driver is not None
        chosen = model or self.model
        request: dict[str, Any] = {"model": chosen, "max_tokens": HOOK_MAX_TOKENS}
        if system_prompt is not None:
            request["system"] = system_prompt
        request.update({"tools": [], "params": {},
                        "messages": [from_wit_message(m, keep_ids=False) for m in messages]})
        input_tokens = tokens.count(compact_json(request))
        position = self.report.position
        task_id, turn, origin = position.task_id or "", position.turn, f"hook:{hook_name}"
        try:
            reply = self.driver.complete(request, NullStream(), self.cancel)
            if reply.status != "passed":
                raise RuntimeError(reply.error_text)
            raw = reply.data or ""
            response = parse_response(raw)
            if response.stop_reason == "error":
                raise RuntimeError(response.error or "the driver reported an error")
        except Exception as exc:
            self.report.emit(ev.TurnCompleted(
                task_id=task_id, turn=turn, input_tokens=input_tokens, output_tokens=None,
                decision="error", stop_reason="error", tool_name=None, model=chosen,
                error=str(exc), origin=origin))
            raise
        output_tokens = tokens.count(raw)
        self.report.emit(ev.TurnCompleted(
            task_id=task_id, turn=turn, input_tokens=input_tokens, output_tokens=output_tokens,
            decision="end_turn" if response.stop_reason != "tool_call" else "tool_call",
            stop_reason=response.stop_reason, tool_name=None, model=chosen,
            content=tuple(response.content), usage=response.usage, origin=origin))
        return response.text, chosen, input_tokens, output_tokens

    def read_messages(self, cursor: str | None, limit: int) -> MessagePage:
        if self.report.position.task_id is None or self.record_path is None:
            return EMPTY_PAGE
        return self.reader.read_page(self.record_path, cursor, limit)

    def invoke_tool(self, name: str, data: str | None) -> Any:
        assert self.invoke is not None
        return self.invoke(name, data)

    def delegated(self, peer_url: str, message_id: str, peer_task_id: str,
                  peer_context_id: str, state: str) -> None:
        self.report.emit(ev.Delegated(task_id=self.report.position.task_id or "",
                                      peer_url=peer_url, message_id=message_id,
                                      peer_task_id=peer_task_id,
                                      peer_context_id=peer_context_id, state=state))

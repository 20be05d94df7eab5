"""What a running session offers its components through the host imports (`HostServices`):
asking the human, one inference for a hook, reading the conversation record, calling a tool
from a script capsule."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from tui.core import events as ev
from tui.core import ids, tokens
from tui.core.asking import InputRequest, InputTimeout
from tui.core.chat import compact_json, from_wit_message
from tui.core.inference.driver import NullStream
from tui.core.inference.response import parse_response
from tui.core.record.reader import EMPTY_PAGE, MessagePage
from tui.core.secrets import StreamRedactor, redact

if TYPE_CHECKING:
    from tui.core.session import Session

HOOK_MAX_TOKENS = 8192


class CurrentTurnStream:
    """Text a tool streams (`murmur:text/chunks`) belongs to the turn that called it; held back
    like a driver's stream while a chunk's tail could begin a key (`flush` after the call)."""

    def __init__(self, session: Session) -> None:
        self._session = session
        self._text = StreamRedactor()
        self._thinking = StreamRedactor()

    def text(self, chunk: str) -> None:
        self._send(ev.TextDelta, self._text.feed(chunk))

    def thinking(self, chunk: str) -> None:
        self._send(ev.ThinkingDelta, self._thinking.feed(chunk))

    def flush(self) -> None:
        self._send(ev.ThinkingDelta, self._thinking.flush())
        self._send(ev.TextDelta, self._text.flush())

    def _send(self, kind: type[ev.TextDelta] | type[ev.ThinkingDelta], text: str) -> None:
        session = self._session
        if text and session.current_task:
            session._emit(kind, task_id=session.current_task, turn=session.current_turn,
                          text=text)


class SessionHost:
    def __init__(self, session: Session) -> None:
        self._session = session
        self.tool_stream = CurrentTurnStream(session)

    def ask(self, tool_name: str, prompt: str) -> str:
        session = self._session
        timeout = session.capsule.lifecycle.input_timeout_secs
        request_id = ids.mint("req")
        prompt = redact(prompt)  # shown to the human: the dialog and stderr see no key
        deadline = int(time.time() * 1000 + timeout * 1000) if timeout else None
        session._emit(ev.InputRequested, task_id=session.current_task, request_id=request_id,
                      prompt=prompt, tool_name=tool_name, deadline_ms=deadline)
        try:
            answer = session.responder.ask(
                InputRequest(request_id, prompt, tool_name, timeout, session.cancel))
        except InputTimeout:
            raise InputTimeout(f"no answer came within {timeout:g} s "
                               "(lifecycle.input_timeout_secs)") from None
        session._emit(ev.InputAnswered, task_id=session.current_task, request_id=request_id,
                      answer=answer)
        return answer

    def run_inference(self, hook_name: str, messages: list[dict[str, Any]],
                      system_prompt: str | None, model: str | None
                      ) -> tuple[str, str, int, int]:
        session = self._session
        inference = session.inference
        chosen = model or inference.model
        request: dict[str, Any] = {"model": chosen, "max_tokens": HOOK_MAX_TOKENS}
        if system_prompt is not None:
            request["system"] = system_prompt
        request.update({"tools": [], "params": {},
                        "messages": [from_wit_message(m, keep_ids=False) for m in messages]})
        input_tokens = tokens.count(compact_json(request))
        report: dict[str, Any] = {
            "task_id": session.current_task or "", "turn": session.current_turn,
            "input_tokens": input_tokens, "model": chosen, "origin": f"hook:{hook_name}",
            "tool_name": None,
        }
        try:
            reply = session.driver.complete(request, NullStream(), session.cancel)
            if reply.status != "passed":
                raise RuntimeError(reply.error_text)
            raw = reply.data or ""
            response = parse_response(raw)
            if response.stop_reason == "error":
                raise RuntimeError(response.error or "the driver reported an error")
        except Exception as exc:
            session._emit(ev.TurnCompleted, output_tokens=None, decision="error",
                          stop_reason="error", error=str(exc), **report)
            raise
        output_tokens = tokens.count(raw)
        session._emit(ev.TurnCompleted, output_tokens=output_tokens,
                      decision="end_turn" if response.stop_reason != "tool_call"
                      else "tool_call", stop_reason=response.stop_reason,
                      content=tuple(response.content), usage=response.usage, **report)
        return response.text, chosen, input_tokens, output_tokens

    def read_messages(self, cursor: str | None, limit: int) -> MessagePage:
        session = self._session
        if session.current_task is None or session.record_path is None:
            return EMPTY_PAGE
        return session.reader.read_page(session.record_path, cursor, limit)

    def invoke_tool(self, name: str, data: str | None) -> Any:
        return self._session.invoke_from_script(name, data)

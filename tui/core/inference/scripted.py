"""`builtin: scripted`: replays a file of responses, streaming their text (demo and tests).

`config.script` names a YAML (or `.json`) file relative to the capsule: a list whose every item
is a response object exactly as a driver returns it (spec §4.3: `stop_reason`, `content` blocks,
optional `usage`, `error`). Responses are played in order, one per driver call. Text and thinking
blocks stream as deltas of `config.chunk_chars` characters (default 8), paced at
`config.chars_per_second` (default 0: as fast as possible). With `config.skip_played: true`, when
the conversation's last assistant message calls tools that a response not yet played calls (by
id), the script goes on after that response: a session resumed from one that died in that turn
goes on with the script where the dead session stopped, not from its start.

A text block may quote what a formation member answered: `{{member:<name>}}` becomes the text
fenced `member:<name>` in the conversation's last user message (the message a task continues
with once its `call-member` calls are answered), or `(no answer from <name>)` when it holds
none — so a scripted lead can answer with what its worker really said. Likewise
`{{tool:<call id>}}` becomes the result of that tool call as the model read it, its fence taken
off (`(no result for <call id>)` when the conversation holds none) — so a scripted member can
answer with what a person told its `ask` tool.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui.core.cancel import CancelToken
from tui.core.chat import compact_json
from tui.core.errors import DriverError, LaunchError, StopOnCancel, YamlError
from tui.core.fs.private_files import append_private
from tui.core.inference.driver import DriverReply, StreamSink
from tui.core.manifest.located_yaml import read, read_text
from tui.core.text.fence import unfenced
from tui.core.text.secrets import redact

CHUNK_CHARS = 8  # characters per streamed chunk
CHARS_PER_SECOND = 0.0  # 0: as fast as the screen takes them


class ScriptedDriver:
    def __init__(self, name: str, responses: list[dict[str, Any]], script_path: Path,
                 chunk_chars: int = CHUNK_CHARS, chars_per_second: float = CHARS_PER_SECOND,
                 requests_log: Path | None = None, skip_played: bool = False) -> None:
        self.name = name
        self.skip_played = skip_played
        self.script_path = script_path
        self._responses = responses
        # `metadata` (e.g. continuation_id) goes to the result's metadata, not the response
        self._encoded = [compact_json({k: v for k, v in response.items() if k != "metadata"})
                         for response in responses]
        self._metadata = [tuple((str(k), str(v)) for k, v in
                                (response.get("metadata") or {}).items())
                          for response in responses]
        self.requests_log = requests_log
        self._next = 0
        self._chunk = max(1, chunk_chars)
        self._delay = self._chunk / chars_per_second if chars_per_second > 0 else 0.0
        self._lock = threading.Lock()

    @classmethod
    def from_config(cls, name: str, config: Mapping[str, Any], capsule_root: Path
                    ) -> ScriptedDriver:
        script = config.get("script")
        where = f"artifacts[{name}].config"
        if not isinstance(script, str) or not script:
            raise LaunchError(f"{where}.script: the scripted driver needs the path of a "
                              "response script (relative to the capsule)")
        chunk = config.get("chunk_chars", CHUNK_CHARS)
        rate = config.get("chars_per_second", CHARS_PER_SECOND)
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
            raise LaunchError(f"{where}.chunk_chars: expected an integer >= 1, got {chunk!r}")
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or rate < 0:
            raise LaunchError(f"{where}.chars_per_second: expected a number >= 0, got {rate!r}")
        log = config.get("requests_log")
        if log is not None and (not isinstance(log, str) or not log):
            raise LaunchError(f"{where}.requests_log: expected a file path, got {log!r}")
        skip = config.get("skip_played", False)
        if not isinstance(skip, bool):
            raise LaunchError(f"{where}.skip_played: expected true or false, got {skip!r}")
        path = (capsule_root / script).resolve()
        return cls(name, load_script(path), path, chunk, float(rate),
                   (capsule_root / log).resolve() if log else None, skip)

    @property
    def remaining(self) -> int:
        return len(self._responses) - self._next

    def complete(self, request: dict[str, Any], stream: StreamSink,
                 cancel: CancelToken) -> DriverReply:
        with self._lock:
            index = self._next
            if self.skip_played:
                index = _after_played(self._responses, index, _last_calls(request))
            if index >= len(self._responses):
                raise DriverError(
                    f"scripted driver: {self.script_path} holds {len(self._responses)} "
                    f"responses and this is call {index + 1}; the script ran out")
            self._next = index + 1
            if self.requests_log is not None:  # what the driver was sent, one line a call
                append_private(self.requests_log, redact(compact_json(request)) + "\n")
        response, encoded = self._responses[index], self._encoded[index]
        if MEMBER_ANSWER.search(encoded) or TOOL_RESULT.search(encoded):
            response = _with_answers(response, _last_user_text(request), request)
            encoded = compact_json({k: v for k, v in response.items() if k != "metadata"})
        for block in response.get("content", []):
            kind = block.get("type")
            if kind == "text":
                self._stream(str(block.get("text", "")), stream.text, cancel)
            elif kind == "thinking":
                self._stream(str(block.get("text", "")), stream.thinking, cancel)
        return DriverReply(status="passed", data=encoded, metadata=self._metadata[index])

    def _stream(self, text: str, send: Any, cancel: CancelToken) -> None:
        for start in range(0, len(text), self._chunk):
            if cancel.is_set():
                raise StopOnCancel()
            send(text[start:start + self._chunk])
            if self._delay and cancel.wait(self._delay):
                raise StopOnCancel()

    def close(self) -> None:
        return None


MEMBER_ANSWER = re.compile(r"\{\{member:([a-z][a-z0-9-]{0,31})\}\}")
TOOL_RESULT = re.compile(r"\{\{tool:([A-Za-z0-9_.:-]{1,128})\}\}")


def _last_user_text(request: Mapping[str, Any]) -> str:
    messages = request.get("messages")
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(str(block.get("text", "")) for block in content
                             if isinstance(block, dict) and block.get("type") == "text") \
                if isinstance(content, list) else ""
    return ""


def _tool_text(request: Mapping[str, Any], call_id: str) -> str:
    """The text of the tool result for `call_id` in the conversation, unfenced."""
    messages = request.get("messages")
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "tool" \
                and message.get("tool_call_id") == call_id:
            content = message.get("content")
            return unfenced("\n".join(str(block.get("text", "")) for block in content
                                      if isinstance(block, dict)
                                      and block.get("type") == "text")
                            if isinstance(content, list) else str(content))
    return f"(no result for {call_id})"


def _with_answers(response: dict[str, Any], said: str,
                  request: Mapping[str, Any]) -> dict[str, Any]:
    """`response` with each `{{member:<name>}}` and `{{tool:<call id>}}` in its text blocks
    replaced (module docstring)."""
    def answer(match: re.Match[str]) -> str:
        name = match.group(1)
        found = re.search(f"<untrusted-content source=member:{re.escape(name)}>\n(.*?)\n"
                          "</untrusted-content>", said, re.DOTALL)
        return found.group(1) if found else f"(no answer from {name})"

    def result(match: re.Match[str]) -> str:
        return _tool_text(request, match.group(1))

    content = [{**block, "text": TOOL_RESULT.sub(result, MEMBER_ANSWER.sub(answer,
                                                                          block["text"]))}
               if isinstance(block, dict) and block.get("type") == "text"
               and isinstance(block.get("text"), str) else block
               for block in response.get("content", [])]
    return {**response, "content": content}


def _call_ids(content: Any) -> set[str]:
    return {str(block.get("id")) for block in content if isinstance(block, dict)
            and block.get("type") == "tool_call"} if isinstance(content, list) else set()


def _last_calls(request: Mapping[str, Any]) -> set[str]:
    """The ids of the tool calls of the request's last assistant message (none: empty)."""
    messages = request.get("messages")
    for message in reversed(messages if isinstance(messages, list) else []):
        if isinstance(message, dict) and message.get("role") == "assistant":
            return _call_ids(message.get("content"))
    return set()


def _after_played(responses: list[dict[str, Any]], index: int, last: set[str]) -> int:
    """Where the script goes on: after the first response from `index` whose tool calls are
    all in the conversation's last turn (it was played, by a session this one resumes), else
    at `index`. A turn without calls (a task's end, a follow-up's start) skips nothing."""
    if last:
        for at in range(index, len(responses)):
            ids = _call_ids(responses[at].get("content"))
            if ids and ids <= last:
                return at + 1
    return index


SCRIPT_BYTES = 64 << 20  # a JSON script (a recorded session, say) may be this big


def load_script(path: Path) -> list[dict[str, Any]]:
    """Read and check a response script; LaunchError names the file and the response."""
    try:
        data = json.loads(read_text(path, max_bytes=SCRIPT_BYTES)) if path.suffix == ".json" \
            else read(path)[0]
    except FileNotFoundError:
        raise LaunchError(f"{path}: scripted driver script not found") from None
    except OSError as exc:
        raise LaunchError(f"{path}: cannot read the scripted driver script: "
                          f"{exc.strerror or exc}") from None
    except YamlError as exc:
        raise LaunchError(str(exc)) from None
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise LaunchError(f"{path}: not valid JSON: {reason}") from None
    if not isinstance(data, list) or not data:
        raise LaunchError(f"{path}: a script is a non-empty list of response objects")
    for index, response in enumerate(data, start=1):
        problem = _response_problem(response)
        if problem:
            raise LaunchError(f"{path}: response {index}: {problem}")
    return data


def _response_problem(response: Any) -> str | None:
    if not isinstance(response, dict):
        return "is not a mapping"
    if not isinstance(response.get("stop_reason"), str):
        return "needs a string stop_reason (end_turn, tool_call, max_tokens or error)"
    content = response.get("content", [])
    if not isinstance(content, list):
        return "content must be a list of blocks"
    for number, block in enumerate(content):
        if not isinstance(block, dict) or not isinstance(block.get("type"), str):
            return f"content[{number}] is not a block with a type"
    metadata = response.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        return "metadata must be a mapping of names to strings (e.g. continuation_id)"
    return None

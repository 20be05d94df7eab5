"""The built-in HTTP drivers (`builtin: openai`, `builtin: anthropic`): httpx, SSE streaming,
retries, keys from the credential store, prompt cancel.

One call: the request is mapped to the provider's body, POSTed, and the answer streamed into
text and thinking deltas as it arrives and assembled into Murmur's response JSON. What happens
when it goes wrong:

- 408, 429, 500, 502, 503, 504, a connection that broke before any response, a stream that broke
  after `200`, or an error event mid-stream: tried again after a backoff (`retry.py`), within
  `inference.retry.max_attempts`; each retry is announced (`on_retry`) before the wait, and the
  partial answer of a broken stream is discarded.
- 401: the key is read again; if it changed (rotated in config.yaml), the call is sent once more
  with the new key; otherwise the task fails `credential_rejected`.
- any other status: the task fails, with the provider's message (keys redacted).
- cancel: the connection is shut down at once (`abortable.py`: whether the call is connecting,
  sending, waiting for the first byte or streaming), the provider sees it closed, and the call
  ends `StopOnCancel` — however the broken connection surfaced, never a failure and never
  retried.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx

from tui.core.cancel import CancelToken
from tui.core.errors import CredentialError, DriverError, ProviderError, StopOnCancel
from tui.core.inference import anthropic, openai
from tui.core.inference.abortable import abortable, watching
from tui.core.inference.credentials import Credentials, Key
from tui.core.inference.driver import DriverReply, StreamSink
from tui.core.inference.retry import RETRYABLE, RetryNotice, RetryPolicy
from tui.core.manifest.model import Gateway, HttpSettings
from tui.core.text import sse

ERROR_EXCERPT = 600


@dataclass(frozen=True)
class _Failed:
    status: int | None  # None: no HTTP status (broken connection, broken stream)
    reason: str
    retry_after: str | None = None
    retryable: bool = False


class HttpDriver:
    def __init__(self, name: str, kind: str, gateway: Gateway, credentials: Credentials,
                 retry: RetryPolicy, stream: bool = HttpSettings.stream,
                 read_timeout_s: float = HttpSettings.read_timeout_s,
                 on_retry: Callable[[RetryNotice], None] | None = None) -> None:
        self.name = name
        self.kind = kind
        self.gateway = gateway
        self.url = endpoint_url(kind, gateway.endpoint)
        self.credentials = credentials
        self.retry = retry
        self.stream = stream
        self.on_retry = on_retry
        self._where = f"artifacts[{name}].gateway.api_key"
        self._client = httpx.Client(timeout=httpx.Timeout(30.0, read=read_timeout_s),
                                    follow_redirects=False)
        abortable(self._client)
        with contextlib.suppress(DriverError):  # the first call reports it
            self._key()  # known from the start, so redaction covers it before any output

    # -- one call -------------------------------------------------------------------------
    def complete(self, request: dict[str, Any], stream: StreamSink,
                 cancel: CancelToken) -> DriverReply:
        adapter = anthropic if self.kind == "anthropic" else openai
        payload = json.dumps(adapter.body(request, self.stream)).encode("utf-8")
        key = self._key()
        rotated = False
        attempt = 1
        while True:
            if cancel.is_set():
                raise StopOnCancel()
            try:
                with watching(cancel):
                    outcome = self._attempt(payload, key, stream, cancel)
            except (DriverError, httpx.StreamError):
                if cancel.is_set():  # the cut the cancel made, read as a bad answer
                    raise StopOnCancel() from None
                raise
            if cancel.is_set():  # a connection the cancel cut, whatever it looked like
                raise StopOnCancel()
            if isinstance(outcome, dict):
                return DriverReply(status="passed", data=json.dumps(outcome))
            if outcome.status == 401:
                fresh = self._key()
                if not rotated and fresh.value != key.value:
                    rotated, key = True, fresh  # a rotated key: send the same bytes once more
                    continue
                raise DriverError(f"{self.name}: the provider rejected the key "
                                  f"({key.source}): {outcome.reason}",
                                  cause="credential_rejected", provider_status=401)
            why = self.retry.pause(attempt, outcome.status, outcome.reason, cancel,
                                   self.on_retry, outcome.retry_after) \
                if outcome.retryable else ""
            if why is not None:
                raise DriverError(f"{self.name}: {outcome.reason}{why}",
                                  provider_status=outcome.status)
            attempt += 1

    def _key(self) -> Key:
        try:
            return self.credentials.resolve(self.gateway.api_key, self.gateway.keyless,
                                            self._where)
        except CredentialError as exc:
            raise DriverError(str(exc), cause="credential_rejected") from None

    def _headers(self, key: Key) -> dict[str, str]:
        headers = {"content-type": "application/json", "accept": "text/event-stream"
                   if self.stream else "application/json"}
        if self.kind == "anthropic":
            headers["anthropic-version"] = anthropic.VERSION
        if key.value is not None:
            header, template = self.gateway.upstream_auth or (
                ("x-api-key", "{key}") if self.kind == "anthropic"
                else ("authorization", "Bearer {key}"))
            headers[header.lower()] = template.replace("{key}", key.value)
        return headers

    def _attempt(self, payload: bytes, key: Key, sink: StreamSink,
                 cancel: CancelToken) -> dict[str, Any] | _Failed:
        answered = False
        try:
            with self._client.stream("POST", self.url, content=payload,
                                     headers=self._headers(key)) as response:
                answered = True
                if response.status_code != 200:
                    return self._status(response)
                return self._read(response, sink)
        except ProviderError as exc:  # an error event mid-stream, or a stream cut short
            return _Failed(None, self.credentials.redact(f"the stream broke after the "
                                                         f"provider answered: {exc}"),
                           retryable=True)
        except httpx.HTTPError as exc:
            if cancel.is_set():
                raise StopOnCancel() from None
            what = ("the stream broke after the provider answered" if answered else
                    f"could not reach {self.url}")
            return _Failed(None, self.credentials.redact(f"{what}: {exc!r}"), retryable=True)

    def _status(self, response: httpx.Response) -> _Failed:
        body = response.read().decode("utf-8", "replace")
        message = body
        try:
            parsed = json.loads(body)
            error = parsed.get("error") if isinstance(parsed, dict) else None
            if isinstance(error, dict):
                message = str(error.get("message") or error)
            elif isinstance(error, str):
                message = error
        except ValueError:
            pass
        message = " ".join(message.split())[:ERROR_EXCERPT]
        status = response.status_code
        reason = self.credentials.redact(f"{self.url} answered {status}"
                                         + (f": {message}" if message else ""))
        if 300 <= status < 400:
            reason += f" (a redirect to {response.headers.get('location', '?')}; not followed)"
        return _Failed(status, reason, response.headers.get("retry-after"),
                       retryable=status in RETRYABLE)

    def _read(self, response: httpx.Response, sink: StreamSink) -> dict[str, Any]:
        if not self.stream:
            data = _json(response.read().decode("utf-8", "replace"))
            if self.kind == "anthropic":
                whole_a = anthropic.MessageEventAssembler(sink)
                whole_a.whole(data)
                return whole_a.response()
            whole_o = openai.ChatChunkAssembler(sink)
            whole_o.whole(data)
            return whole_o.response()
        if self.kind == "anthropic":
            assembler_a = anthropic.MessageEventAssembler(sink)
            for event in sse.events(response.iter_lines()):
                if event.event == "ping":
                    continue
                assembler_a.event(event.event, _json(event.data))
            if assembler_a.stop is None:
                raise ProviderError("the stream ended before the answer did (no stop_reason)")
            return assembler_a.response()
        assembler_o = openai.ChatChunkAssembler(sink)
        for event in sse.events(response.iter_lines()):
            if event.data.strip() == "[DONE]":
                break
            assembler_o.chunk(_json(event.data))
        if assembler_o.finish is None:
            raise ProviderError("the stream ended before the answer did (no finish_reason)")
        return assembler_o.response()

    def close(self) -> None:
        self._client.close()


def _json(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError:
        raise DriverError(f"the provider sent something that is not JSON: {text[:200]!r}",
                          cause="malformed_response") from None
    if not isinstance(value, dict):
        raise DriverError(f"the provider sent JSON that is not an object: {text[:200]!r}",
                          cause="malformed_response")
    return value


def endpoint_url(kind: str, endpoint: str) -> str:
    """The URL a call is POSTed to: the endpoint as given when it already names the API's
    path, else the API's path under it."""
    base = endpoint.rstrip("/")
    if kind == "anthropic":
        return base if base.endswith("/messages") else f"{base}/v1/messages"
    return base if base.endswith("/chat/completions") else f"{base}/chat/completions"

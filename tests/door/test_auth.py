"""The door's tokens and cards (agent-card.md "Security"): each 401/403 case with Murmur's body
and www-authenticate header, and the public and extended card of an authenticated door."""

from __future__ import annotations

import pytest

from tui.core.door.auth import OPERATOR, SCOPES, Credential, Refusal, Tokens, refusal_headers
from tui.core.door.card import CardFacts, card, methods
from tui.core.text.secrets import redact

REALM = "demo"


@pytest.fixture
def tokens() -> Tokens:
    return Tokens.mint(REALM, {"watcher": frozenset({"stream/watch", "GetTask"})},
                       loopback=True)


def header(value: str) -> list[tuple[bytes, bytes]]:
    return [(b"Authorization", value.encode())]


def token_of(tokens: Tokens, name: str) -> str:
    return next(c.token for c in tokens.credentials if c.name == name)


def test_a_loopback_door_without_authentication_is_public_and_ignores_authorization() -> None:
    public = Tokens.mint(REALM, None, loopback=True)
    assert not public.active and public.operator is None
    assert public.authenticate(header("Bearer anything")) is None
    assert public.authorize(None, "session/stop") is None


def test_a_non_loopback_door_gets_an_operator_token_anyway() -> None:
    bound = Tokens.mint(REALM, None, loopback=False)
    assert [c.name for c in bound.credentials] == [OPERATOR]
    assert bound.credentials[0].scopes == frozenset(SCOPES)


def test_tokens_are_distinct_redacted_and_never_in_a_repr(tokens: Tokens) -> None:
    values = [c.token for c in tokens.credentials]
    assert len(set(values)) == 2 and all(len(v) >= 40 for v in values)
    for credential in tokens.credentials:
        assert credential.token not in redact(f"x {credential.token} y")
        assert credential.token not in repr(credential) and credential.token not in repr(tokens)


def test_no_authorization_header_is_401_unauthenticated(tokens: Tokens) -> None:
    refusal = tokens.authenticate([(b"content-type", b"application/json")])
    assert refusal == Refusal(401, "unauthenticated", "this door requires a bearer token",
                              'Bearer realm="demo"')
    assert refusal.body() == {"error": "unauthenticated",
                              "message": "this door requires a bearer token"}
    assert refusal_headers(refusal) == [("content-type", "application/json"),
                                        ("www-authenticate", 'Bearer realm="demo"')]


INVALID = 'Bearer realm="demo", error="invalid_token"'


@pytest.mark.parametrize("value", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer ", "Token {op}",
                                   "{op}", "Bearer {op}x", "Bearer x{op}", "Bearer {upper}",
                                   "Bearer not-a-token-this-session-minted"])
def test_a_header_that_is_not_bearer_and_a_minted_token_is_401_invalid_token(
        tokens: Tokens, value: str) -> None:
    operator = tokens.operator or ""
    refusal = tokens.authenticate(header(value.format(op=operator, upper=operator.upper())))
    assert isinstance(refusal, Refusal)
    assert (refusal.status, refusal.error, refusal.authenticate) == (401, "invalid_token",
                                                                     INVALID)
    assert operator not in refusal.message


def test_two_authorization_headers_are_401_even_when_both_are_valid(tokens: Tokens) -> None:
    good = f"Bearer {tokens.operator}".encode()
    refusal = tokens.authenticate([(b"authorization", good), (b"Authorization", good)])
    assert isinstance(refusal, Refusal) and refusal.error == "invalid_token"


@pytest.mark.parametrize("scheme", ["Bearer", "bearer", "BEARER", "bEaReR"])
def test_the_scheme_matches_in_any_case_the_token_exactly(tokens: Tokens, scheme: str) -> None:
    found = tokens.authenticate(header(f"{scheme} {token_of(tokens, 'watcher')}"))
    assert isinstance(found, Credential) and found.name == "watcher"


def test_a_credential_outside_its_scopes_is_403_naming_credential_and_scope(
        tokens: Tokens) -> None:
    watcher = tokens.authenticate(header(f"Bearer {token_of(tokens, 'watcher')}"))
    assert isinstance(watcher, Credential)
    assert tokens.authorize(watcher, "stream/watch") is None
    assert tokens.authorize(watcher, "GetTask") is None
    assert tokens.authorize(watcher, "GetExtendedAgentCard") is None  # needs no scope
    refusal = tokens.authorize(watcher, "SendMessage")
    assert refusal == Refusal(
        403, "insufficient_scope", "credential 'watcher' does not reach SendMessage",
        'Bearer realm="demo", error="insufficient_scope", scope="SendMessage"')
    for method in ("SendStreamingMessage", "CancelTask", "session/stop"):
        refused = tokens.authorize(watcher, method)
        assert refused is not None and refused.status == 403 and method in refused.message


def test_the_operator_reaches_every_method(tokens: Tokens) -> None:
    operator = tokens.authenticate(header(f"Bearer {tokens.operator}"))
    assert isinstance(operator, Credential) and operator.name == OPERATOR
    assert all(tokens.authorize(operator, method) is None for method in SCOPES)


# -- cards ---------------------------------------------------------------------------------------
FACTS = CardFacts(name="demo", version="1.0.0", url="http://127.0.0.1:41873",
                  session_id="ses_0190", takes_tasks=True, authenticated=False,
                  tools=("bash",), shell=True, network=True)


def test_the_public_card_is_door_c() -> None:
    body = card(FACTS)
    assert body["supportedInterfaces"] == [{"url": "http://127.0.0.1:41873",
                                            "protocolBinding": "JSONRPC",
                                            "protocolVersion": "1.0"}]
    assert body["description"] == "Murmur capsule demo 1.0.0"
    assert (body["securitySchemes"], body["securityRequirements"]) == ({}, [])
    door, capsule, stream = body["capabilities"]["extensions"]
    assert door["params"] == {"methods": ["SendMessage", "SendStreamingMessage", "stream/watch",
                                          "GetTask", "CancelTask", "session/stop"],
                              "peerTasks": False}
    assert capsule["params"] == {"sessionId": "ses_0190", "tools": ["bash"], "shell": True,
                                 "network": True, "planes": []}
    assert "lagged" in stream["params"]["frames"]
    assert body["capabilities"]["extendedAgentCard"] is False


def test_an_authenticated_door_hides_the_session_until_the_extended_card() -> None:
    facts = CardFacts(**{**FACTS.__dict__, "authenticated": True})
    public, extended = card(facts), card(facts, extended=True)
    assert "ses_0190" not in str(public) and "ses_0190" in str(extended)
    assert [e["uri"].rsplit("#")[1] for e in public["capabilities"]["extensions"]] == [
        "murmur-door-v1", "murmur-stream-v1"]
    assert methods(facts)[-1] == "GetExtendedAgentCard"
    assert public["capabilities"]["extendedAgentCard"] is True
    assert public["securityRequirements"] == [{"schemes": {"bearer": {"list": []}}}]
    assert public["skills"][0]["securityRequirements"] == [
        {"schemes": {"bearer": {"list": ["SendMessage"]}}},
        {"schemes": {"bearer": {"list": ["SendStreamingMessage"]}}}]


def test_a_door_that_takes_no_tasks_lists_no_task_methods_and_no_skill() -> None:
    facts = CardFacts(**{**FACTS.__dict__, "takes_tasks": False})
    assert methods(facts) == ["stream/watch", "GetTask", "CancelTask", "session/stop"]
    assert card(facts)["skills"] == [] and card(facts)["capabilities"]["streaming"] is False

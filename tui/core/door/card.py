"""The door's agent card (agent-card.md, the A2A v1.0 card Murmur's newest door serves): the
public card, and for a door with tokens the public card without the capsule extension plus
the extended card that carries it.

A session with a name (`launch --name`, `R` in the fleet: tui/core/names.py) carries it in one
more extension, murmur-tui's own (`NAME_URI`, `required: false`, params `{"name": …}`), last
and beside the capsule extension — on the public card of a public door, on the extended card
of a door that authenticates, as the session id is. The A2A card has no other place for it: a
new top-level key would break a strict `lf.a2a.v1.AgentCard` parser, and an extension a client
does not know is one it ignores (A2A "Extensions"; Murmur finds its own by uri). A session
with no name serves Murmur's card exactly."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DOOR_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-door-v1"
CAPSULE_URI = "https://docs.murmur.nexus/reference/agent-card/#murmur-capsule-v1"
STREAM_URI = "https://docs.murmur.nexus/reference/streaming-protocol/#murmur-stream-v1"
NAME_URI = "urn:murmur-tui:agent-card:session-name-v1"
FRAMES = ("status", "artifact", "text", "thinking", "tool-call-started", "tool-call-progress",
          "gap", "lagged", "connection-ack", "capsule-closed", "error")
MODES = ["text/plain", "application/json"]


@dataclass(frozen=True)
class CardFacts:
    name: str
    version: str
    url: str
    session_id: str
    takes_tasks: bool  # lifecycle.task_acceptance is single or queue
    authenticated: bool
    tools: tuple[str, ...]  # the installed artifacts the model can call (never shell binaries)
    shell: bool
    network: bool
    peer_tasks: bool = False  # exports.peer_tasks.accept: it takes tasks other capsules send
    session_name: str | None = None  # the session's name (tui/core/names.py), None: none


def methods(facts: CardFacts) -> list[str]:
    """The door extension's methods, in Murmur's order."""
    names = ["SendMessage", "SendStreamingMessage"] if facts.takes_tasks else []
    names += ["stream/watch", "GetTask", "CancelTask", "session/stop"]
    if facts.authenticated:
        names.append("GetExtendedAgentCard")
    return names


def _extension(uri: str, description: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"uri": uri, "description": description, "required": False, "params": params}


def _door(facts: CardFacts) -> dict[str, Any]:
    return _extension(DOOR_URI, "Every JSON-RPC method this door answers, including the murmur "
                      "methods stream/watch and session/stop, which are not A2A methods, and "
                      "whether it accepts tasks from peer capsules.",
                      {"methods": methods(facts), "peerTasks": facts.peer_tasks})


def _capsule(facts: CardFacts) -> dict[str, Any]:
    return _extension(CAPSULE_URI, "The session answering this address and what the capsule "
                      "may do. Served only to authenticated callers once the door "
                      "authenticates.",
                      {"sessionId": facts.session_id, "tools": list(facts.tools),
                       "shell": facts.shell, "network": facts.network, "planes": []})


def frames(facts: CardFacts) -> list[str]:
    """Every event type this door's streams can write, in Murmur's order: `error` is written
    only on SendStreamingMessage, which a door that takes no task does not serve (the ID
    tables HTTP_FRAMES)."""
    return [f for f in FRAMES if f != "error" or facts.takes_tasks]


def _stream(facts: CardFacts) -> dict[str, Any]:
    return _extension(STREAM_URI, "Every server-sent event type this capsule's "
                      "SendStreamingMessage and stream/watch connections can write. Only "
                      "status and artifact correspond to A2A events; the others are murmur "
                      "frames.", {"frames": frames(facts)})


def _name(facts: CardFacts) -> dict[str, Any]:
    return _extension(NAME_URI, "The session's name, a person's word for it beside its id "
                      "(murmur-tui). A client that does not know this extension ignores it.",
                      {"name": facts.session_name})


def card(facts: CardFacts, extended: bool = False) -> dict[str, Any]:
    """The public card (`extended`: the authenticated door's extended card)."""
    extensions = [_door(facts)]
    says_session = not facts.authenticated or extended
    if says_session:
        extensions.append(_capsule(facts))
    extensions.append(_stream(facts))
    if says_session and facts.session_name:
        extensions.append(_name(facts))
    skill: dict[str, Any] = {
        "id": "task", "name": "Run a task",
        "description": "Runs one task given as a text message and reports its outcome.",
        "tags": ["task"]}
    body: dict[str, Any] = {
        "name": facts.name,
        "description": f"Murmur capsule {facts.name} {facts.version}",
        "version": facts.version,
        "supportedInterfaces": [{"url": facts.url, "protocolBinding": "JSONRPC",
                                 "protocolVersion": "1.0"}],
        "capabilities": {"streaming": facts.takes_tasks, "pushNotifications": False,
                         "extendedAgentCard": facts.authenticated, "extensions": extensions},
        "securitySchemes": {},
        "securityRequirements": [],
        "defaultInputModes": list(MODES),
        "defaultOutputModes": list(MODES),
        "skills": [skill] if facts.takes_tasks else [],
    }
    if facts.authenticated:
        body["securitySchemes"] = {"bearer": {"httpAuthSecurityScheme": {
            "scheme": "Bearer", "description": "A token this capsule's runtime mints at launch "
            "and accepts until the session ends."}}}
        body["securityRequirements"] = [{"schemes": {"bearer": {"list": []}}}]
        skill["securityRequirements"] = [
            {"schemes": {"bearer": {"list": ["SendMessage"]}}},
            {"schemes": {"bearer": {"list": ["SendStreamingMessage"]}}}]
    return body

"""`murmur:artifact-manager/manage@0.1.0`, for script capsules: list, describe, diagnostics and
pull answer from the session's artifacts (`artifact_store.SessionArtifacts`, reached through
the session's host services); search and remove answer as Murmur does: not implemented."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tui.core.errors import TrapGuest
from tui.core.wasm.calls import ArtifactServices, current

MANAGE = "murmur:artifact-manager/manage@0.1.0"
FUNCTIONS = ("list", "describe", "search", "pull", "remove", "diagnostics")


def _artifacts() -> ArtifactServices:
    context = current()
    if context.kind != "capsule":
        raise TrapGuest(f"{MANAGE} is available to script capsules, not to a {context.kind} "
                        f"({context.artifact})")
    artifacts = context.services.artifacts if context.services is not None else None
    if artifacts is None:
        raise TrapGuest(f"{MANAGE}: no session is running")
    return artifacts


def list_artifacts() -> list[Any]:
    return list(_artifacts().list())


def describe(name: str) -> Any:
    return _artifacts().describe(name)


def search(query: str) -> str:
    _artifacts()
    return f"not implemented (query: {query})"


def pull(name: str, version: str) -> Any:
    return _artifacts().pull(name, version)


def remove(name: str) -> str:
    _artifacts()
    return f"not implemented (name: {name})"


def diagnostics() -> Any:
    return _artifacts().diagnostics()


HOST_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "list": list_artifacts, "describe": describe, "search": search, "pull": pull,
    "remove": remove, "diagnostics": diagnostics}

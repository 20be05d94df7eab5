"""Manifest forms of earlier Murmur releases, read as the newest form says the same thing.

Murmur v0.2.0 put the provider under `inference:` — `inference.endpoint` (required for
`transport: http`) and `inference.api_key` (a literal, or `${NAME}`; empty or absent: no key),
and its driver called the provider itself (snap:v0.2.0 `runtime_manifest.rs`,
`README.md`). Newer releases (v0.11.0, the newest) set both on the driver's `artifacts:` entry,
as `gateway: {endpoint, api_key}`, and refuse the older keys with `E-MAN-003`. murmur-tui reads
the older form as that gateway, with a warning naming the newer form, so a v0.2.0 capsule
launches unchanged (docs/manifest.md).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from urllib.parse import urlsplit

from tui.core.manifest.artifact_entry import MAX_KEY_CHARS, endpoint_problem
from tui.core.manifest.model import KEY_REFERENCE, Artifact, Gateway
from tui.core.manifest.yaml_section import Section
from tui.core.text.secrets import remember

OLDER_FORM = "W-MAN-GATEWAY"  # murmur-tui's own warning code: Murmur refuses the form instead
# The one provider whose API keys go in `x-api-key`: a v0.2.0 driver sent it there itself
# (murmur-driver-anthropic); through the gateway the key is added for it.
HEADER_BY_HOST = {"api.anthropic.com": ("x-api-key", "{key}")}


@dataclass(frozen=True)
class OlderEndpoint:
    """`inference.endpoint` / `inference.api_key` as a v0.2.0 manifest gives them."""

    endpoint: str
    api_key: str | None  # None: no key (v0.2.0 sent none)
    line: int | None


def read_older_endpoint(section: Section) -> OlderEndpoint | None:
    """The v0.2.0 keys of an `inference:` block, checked as the gateway's are; None when the
    block has neither."""
    if not section.has("endpoint") and not section.has("api_key"):
        return None
    endpoint = section.string("endpoint", "")
    api_key = section.string("api_key", None)
    api_key = api_key.strip() or None if api_key is not None else None
    if not section.has("endpoint"):
        section.problem("api_key", "is Murmur v0.2.0's key, read with inference.endpoint "
                        "beside it; set both as gateway.endpoint and gateway.api_key on the "
                        "driver's artifacts: entry instead", "E-MAN-003")
        return None
    if endpoint and (problem := endpoint_problem(endpoint)):
        section.problem("endpoint", problem, "E-MAN-003")
    if api_key is not None and not KEY_REFERENCE.match(api_key):
        if len(api_key) > MAX_KEY_CHARS:
            section.problem("api_key", f"is {len(api_key)} characters long; no provider key "
                            f"is longer than {MAX_KEY_CHARS}")
            api_key = None
        else:
            remember(api_key)  # a literal key: redacted from every output from the start
    return OlderEndpoint(endpoint, api_key, section.line_of("endpoint"))


def as_gateway(top: Section, older: OlderEndpoint, artifacts: tuple[Artifact, ...],
               driver: str) -> tuple[Artifact, ...]:
    """`artifacts` with the driver's entry given the gateway the older keys describe, and a
    warning naming the newer form. An entry with a gateway of its own is refused: the
    endpoint would be said twice."""
    entry = next((item for item in artifacts if item.name == driver), None)
    if entry is None or entry.runtime != "driver":
        return artifacts  # the driver check names what is wrong with the reference
    where = f"artifacts[{entry.name}].gateway"
    if entry.gateway is not None:
        top.report.problem(older.line, "inference.endpoint", f"is Murmur v0.2.0's place for "
                           f"the provider, and {where} names one too; keep {where} (where "
                           "newer releases read it) and remove inference.endpoint and "
                           "inference.api_key", "E-MAN-003")
        return artifacts
    host = urlsplit(older.endpoint).hostname or ""
    gateway = Gateway(endpoint=older.endpoint, api_key=older.api_key,
                      keyless=older.api_key is None,
                      upstream_auth=HEADER_BY_HOST.get(host) if entry.builtin is None else None)
    top.report.warn(older.line, "inference.endpoint",
                    "inference.endpoint and inference.api_key are Murmur v0.2.0's form; read as "
                    f"{where}.endpoint and {where}.api_key, the form newer Murmur releases "
                    "read (v0.11.0 refuses the older keys with E-MAN-003)", OLDER_FORM)
    return tuple(dataclasses.replace(item, gateway=gateway) if item is entry else item
                 for item in artifacts)

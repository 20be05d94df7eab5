"""One `artifacts:` entry -> `Artifact`: its name, runtime, source or built-in driver (whose
`config` is checked here, so a bad value names its line), gateway and capability grant."""

from __future__ import annotations

import json
import re
from typing import Any

from tui.core.manifest.capabilities import read_capabilities
from tui.core.manifest.model import (
    BUILTIN_DRIVERS,
    HTTP_BUILTINS,
    KEY_REFERENCE,
    OVERFLOWS,
    RUNTIMES,
    Artifact,
    BuiltinDriver,
    Gateway,
    HttpSettings,
    Runtime,
)
from tui.core.manifest.problems import describe
from tui.core.manifest.yaml_section import Section, one_of
from tui.core.text.secrets import remember
from tui.core.text.segments import segment_problem

_ARTIFACT_NAME = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,98}[a-z0-9])?$")
MAX_KEY_CHARS = 4096  # a literal api_key longer than this is no provider's key
MAX_CONFIG_BYTES = 65536  # an entry's config, as JSON
_DEFAULT_RUNTIME: Runtime = "tool"  # an entry that names no runtime


def read_artifact(item: Section) -> Artifact:
    name = item.string("name", "", required=True)
    if name and not _ARTIFACT_NAME.match(name):
        item.problem("name", f"{describe(name)} is not an artifact name (lowercase letters, "
                     "digits and '-', at most 100, not starting or ending with '-')")
    runtime = item.choice("runtime", _DEFAULT_RUNTIME, RUNTIMES)
    source = item.file_path("source", Artifact.source)
    builtin = _read_builtin(item, runtime)
    version = item.string("version", None, required=source is None and builtin is None)
    if version and (problem := segment_problem(version)):
        item.problem("version", f"{describe(version)} {problem}, so it cannot name the "
                     "artifact's folder in a store (.murmur/artifacts/<name>/<version>)")
    config = item.mapping("config")
    if config:
        size = len(json.dumps(config, separators=(",", ":"), ensure_ascii=False).encode())
        if size > MAX_CONFIG_BYTES:
            item.problem("config", f"is {size} bytes as JSON; the limit is {MAX_CONFIG_BYTES}",
                         "E-CAP-010")
    http = Artifact.http
    refused_config = config is None and item.raw("config") is not None and item.has("config")
    if builtin is not None and runtime == "driver" and not refused_config:
        http = _read_builtin_config(item, builtin, config or {})
    gateway = _read_gateway(item.section("gateway"))
    caps_section = item.section("capabilities")
    capabilities = (
        read_capabilities(caps_section, capsule_wide=False, hook=runtime == "hook")
        if caps_section is not None else Artifact.capabilities
    )
    on_overflow = item.choice("on_overflow", Artifact.on_overflow, OVERFLOWS)
    item.mark_known("local_source", "prompt_payload")
    item.finish()
    return Artifact(
        name=name, version=version, runtime=runtime, line=item.line, source=source,
        builtin=builtin, config=config or {}, gateway=gateway, capabilities=capabilities,
        on_overflow=on_overflow, http=http,
    )


def _read_builtin(item: Section, runtime: str) -> BuiltinDriver | None:
    """`builtin:`, narrowed to a built-in driver's name; None when absent or refused."""
    value = item.string("builtin", None)
    if value is None:
        return None
    builtin = one_of(value, BUILTIN_DRIVERS)
    if builtin is None:
        item.problem("builtin", f"{describe(value)} is not a built-in driver "
                     f"(built-in: {', '.join(BUILTIN_DRIVERS)})")
    if runtime != "driver":
        item.problem("builtin", "only a runtime: driver entry can be built in")
    return builtin


def _read_builtin_config(item: Section, builtin: BuiltinDriver,
                         data: dict[str, Any]) -> HttpSettings | None:
    """A built-in driver's `config`, checked here so a bad value names its line: the HTTP
    drivers' `stream` and `read_timeout_s`, the scripted driver's script and pacing (the
    scripted driver applies its own defaults; here they are only checked)."""
    config = Section(item.report, item.key_path("config"), data, item.node_of("config"),
                     item.line_of("config"))
    settings = None
    if one_of(builtin, HTTP_BUILTINS) is not None:
        settings = HttpSettings(
            stream=config.boolean("stream", HttpSettings.stream),
            read_timeout_s=config.number("read_timeout_s", HttpSettings.read_timeout_s,
                                         check=lambda v: v > 0,
                                         expectation="a number of seconds > 0"))
    else:
        config.file_path("script", None, required=True)
        config.integer("chunk_chars", None, minimum=1)
        config.number("chars_per_second", None, check=lambda v: v >= 0,
                      expectation="a number >= 0")
        config.file_path("requests_log", None)
        config.boolean("skip_played", False)
    config.finish()
    return settings


def _read_gateway(section: Section | None) -> Gateway | None:
    if section is None:
        return None
    endpoint = section.string("endpoint", "", required=True)
    if endpoint and (problem := endpoint_problem(endpoint)):
        section.problem("endpoint", problem, "E-MAN-003")
    api_key = section.string("api_key", Gateway.api_key)
    if api_key is not None and not KEY_REFERENCE.match(api_key):
        if len(api_key) > MAX_KEY_CHARS:
            section.problem("api_key", f"is {len(api_key)} characters long; no provider key "
                            f"is longer than {MAX_KEY_CHARS}")
            api_key = Gateway.api_key
        else:
            remember(api_key)  # a literal key: redacted from every output from the start
    keyless = section.boolean("keyless", Gateway.keyless)
    upstream = Gateway.upstream_auth
    if (auth := section.section("upstream_auth")) is not None:
        header = auth.string("header", "", required=True)
        value = auth.string("value", "{key}")
        if "{key}" not in value:
            auth.problem("value", "must contain {key}, where the key goes")
        auth.finish()
        upstream = (header, value)
    section.finish()
    return Gateway(endpoint=endpoint, api_key=api_key, keyless=keyless, upstream_auth=upstream)


def endpoint_problem(endpoint: str) -> str | None:
    """Why a gateway endpoint is refused (spec §4.4), or None: https to any host, http only to
    loopback; no user info, no ${…}, no query or fragment."""
    from urllib.parse import urlsplit

    if "${" in endpoint:
        return "must not contain ${…} (keys go in api_key)"
    try:
        parts = urlsplit(endpoint)
        _ = parts.port
    except ValueError as exc:
        return f"{describe(endpoint)} is not a valid URL ({exc})"
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return f"{describe(endpoint)} is not an http(s) URL"
    if parts.username or parts.password:
        return "must not carry a user or password (keys go in api_key)"
    if parts.query or parts.fragment:
        return "must not have a query or a fragment"
    if parts.scheme == "http" and parts.hostname not in ("localhost", "127.0.0.1", "::1"):
        return f"http is allowed only to loopback (localhost, 127.0.0.1, ::1), not {parts.hostname}"
    return None

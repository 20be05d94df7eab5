"""Typed access to a YAML mapping that reports problems with the file, line and key path.

A `Section` walks the node tree next to the data `located_yaml.load` built, so every value
keeps the line it came from; its getters collect problems in a `ProblemReport` instead of stopping
at the first one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import yaml

from tui.core.manifest.problems import ProblemReport, describe, node_line, show_key
from tui.core.text.segments import MAX_NAME_BYTES

T = TypeVar("T")
C = TypeVar("C", bound=str)  # one of a closed set of strings (a Literal)
MAX_INTEGER = 2**63 - 1  # what a 64-bit field downstream (wasmtime, JSON readers) can take
MAX_PATH_BYTES = 4095  # Linux PATH_MAX less the terminating NUL


def path_problem(value: str) -> str | None:
    """Why `value` cannot be a file path, or None."""
    if not value:
        return "is empty; expected a file path"
    if "\x00" in value:
        return "holds a NUL byte, which no file path can"
    size = len(value.encode("utf-8", errors="surrogatepass"))
    if size > MAX_PATH_BYTES:
        return f"is a path of {size} bytes; the most a path can be is {MAX_PATH_BYTES}"
    longest = max(len(part.encode("utf-8", errors="surrogatepass"))
                  for part in value.split("/"))
    if longest > MAX_NAME_BYTES:
        return (f"has a file name of {longest} bytes in it; the most a name can be is "
                f"{MAX_NAME_BYTES}")
    return None


def json_problem(value: Any, node: yaml.Node | None, path: str,
                 line: int | None) -> tuple[int | None, str, str] | None:
    """(line, key path, message) of the first part of `value` that is not JSON data, or None.
    Free-form blocks (`config`, `params`) reach components and drivers as JSON."""
    here = node_line(node) or line
    if value is None or isinstance(value, (bool, str)):
        return None
    if isinstance(value, int):
        return None if -(2**63) <= value < 2**64 else (
            here, path, f"{describe(value)} is beyond the integers JSON readers take (64 bits)")
    if isinstance(value, float):
        return None if math.isfinite(value) else (
            here, path, "expected a finite number (JSON has no infinity or NaN), got "
            f"{describe(value)}")
    if isinstance(value, list):
        nodes: list[yaml.Node | None] = (
            list(node.value) if isinstance(node, yaml.SequenceNode)
            and len(node.value) == len(value) else [None] * len(value))
        for index, (item, item_node) in enumerate(zip(value, nodes, strict=True)):
            found = json_problem(item, item_node, f"{path}[{index}]", here)
            if found:
                return found
        return None
    if isinstance(value, dict):
        pairs: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    pairs.setdefault(str(key_node.value), (key_node, value_node))
        for key, item in value.items():
            if not isinstance(key, str):
                return here, path, f"keys must be strings; {describe(key)} is not"
            key_node, item_node = pairs.get(key, (None, None))
            found = json_problem(item, item_node, f"{path}.{show_key(key)}",
                                 node_line(key_node) or here)
            if found:
                return found
        return None
    return (here, path, "expected JSON data (text, numbers, true/false, null, lists, "
            f"mappings), got {describe(value)}")


def one_of(value: Any, choices: tuple[C, ...]) -> C | None:
    """The choice `value` is, or None: narrows a value read from YAML to a Literal type."""
    return next((choice for choice in choices if choice == value and isinstance(value, str)),
                None)


class Missing:
    """Marker for an absent key."""


MISSING = Missing()


class Section:
    """A YAML mapping at a key path, with typed getters that report problems to `report`.

    Every key read through a getter (or named in `known`) counts as known; `finish()` warns
    about the rest (`W-SEC-019`: unknown keys are warned, never refused).
    """

    def __init__(
        self,
        report: ProblemReport,
        path: str,
        data: dict[Any, Any],
        node: yaml.Node | None,
        line: int | None = None,
    ) -> None:
        self.report = report
        self.path = path
        self.data = data
        self.line = line if line is not None else node_line(node)
        self._key_lines: dict[str, int | None] = {}
        self._value_nodes: dict[str, yaml.Node] = {}
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key = str(key_node.value)
                    self._key_lines.setdefault(key, node_line(key_node))
                    self._value_nodes.setdefault(key, value_node)
        self._used: set[Any] = set()

    # -- locating ---------------------------------------------------------------------------
    def key_path(self, key: Any) -> str:
        shown = show_key(key)
        return f"{self.path}.{shown}" if self.path else shown

    def line_of(self, key: Any) -> int | None:
        return self._key_lines.get(str(key), self.line)

    def node_of(self, key: str) -> yaml.Node | None:
        return self._value_nodes.get(key)

    def has(self, key: str) -> bool:
        return key in self.data

    def problem(self, key: Any, message: str, code: str | None = None) -> None:
        self.report.problem(self.line_of(key), self.key_path(key), message, code)

    def warn(self, key: Any, message: str, code: str | None = None) -> None:
        self.report.warn(self.line_of(key), self.key_path(key), message, code)

    def mark_known(self, *keys: str) -> None:
        self._used.update(keys)

    def _quote_hint(self, key: str) -> str:
        """For a plain scalar YAML read as a number, date or boolean: how to make it text."""
        node = self.node_of(key)
        if (isinstance(node, yaml.ScalarNode) and node.style is None and node.value
                and len(node.value) <= 40 and not node.tag.endswith((":str", ":null"))):
            return f' (quote it: {key}: "{node.value}")'
        return ""

    # -- typed getters ----------------------------------------------------------------------
    def raw(self, key: str) -> Any:
        self._used.add(key)
        return self.data.get(key, MISSING)

    def _required(self, key: str, what: str = "") -> None:
        self.report.problem(self.line, self.key_path(key), f"is required{what} but missing")

    def string(self, key: str, default: T, *, required: bool = False) -> str | T:
        value = self.raw(key)
        if isinstance(value, Missing):
            if required:
                self._required(key)
            return default
        if isinstance(value, str):
            return value
        self.problem(key, f"expected a string, got {describe(value)}{self._quote_hint(key)}")
        return default

    def file_path(self, key: str, default: T, *, required: bool = False) -> str | T:
        """A string naming a file or folder (no NUL, not empty, within the system's limits)."""
        value = self.string(key, None, required=required)
        if value is None:
            return default
        problem = path_problem(value)
        if problem:
            self.problem(key, problem)
            return default
        return value

    def integer(
        self, key: str, default: T, *, minimum: int | None = None, required: bool = False,
        maximum: int = MAX_INTEGER,
    ) -> int | T:
        value = self.raw(key)
        if isinstance(value, Missing):
            if required:
                self._required(key)
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(key, f"expected an integer, got {describe(value)}")
            return default
        if minimum is not None and value < minimum:
            self.problem(key, f"expected an integer >= {minimum}, got {describe(value)}")
            return default
        if value > maximum:
            self.problem(key, f"expected an integer <= {maximum}, got {describe(value)}")
            return default
        return value

    def number(
        self,
        key: str,
        default: T,
        *,
        check: Callable[[float], bool] | None = None,
        expectation: str = "a number",
    ) -> float | T:
        value = self.raw(key)
        if isinstance(value, Missing):
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            self.problem(key, f"expected {expectation}, got {describe(value)}")
            return default
        try:
            number = float(value)
        except OverflowError:
            number = math.inf
        if not math.isfinite(number):
            self.problem(key, f"expected {expectation} (a finite one), got {describe(value)}")
            return default
        if check is not None and not check(number):
            self.problem(key, f"expected {expectation}, got {describe(value)}")
            return default
        return number

    def boolean(self, key: str, default: T, *, required: bool = False) -> bool | T:
        value = self.raw(key)
        if isinstance(value, Missing):
            if required:
                self._required(key, " (true or false)")
            return default
        if isinstance(value, bool):
            return value
        self.problem(key, f"expected true or false, got {describe(value)}")
        return default

    def choice(self, key: str, default: C, choices: tuple[C, ...]) -> C:
        """One of `choices` (a Literal's `get_args`), returned as that choice."""
        value = self.raw(key)
        if isinstance(value, Missing):
            return default
        picked = one_of(value, choices)
        if picked is not None:
            return picked
        self.problem(key, f"expected one of {', '.join(choices)}; got {describe(value)}")
        return default

    def strings(self, key: str, *, allow_empty: bool = True) -> tuple[str, ...] | None:
        """A list of strings; None when absent."""
        value = self.raw(key)
        if isinstance(value, Missing) or value is None:
            return None
        if not isinstance(value, list):
            self.problem(key, f"expected a list of strings, got {describe(value)}")
            return None
        bad = [item for item in value if not isinstance(item, str)]
        if bad:
            self.problem(key, f"expected a list of strings; {describe(bad[0])} is not a string")
            return None
        if not value and not allow_empty:
            self.problem(key, "must not be an empty list (remove the block instead)")
            return None
        return tuple(value)

    def mapping(self, key: str) -> dict[str, Any] | None:
        """A free-form mapping of JSON data (string keys); None when absent."""
        value = self.raw(key)
        if isinstance(value, Missing) or value is None:
            return None
        if not isinstance(value, dict):
            self.problem(key, f"expected a mapping, got {describe(value)}")
            return None
        found = json_problem(value, self.node_of(key), self.key_path(key), self.line_of(key))
        if found is not None:
            line, path, message = found
            self.report.problem(line, path, message)
            return None
        return value

    def section(self, key: str) -> Section | None:
        """A nested mapping read with the same rules; None when absent."""
        value = self.raw(key)
        if isinstance(value, Missing) or value is None:
            return None
        if not isinstance(value, dict):
            self.problem(key, f"expected a mapping, got {describe(value)}")
            return None
        return Section(self.report, self.key_path(key), value, self.node_of(key), self.line_of(key))

    def items(self, key: str) -> Iterator[Section]:
        """The mappings of a list of mappings; bad items are reported and skipped."""
        value = self.raw(key)
        if isinstance(value, Missing) or value is None:
            return
        if not isinstance(value, list):
            self.problem(key, f"expected a list, got {describe(value)}")
            return
        node = self.node_of(key)
        item_nodes: list[yaml.Node | None] = (
            list(node.value) if isinstance(node, yaml.SequenceNode)
            and len(node.value) == len(value) else [None] * len(value))
        for index, (item, item_node) in enumerate(zip(value, item_nodes, strict=True)):
            path = f"{self.key_path(key)}[{index}]"
            if not isinstance(item, dict):
                self.report.problem(
                    node_line(item_node) or self.line_of(key), path,
                    f"expected a mapping, got {describe(item)}",
                )
                continue
            yield Section(self.report, path, item, item_node)

    def finish(self) -> None:
        """Warn about every key no getter read."""
        for key in self.data:
            if key not in self._used:
                self.warn(key, "unknown key, ignored", "W-SEC-019")

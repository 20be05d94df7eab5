"""YAML read with the line of every key, and typed field access that reports problems.

`murmur.yaml` errors must name the file, the key path and the line. PyYAML's composed node tree
carries marks; this module walks the node tree next to the constructed data so every value keeps
the line it came from, and collects problems instead of stopping at the first one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")


@dataclass(frozen=True)
class Problem:
    """One thing wrong (or worth a warning) in a YAML file."""

    file: Path
    line: int | None
    key: str
    message: str
    code: str | None = None

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line else str(self.file)
        key = f" {self.key}:" if self.key else ""
        code = f" [{self.code}]" if self.code else ""
        return f"{where}:{key} {self.message}{code}"


@dataclass
class Report:
    """Problems (refusals) and warnings collected while reading one file."""

    file: Path
    problems: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)

    def problem(self, line: int | None, key: str, message: str, code: str | None = None) -> None:
        self.problems.append(Problem(self.file, line, key, message, code))

    def warn(self, line: int | None, key: str, message: str, code: str | None = None) -> None:
        self.warnings.append(Problem(self.file, line, key, message, code))


class YamlSyntaxError(Exception):
    """The file is not readable YAML; `problem` names where."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(str(problem))
        self.problem = problem


def load(file: Path, text: str) -> tuple[Any, yaml.Node | None]:
    """Parse `text` into (data, node tree); raise YamlSyntaxError naming the line."""
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        what = " ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlSyntaxError(Problem(file, line, "", f"not valid YAML: {what}")) from exc
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(Problem(file, None, "", f"not valid YAML: {exc}")) from exc
    finally:
        loader.dispose()
    return data, node


def _line(node: yaml.Node | None) -> int | None:
    return node.start_mark.line + 1 if node is not None else None


def describe(value: Any) -> str:
    """A short, quoted rendering of a bad value for an error message."""
    if value is None:
        return "nothing (null)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
        report: Report,
        path: str,
        data: dict[str, Any],
        node: yaml.Node | None,
        line: int | None = None,
    ) -> None:
        self.report = report
        self.path = path
        self.data = data
        self.line = line if line is not None else _line(node)
        self._key_lines: dict[str, int | None] = {}
        self._value_nodes: dict[str, yaml.Node] = {}
        if isinstance(node, yaml.MappingNode):
            for key_node, value_node in node.value:
                key = str(key_node.value)
                self._key_lines.setdefault(key, _line(key_node))
                self._value_nodes.setdefault(key, value_node)
        self._used: set[str] = set()

    # -- locating ---------------------------------------------------------------------------
    def key_path(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def line_of(self, key: str) -> int | None:
        return self._key_lines.get(key, self.line)

    def node_of(self, key: str) -> yaml.Node | None:
        return self._value_nodes.get(key)

    def has(self, key: str) -> bool:
        return key in self.data

    def problem(self, key: str, message: str, code: str | None = None) -> None:
        self.report.problem(self.line_of(key), self.key_path(key), message, code)

    def warn(self, key: str, message: str, code: str | None = None) -> None:
        self.report.warn(self.line_of(key), self.key_path(key), message, code)

    def mark_known(self, *keys: str) -> None:
        self._used.update(keys)

    # -- typed getters ----------------------------------------------------------------------
    def raw(self, key: str) -> Any:
        self._used.add(key)
        return self.data.get(key, MISSING)

    def string(self, key: str, default: T, *, required: bool = False) -> str | T:
        value = self.raw(key)
        if isinstance(value, Missing):
            if required:
                self.report.problem(
                    self.line, self.key_path(key), "is required but missing"
                )
            return default
        if isinstance(value, str):
            return value
        hint = ""
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            hint = f' (quote it: {key}: "{value}")'
        self.problem(key, f"expected a string, got {describe(value)}{hint}")
        return default

    def integer(
        self, key: str, default: T, *, minimum: int | None = None, required: bool = False
    ) -> int | T:
        value = self.raw(key)
        if isinstance(value, Missing):
            if required:
                self.report.problem(self.line, self.key_path(key), "is required but missing")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            self.problem(key, f"expected an integer, got {describe(value)}")
            return default
        if minimum is not None and value < minimum:
            self.problem(key, f"expected an integer >= {minimum}, got {value}")
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
        if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
            self.problem(key, f"expected {expectation}, got {describe(value)}")
            return default
        if check is not None and not check(float(value)):
            self.problem(key, f"expected {expectation}, got {value}")
            return default
        return float(value)

    def boolean(self, key: str, default: T, *, required: bool = False) -> bool | T:
        value = self.raw(key)
        if isinstance(value, Missing):
            if required:
                self.report.problem(
                    self.line, self.key_path(key), "is required (true or false) but missing"
                )
            return default
        if isinstance(value, bool):
            return value
        self.problem(key, f"expected true or false, got {describe(value)}")
        return default

    def choice(self, key: str, default: str, choices: tuple[str, ...]) -> str:
        value = self.raw(key)
        if isinstance(value, Missing):
            return default
        if isinstance(value, str) and value in choices:
            return value
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
        """A free-form mapping with string keys; None when absent."""
        value = self.raw(key)
        if isinstance(value, Missing) or value is None:
            return None
        if not isinstance(value, dict):
            self.problem(key, f"expected a mapping, got {describe(value)}")
            return None
        for inner in value:
            if not isinstance(inner, str):
                self.problem(key, f"keys must be strings; {describe(inner)} is not")
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
        item_nodes = node.value if isinstance(node, yaml.SequenceNode) else [None] * len(value)
        for index, (item, item_node) in enumerate(zip(value, item_nodes, strict=False)):
            path = f"{self.key_path(key)}[{index}]"
            if not isinstance(item, dict):
                self.report.problem(
                    _line(item_node) or self.line_of(key), path,
                    f"expected a mapping, got {describe(item)}",
                )
                continue
            yield Section(self.report, path, item, item_node)

    def finish(self) -> None:
        """Warn about every key no getter read."""
        for key in self.data:
            if key not in self._used:
                self.warn(str(key), "unknown key, ignored", "W-SEC-019")

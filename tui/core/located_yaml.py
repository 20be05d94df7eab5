"""The one way murmur-tui reads YAML: safely, with the line of every key.

Every YAML file murmur-tui reads (`murmur.yaml`, a component's own `murmur.yaml`, themes,
`$MURMUR_HOME/config.yaml`) goes through `read` / `load`. They build plain data — strings,
numbers, booleans, null, lists, mappings, and the few other types YAML itself defines — and
refuse, naming the file and the line (and the key path, when there is one):

- a file that is not UTF-8, not a regular file, or larger than `MAX_FILE_BYTES`;
- a character YAML does not allow in a file (control characters, NUL), whether written raw or
  as an escape in a double-quoted string (`"\\0"`, `"\\e"`), and lone surrogates (`"\\ud800"`),
  which no file can hold;
- a tag that is not one of YAML's own types (`!!python/...`, `!anything`), and a value that
  does not match its tag (`!!int abc`);
- nesting deeper than `MAX_DEPTH` levels, counting what aliases bring in;
- an alias inside the value it names (`&a [*a]`), and aliases that would expand to more than
  `MAX_ALIAS_VALUES` values in all (a "billion laughs" is refused after a few lines);
- the same key twice in one mapping (YAML 1.2 keys are unique), naming both lines;
- a list or a mapping used as a key.

`Section` (tui/core/yaml_section.py) reads the result with typed getters that collect
problems instead of stopping at the first one.
"""

from __future__ import annotations

import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64  # far below Python's recursion limit: nothing that walks the data can overflow
MAX_ALIAS_VALUES = 10_000  # values all aliases of one document may add, altogether
MAX_PROBLEMS = 20  # a file broken everywhere is reported by its first few problems

_TAG = "tag:yaml.org,2002:"
_SCALAR_TAGS = {f"{_TAG}{name}": name for name in
                ("null", "bool", "int", "float", "str", "binary", "timestamp")}
_TAG_NAMES = {"null": "null", "bool": "boolean", "int": "integer", "float": "number",
              "str": "string", "binary": "base64 text (!!binary)", "timestamp": "date or time"}
_SEQ, _MAP, _MERGE = f"{_TAG}seq", f"{_TAG}map", f"{_TAG}merge"
_SET, _OMAP, _PAIRS = f"{_TAG}set", f"{_TAG}omap", f"{_TAG}pairs"
# The characters YAML allows in a file (PyYAML's own rule); nothing else reaches a value.
NOT_ALLOWED = yaml.reader.Reader.NON_PRINTABLE
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # line breaks as YAML counts them
_ERROR_KINDS = {yaml.scanner.ScannerError: "a token cannot be read here",
                yaml.parser.ParserError: "the structure breaks here",
                yaml.composer.ComposerError: "an anchor or alias is wrong here",
                yaml.constructor.ConstructorError: "a value cannot be read here"}


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


class YamlError(Exception):
    """The file was refused; every problem names the file and, where there is one, the line."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("\n".join(str(problem) for problem in problems))
        self.problems = problems

    @property
    def problem(self) -> Problem:
        return self.problems[0]


def read(file: Path, *, quiet: bool = False) -> tuple[Any, yaml.Node | None]:
    """Read and parse a YAML file: (data, node tree). Raises FileNotFoundError when there is no
    file, YamlError for anything else."""
    return load(file, read_text(file, quiet=quiet), quiet=quiet)


def read_private(file: Path) -> Any:
    """The data of a YAML file that holds secrets (`config.yaml`): None for an empty file;
    FileNotFoundError when there is none; otherwise YamlError, whose problems name the file,
    the line and the column but never quote the file's text — no key, no value, no byte."""
    return read(file, quiet=True)[0]


def read_text(file: Path, *, max_bytes: int = MAX_FILE_BYTES, quiet: bool = False) -> str:
    """A text file's contents, refused (YamlError) unless it is a regular file of at most
    `max_bytes` bytes of UTF-8. FileNotFoundError passes through."""
    def refuse(message: str, line: int | None = None) -> YamlError:
        return YamlError([Problem(file, line, "", message)])

    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise
    except (OSError, ValueError) as exc:
        raise refuse(f"cannot be read: {_reason(exc)}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise refuse("is not a regular file")
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise refuse(f"cannot be read: {_reason(exc)}") from None
    if len(data) > max_bytes:
        raise refuse(f"is larger than {max_bytes} bytes, the most murmur-tui reads (the limit "
                     "falls on this line)", data.count(b"\n", 0, max_bytes) + 1)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        byte = "" if quiet else f" (byte 0x{data[exc.start]:02X})"
        raise refuse(f"is not UTF-8 text: column {column} cannot be decoded{byte}; save the "
                     "file as UTF-8", line) from None


def _reason(exc: Exception) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc))


def load(file: Path, text: str, *, quiet: bool = False) -> tuple[Any, yaml.Node | None]:
    """Parse `text` into (data, node tree); raise YamlError naming the line of each problem.
    `quiet`: messages never quote the text (for files that hold keys)."""
    bad = NOT_ALLOWED.search(text)
    if bad is not None:
        line, column = _position(text, bad.start())
        what = "a character" if quiet else char_name(bad.group())
        raise YamlError([Problem(file, line, "", f"column {column} holds {what} that YAML does "
                                 "not allow in a file (a control character, NUL or a "
                                 "surrogate); remove it")])
    loader = _Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except _Refusal as exc:
            raise YamlError([Problem(file, exc.mark.line + 1, "" if quiet else exc.path,
                                     exc.quiet if quiet else exc.message)]) from None
        except yaml.MarkedYAMLError as exc:
            raise YamlError([_syntax_problem(file, exc, loader.key_path(), quiet)]) from None
        except yaml.YAMLError as exc:
            raise YamlError([Problem(file, None, "", "not valid YAML" if quiet
                                     else f"not valid YAML: {exc}")]) from None
        except RecursionError:  # the depth cap keeps this away; never let it out regardless
            raise YamlError([Problem(file, loader.get_mark().line + 1, "",
                                     "nests too deeply to read")]) from None
        if node is None:
            return None, None
        builder = _Builder(loader, file, quiet)
        try:
            data = builder.build(node, [])
        except RecursionError:
            raise YamlError([Problem(file, node_line(node), "",
                                     "nests too deeply to read")]) from None
        if builder.problems:
            raise YamlError(builder.problems)
        return data, node
    finally:
        loader.dispose()


def _position(text: str, index: int) -> tuple[int, int]:
    """(line, column), both from 1, of a character index, counting breaks as YAML does."""
    line, start = 1, 0
    for match in _BREAK.finditer(text, 0, index):
        line, start = line + 1, match.end()
    return line, index - start + 1


def char_name(char: str) -> str:
    names = {"\x00": "NUL", "\x1b": "ESC", "\x7f": "DEL"}
    point = ord(char)
    kind = ("a lone surrogate" if 0xD800 <= point <= 0xDFFF
            else "a noncharacter" if point in (0xFFFE, 0xFFFF) else "a control character")
    name = f" {names[char]}" if char in names else ""
    return f"{kind}{name} (U+{point:04X})"


def _syntax_problem(file: Path, exc: yaml.MarkedYAMLError, key: str, quiet: bool) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    line = mark.line + 1 if mark is not None else None
    context = exc.context_mark
    started = (f" (started at line {context.line + 1})" if context is not None
               and mark is not None and context.line != mark.line else "")
    if quiet:
        kind = next((text for cls, text in _ERROR_KINDS.items() if isinstance(exc, cls)),
                    "it cannot be read")
        return Problem(file, line, "", f"not valid YAML: {kind}{started}")
    what = " ".join(part for part in (exc.context, exc.problem) if part)
    return Problem(file, line, key, f"not valid YAML: {what}{started}")


def node_line(node: yaml.Node | None) -> int | None:
    return node.start_mark.line + 1 if node is not None else None


def join_path(parts: list[str]) -> str:
    """`a.b[0].c`; a very long path keeps its start and its end."""
    text = ""
    for part in parts:
        text += part if part.startswith("[") or not text else f".{part}"
    return text if len(text) <= 120 else f"{text[:80]}...{text[-36:]}"


def show_key(key: Any) -> str:
    """A key as it appears in a key path: itself when short, cut to 60 characters otherwise."""
    text = key if isinstance(key, str) else describe(key)
    return text if len(text) <= 60 else text[:57] + "..."


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
    if isinstance(value, (set, frozenset)):
        return "a set (!!set)"
    if isinstance(value, bytes):
        return "binary data (!!binary)"
    if isinstance(value, int) and value.bit_length() > 200:
        return f"an integer of {len(hex(abs(value))) - 2} hex digits"
    text = repr(value) if isinstance(value, str) else str(value)
    return text if len(text) <= 60 else text[:57] + "..."


class _Refusal(yaml.YAMLError):
    """A document murmur-tui will not read, found while composing it."""

    def __init__(self, mark: yaml.Mark, path: str, message: str, quiet: str) -> None:
        super().__init__(message)
        self.mark = mark
        self.path = path
        self.message = message
        self.quiet = quiet


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, composing with caps: nesting depth (aliases included), circular
    aliases, total alias expansion; and it knows the key path it is at."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.depth = 0
        self.path: list[str] = []
        self.open: set[int] = set()  # collections being composed (an alias to one is a loop)
        self.size: dict[int, int] = {}  # values in a node, aliases expanded
        self.height: dict[int, int] = {}  # levels in a node, aliases expanded
        self.aliased = 0

    def key_path(self) -> str:
        return join_path(self.path)

    def refuse(self, mark: Any, message: str, quiet: str | None = None) -> _Refusal:
        return _Refusal(mark, self.key_path(), message, quiet or message)

    def _peek(self) -> Any:
        return self.peek_event()  # type: ignore[no-untyped-call]

    def _next(self) -> Any:
        return self.get_event()  # type: ignore[no-untyped-call]

    def _tag(self, kind: type[yaml.Node], event: Any) -> str:
        tag: str | None = event.tag
        if tag is None or tag == "!":
            resolved: str = self.resolve(kind, None, event.implicit)  # type: ignore[no-untyped-call]
            return resolved
        return tag

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self._peek()
        if isinstance(event, yaml.AliasEvent):
            target = self.anchors.get(event.anchor)
            if target is not None:
                self._check_alias(target, event)
            return super().compose_node(parent, index)
        if self.depth >= MAX_DEPTH:
            raise self.refuse(event.start_mark, f"nests deeper than {MAX_DEPTH} levels, the "
                              "most murmur-tui reads")
        self.depth += 1
        node = super().compose_node(parent, index)
        self.depth -= 1
        return node

    def _check_alias(self, target: yaml.Node, event: yaml.AliasEvent) -> None:
        name = f"*{event.anchor}"
        if id(target) in self.open:
            raise self.refuse(event.start_mark, f"the alias {name} is inside the value it "
                              "names (a circular alias)",
                              "an alias is inside the value it names (a circular alias)")
        if self.depth + self.height[id(target)] > MAX_DEPTH:
            raise self.refuse(event.start_mark, f"nests deeper than {MAX_DEPTH} levels (with "
                              f"what the alias {name} brings in), the most murmur-tui reads",
                              f"nests deeper than {MAX_DEPTH} levels (aliases included)")
        self.aliased += self.size[id(target)]
        if self.aliased > MAX_ALIAS_VALUES:
            raise self.refuse(event.start_mark, f"aliases here expand to more than "
                              f"{MAX_ALIAS_VALUES} values, the most murmur-tui reads (an alias "
                              "bomb?)")

    def compose_scalar_node(self, anchor: Any) -> yaml.ScalarNode:
        node = super().compose_scalar_node(anchor)
        self.size[id(node)] = self.height[id(node)] = 1
        return node

    def compose_sequence_node(self, anchor: Any) -> yaml.SequenceNode:
        start = self._next()
        node = yaml.SequenceNode(self._tag(yaml.SequenceNode, start), [], start.start_mark,
                                 None, flow_style=start.flow_style)
        self._open(node, anchor)
        while not self.check_event(yaml.SequenceEndEvent):
            self.path.append(f"[{len(node.value)}]")
            node.value.append(self._child(node, len(node.value)))
            self.path.pop()
        node.end_mark = self._next().end_mark
        self._close(node, node.value)
        return node

    def compose_mapping_node(self, anchor: Any) -> yaml.MappingNode:
        start = self._next()
        node = yaml.MappingNode(self._tag(yaml.MappingNode, start), [], start.start_mark,
                                None, flow_style=start.flow_style)
        self._open(node, anchor)
        children: list[yaml.Node] = []
        while not self.check_event(yaml.MappingEndEvent):
            self.path.append("?")
            key = self._child(node, None)
            self.path[-1] = show_key(key.value) if isinstance(key, yaml.ScalarNode) else "?"
            value = self._child(node, key)
            self.path.pop()
            node.value.append((key, value))
            children += (key, value)
        node.end_mark = self._next().end_mark
        self._close(node, children)
        return node

    def _child(self, parent: yaml.Node, index: Any) -> yaml.Node:
        node = self.compose_node(parent, index)
        assert node is not None  # a collection's child is always a node
        return node

    def _open(self, node: yaml.Node, anchor: str | None) -> None:
        if anchor is not None:
            self.anchors[anchor] = node
        self.open.add(id(node))

    def _close(self, node: yaml.Node, children: list[yaml.Node]) -> None:
        self.open.discard(id(node))
        self.size[id(node)] = 1 + sum(self.size[id(child)] for child in children)
        self.height[id(node)] = 1 + max((self.height[id(child)] for child in children),
                                        default=0)


class _Builder:
    """Node tree -> data, checking what PyYAML lets through: tags, values that do not match
    their tag, characters no file may hold, duplicate and unhashable keys. Shared (aliased)
    nodes become the same object, as in PyYAML; the composer's caps bound the recursion."""

    def __init__(self, loader: _Loader, file: Path, quiet: bool) -> None:
        self.loader = loader
        self.file = file
        self.quiet = quiet
        self.built: dict[int, Any] = {}
        self.problems: list[Problem] = []

    def problem(self, node: yaml.Node, path: list[str], message: str, quiet: str) -> None:
        if len(self.problems) < MAX_PROBLEMS:
            self.problems.append(Problem(self.file, node_line(node),
                                         "" if self.quiet else join_path(path),
                                         quiet if self.quiet else message))

    def build(self, node: yaml.Node, path: list[str]) -> Any:
        if id(node) in self.built:
            return self.built[id(node)]
        if isinstance(node, yaml.ScalarNode):
            value = self.scalar(node, path)
        elif isinstance(node, yaml.SequenceNode):
            value = self.sequence(node, path)
        elif isinstance(node, yaml.MappingNode):
            value = self.mapping(node, path)
        else:  # PyYAML composes no other kind of node
            raise TypeError(f"not a YAML node: {node!r}")
        self.built[id(node)] = value
        return value

    def bad_tag(self, node: yaml.Node, path: list[str]) -> None:
        tag = node.tag.replace(_TAG, "!!")
        self.problem(node, path, f"the tag {describe(tag)} is not allowed: murmur-tui reads "
                     "plain data (text, numbers, true/false, null, lists and mappings)",
                     "a tag that is not allowed")

    def scalar(self, node: yaml.ScalarNode, path: list[str]) -> Any:
        kind = _SCALAR_TAGS.get(node.tag)
        if kind is None:
            self.bad_tag(node, path)
            return None
        try:
            value = self.loader.construct_object(node)
        except (yaml.YAMLError, ValueError, TypeError, KeyError, AttributeError, IndexError,
                OverflowError):
            hint = " (quote it if it is text)" if node.style is None and kind != "str" else ""
            self.problem(node, path, f"{describe(node.value)} is not a valid "
                         f"{_TAG_NAMES[kind]}{hint}", "a value that does not match its type")
            return None
        if isinstance(value, str) and (bad := NOT_ALLOWED.search(value)) is not None:
            self.problem(node, path, f"holds {char_name(bad.group())}, written as an escape; "
                         "murmur-tui does not accept it in a value (no file could hold it)",
                         "a value holds a character no file can hold")
            return None
        return value

    def sequence(self, node: yaml.SequenceNode, path: list[str]) -> Any:
        if node.tag == _SEQ:
            return [self.build(child, [*path, f"[{index}]"])
                    for index, child in enumerate(node.value)]
        if node.tag in (_OMAP, _PAIRS):
            pairs: list[tuple[Any, Any]] = []
            for index, child in enumerate(node.value):
                item = self.build(child, [*path, f"[{index}]"])
                if not isinstance(item, dict) or len(item) != 1:
                    self.problem(child, [*path, f"[{index}]"], "expected a mapping of one key",
                                 "expected a mapping of one key")
                    continue
                pairs.append(next(iter(item.items())))
            return pairs
        self.bad_tag(node, path)
        return None

    def mapping(self, node: yaml.MappingNode, path: list[str]) -> Any:
        if node.tag not in (_MAP, _SET):
            self.bad_tag(node, path)
            return None
        merged: dict[Any, Any] = {}
        own: dict[Any, Any] = {}
        first: dict[Any, int | None] = {}
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE and node.tag == _MAP:
                merged.update(self.merge(value_node, [*path, "<<"]))
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.problem(key_node, path, "a list or a mapping cannot be a key",
                             "a list or a mapping cannot be a key")
                continue
            key = self.build(key_node, [*path, show_key(key_node.value)])
            here = [*path, show_key(key)]
            try:
                seen = key in first
            except TypeError:  # e.g. a !!set used as a key
                self.problem(key_node, here, "this cannot be a key", "this cannot be a key")
                continue
            if seen:
                self.problem(key_node, here, f"{describe(key)} is a key twice in one mapping "
                             f"(first at line {first[key]}); keys must be unique",
                             f"a key is repeated in one mapping (first at line {first[key]})")
                continue
            first[key] = node_line(key_node)
            own[key] = self.build(value_node, here)
        if node.tag == _SET:
            return set(own)
        return {**merged, **own} if merged else own

    def merge(self, node: yaml.Node, path: list[str]) -> dict[Any, Any]:
        """`<<: *base` or `<<: [*a, *b]` (earlier mappings win, the mapping's own keys over
        all)."""
        sources = node.value if isinstance(node, yaml.SequenceNode) else [node]
        merged: dict[Any, Any] = {}
        for source in reversed(sources):
            value = self.build(source, path) if isinstance(source, yaml.Node) else None
            if not isinstance(value, dict):
                self.problem(node, path, "<< merges a mapping or a list of mappings",
                             "<< merges a mapping or a list of mappings")
                return {}
            merged.update(value)
        return merged

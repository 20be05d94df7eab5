"""The capped YAML composer and the builder that turns its node tree into plain data.

`Loader` is PyYAML's safe loader composing with caps (nesting depth with aliases, circular
aliases, total alias expansion) and knowing the key path it is at; `Builder` checks what PyYAML
lets through (tags, values that do not match their tag, characters no file may hold, duplicate
and unhashable keys). tui/core/manifest/located_yaml.py is the way in.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tui.core.errors import Problem, YamlRefusal
from tui.core.manifest.problems import char_name, describe, join_path, node_line, show_key

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


class Loader(yaml.SafeLoader):
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

    def refuse(self, mark: Any, message: str, quiet: str | None = None) -> YamlRefusal:
        return YamlRefusal(mark, self.key_path(), message, quiet or message)

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


class Builder:
    """Node tree -> data, checking what PyYAML lets through: tags, values that do not match
    their tag, characters no file may hold, duplicate and unhashable keys. Shared (aliased)
    nodes become the same object, as in PyYAML; the composer's caps bound the recursion."""

    def __init__(self, loader: Loader, file: Path, quiet: bool) -> None:
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

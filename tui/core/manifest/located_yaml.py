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

The caps live in tui/core/manifest/yaml_loader.py, the problems in problems.py; `Section`
(tui/core/manifest/yaml_section.py) reads the result with typed getters that collect problems
instead of stopping at the first one.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import yaml

from tui.core.errors import Problem, YamlError, YamlRefusal
from tui.core.manifest.problems import char_name, node_line
from tui.core.manifest.yaml_loader import NOT_ALLOWED, Builder, Loader

MAX_FILE_BYTES = 4 * 1024 * 1024
_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # line breaks as YAML counts them
_ERROR_KINDS = {yaml.scanner.ScannerError: "a token cannot be read here",
                yaml.parser.ParserError: "the structure breaks here",
                yaml.composer.ComposerError: "an anchor or alias is wrong here",
                yaml.constructor.ConstructorError: "a value cannot be read here"}


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
    loader = Loader(text)
    try:
        try:
            node = loader.get_single_node()
        except YamlRefusal as exc:
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
        builder = Builder(loader, file, quiet)
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



"""The person's prices: `$MURMUR_HOME/tui/prices.yaml`.

```yaml
models:
  gpt-4.1:                 # replaces the built-in price
    input: 2.00            # dollars per million input tokens
    output: 8.00           # … per million output tokens
    cached_input: 0.50     # optional: input read from the prompt cache (default: input)
    cache_write: 2.00      # optional: input written to the prompt cache (default: input)
  my-local-model: {input: 0, output: 0}
  gpt-4o: null             # no price: its tokens are shown, not a cost
```

The file is read safely (`located_yaml`). A file that cannot be read gives one warning naming
it and its line, and the built-in table applies as it is; an entry that is wrong gives a warning
naming its line, and only that entry is left out. Never an exception.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import yaml

from tui.core.cost.table import BUILTIN, Price, PriceTable
from tui.core.errors import YamlError
from tui.core.fs.paths import murmur_home
from tui.core.manifest import located_yaml
from tui.core.manifest.problems import node_line

PRICES_FILE = Path("tui") / "prices.yaml"
MAX_PRICE = Decimal(1_000_000)  # dollars per million tokens: anything above is a typo
_FIELDS = ("input", "output", "cached_input", "cache_write")


def prices_file(home: Path | None = None) -> Path:
    return (home if home is not None else murmur_home()) / PRICES_FILE


def load_prices(home: Path | None = None) -> PriceTable:
    """The built-in prices with the person's file over them (see the module's text)."""
    file = prices_file(home)
    try:
        data, node = located_yaml.read(file)
    except FileNotFoundError:
        return PriceTable(BUILTIN)
    except YamlError as exc:
        return PriceTable(BUILTIN, tuple(f"{problem}; the built-in prices apply"
                                         for problem in exc.problems))
    except OSError as exc:  # a folder in the way, say: what located_yaml does not refuse
        return PriceTable(BUILTIN, (f"{file}: cannot be read ({exc.strerror or exc}); the "
                                    "built-in prices apply",))
    return _merge(file, data, node)


_last: tuple[Path, tuple[int, int, int], PriceTable] | None = None


def current(home: Path | None = None) -> PriceTable:
    """`load_prices`, read again only when the file changed (a session start asks)."""
    global _last
    file = prices_file(home)
    try:
        facts = os.stat(file)
        stamp = (facts.st_mtime_ns, facts.st_size, facts.st_ino)
    except OSError:
        stamp = (0, 0, 0)
    if _last is not None and _last[0] == file and _last[1] == stamp:
        return _last[2]
    table = load_prices(home)
    _last = (file, stamp, table)
    return table


def _merge(file: Path, data: Any, node: yaml.Node | None) -> PriceTable:
    warnings: list[str] = []

    def warn(line: int | None, text: str) -> None:
        where = f"{file}:{line}" if line else str(file)
        warnings.append(f"{where}: {text}")

    if data is None:  # an empty file
        return PriceTable(BUILTIN)
    models, models_node = _member(data, node, "models")
    if not isinstance(data, dict) or not isinstance(models, dict):
        warn(node_line(models_node) or node_line(node),
             "expected `models:` holding a price for each model name; the built-in prices "
             "apply")
        return PriceTable(BUILTIN, tuple(warnings))
    prices: dict[str, Price | None] = {}
    for name, entry in models.items():
        entry_node = _member(models, models_node, name)[1]
        line = node_line(entry_node)
        if not isinstance(name, str) or not name.strip():
            warn(line, f"models: {name!r} is not a model name; left out")
            continue
        if entry is None:
            prices[name.strip().lower()] = None
            continue
        price = _price(entry, entry_node, f"{file}:{line}", lambda at, text, n=name:
                       warn(at, f"models.{n}: {text}; this model is left out"))
        if price is not None:
            prices[name.strip().lower()] = price
    for key in data:
        if key != "models":
            warn(node_line(_member(data, node, key)[1]), f"{key!s}: unknown key, left out")
    merged = {**BUILTIN, **prices}
    return PriceTable({name: price for name, price in merged.items() if price is not None},
                      tuple(warnings))


def _price(entry: Any, node: yaml.Node | None, source: str,
           warn: Any) -> Price | None:
    line = node_line(node)
    if not isinstance(entry, dict):
        warn(line, "expected `input:` and `output:` (dollars per million tokens) or null")
        return None
    values: dict[str, Decimal] = {}
    for key, value in entry.items():
        at = node_line(_member(entry, node, key)[1]) or line
        if key not in _FIELDS:
            warn(at, f"{key!s} is not one of {', '.join(_FIELDS)}")
            return None
        amount = _amount(value)
        if amount is None:
            warn(at, f"{key} must be a number of dollars from 0 to {MAX_PRICE}, got "
                     f"{value!r}"[:200])
            return None
        values[key] = amount
    missing = [key for key in ("input", "output") if key not in values]
    if missing:
        warn(line, f"{' and '.join(missing)} missing")
        return None
    return Price(values["input"], values["output"],
                 values.get("cached_input", values["input"]),
                 values.get("cache_write", values["input"]), source)


def _amount(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    if isinstance(value, float) and not math.isfinite(value):
        return None
    try:
        amount = Decimal(str(value).strip())
    except InvalidOperation:
        return None
    return amount if amount.is_finite() and 0 <= amount <= MAX_PRICE else None


def _member(data: Any, node: yaml.Node | None, key: Any) -> tuple[Any, yaml.Node | None]:
    """`data[key]` and its node (None where the file has none)."""
    value = data.get(key) if isinstance(data, Mapping) else None
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode) and key_node.value == str(key):
                return value, value_node
    return value, None

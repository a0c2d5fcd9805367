"""The one JSON writer: every JSON file of the tree goes through ``dump``."""

from __future__ import annotations

from typing import Any

import orjson

OPTIONS = orjson.OPT_APPEND_NEWLINE | orjson.OPT_NON_STR_KEYS


def dump(obj: Any) -> bytes:
    """Compact UTF-8 JSON with a final newline; key order as built (stable)."""
    return orjson.dumps(obj, option=OPTIONS)


def dump_pretty(obj: Any) -> bytes:
    return orjson.dumps(obj, option=OPTIONS | orjson.OPT_INDENT_2)

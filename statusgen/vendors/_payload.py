"""Typed, checked access to a decoded JSON payload.

Adapters never index raw dicts. They walk a ``Node``, which knows the format
and the path it came from, so every problem surfaces as one
``VendorParseError`` line such as::

    statuspage payload: components[3].name must be a string, got a number

and no other exception escapes an adapter.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from datetime import UTC, datetime, tzinfo
from typing import Any, NoReturn

import orjson

from statusgen.errors import VendorParseError
from statusgen.text import outside_link
from statusgen.vendors._text import (
    ID_LIMIT,
    TEXT_LIMIT,
    WORD_LIMIT,
    clean_text,
    parse_iso,
)

ERROR_LIMIT = 1000

_KINDS: dict[type, str] = {
    dict: "an object",
    list: "an array",
    str: "a string",
    bool: "a boolean",
    int: "a number",
    float: "a number",
    type(None): "null",
}


def kind(value: Any) -> str:
    """How a JSON value reads in an error message."""
    return _KINDS.get(type(value), type(value).__name__)


def fail(fmt: str, problem: str) -> NoReturn:
    """Raise the one error an adapter may raise, as one line naming the format."""
    raise VendorParseError(f"{fmt} payload: {clean_text(problem, ERROR_LIMIT)}")


def _as_text(fmt: str, data: bytes | bytearray | memoryview | str) -> bytes:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else bytes(data)
    raw = raw.removeprefix(b"\xef\xbb\xbf").strip()
    if raw[:1] == b"<":
        fail(fmt, "looks like HTML or XML, not JSON")
    return raw


def load_json(fmt: str, data: Any) -> Node:
    """The root ``Node`` of a payload given as bytes, text or already decoded JSON."""
    if not isinstance(data, (bytes, bytearray, memoryview, str)):
        return Node(fmt, "", data)
    raw = _as_text(fmt, data)
    if not raw:
        fail(fmt, "is empty")
    try:
        return Node(fmt, "", orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        fail(fmt, f"is not valid JSON ({exc})")


class Node:
    """One value inside a payload, with the path that leads to it."""

    __slots__ = ("fmt", "path", "value")

    def __init__(self, fmt: str, path: str, value: Any) -> None:
        self.fmt = fmt
        self.path = path
        self.value = value

    # -- structure -----------------------------------------------------------

    def fail(self, problem: str) -> NoReturn:
        fail(self.fmt, f"{self.path or 'top level'} {problem}")

    def _expect(self, wanted: type, label: str) -> Any:
        if type(self.value) is not wanted:
            self.fail(f"must be {label}, got {kind(self.value)}")
        return self.value

    def obj(self) -> dict[str, Any]:
        mapping: dict[str, Any] = self._expect(dict, "an object")
        return mapping

    def is_null(self) -> bool:
        return self.value is None

    def has(self, key: str) -> bool:
        return key in self.obj() and self.obj()[key] is not None

    def _child(self, key: str | int) -> str:
        if isinstance(key, int):
            return f"{self.path}[{key}]"
        return f"{self.path}.{key}" if self.path else key

    def __getitem__(self, key: str) -> Node:
        """A required key."""
        mapping = self.obj()
        if key not in mapping:
            self.fail(f"lacks the key {key!r}")
        return Node(self.fmt, self._child(key), mapping[key])

    def get(self, key: str) -> Node:
        """An optional key (a missing key reads as null)."""
        return Node(self.fmt, self._child(key), self.obj().get(key))

    def items(self) -> Iterator[Node]:
        """The elements of a required array."""
        elements = self._expect(list, "an array")
        return (Node(self.fmt, self._child(i), v) for i, v in enumerate(elements))

    def items_or_none(self) -> Iterator[Node]:
        """The elements of an optional array (null or missing: none)."""
        return iter(()) if self.value is None else self.items()

    # -- leaves --------------------------------------------------------------

    def text(self, limit: int = TEXT_LIMIT) -> str:
        """A required string, cleaned; it must not be blank."""
        cleaned = clean_text(self._expect(str, "a string"), limit)
        if not cleaned:
            self.fail("must not be blank")
        return cleaned

    def text_or_none(self, limit: int = TEXT_LIMIT) -> str | None:
        if self.value is None:
            return None
        return clean_text(self._expect(str, "a string"), limit) or None

    def link_or_none(self) -> str | None:
        """An optional link readers may follow: kept only when it is http(s) (``outside_link``)."""
        return outside_link(self.text_or_none())

    def word(self) -> str:
        """A required enum-like word, lowercased: ``Minor`` reads ``minor``."""
        return self.text(WORD_LIMIT).lower()

    def word_or_none(self) -> str | None:
        found = self.text_or_none(WORD_LIMIT)
        return found.lower() if found else None

    def ident(self) -> str:
        """A required identifier: a string or a whole number."""
        if type(self.value) is int:
            return str(self.value)
        if type(self.value) is not str:
            self.fail(f"must be a string or a whole number, got {kind(self.value)}")
        return self.text(ID_LIMIT)

    def code(self) -> int | None:
        """A numeric status code given as a number or digits; None if it is neither."""
        if type(self.value) is int:
            return self.value
        if isinstance(self.value, str) and self.value.strip().isdigit() and len(self.value) < 10:
            return int(self.value)
        return None

    def number_or_none(self) -> float | None:
        """A finite number; None when it is missing or not one (a figure, never required)."""
        if type(self.value) not in (int, float) or not math.isfinite(self.value):
            return None
        return float(self.value)

    def flag(self) -> bool:
        return bool(self._expect(bool, "a boolean"))

    def time(self) -> datetime:
        """A required ISO 8601 timestamp, in UTC."""
        moment = self.time_or_none()
        if moment is None:
            self.fail("must be a timestamp, got null")
        return moment

    def time_or_none(self, zone: tzinfo = UTC) -> datetime | None:
        """An optional ISO 8601 timestamp in UTC; one written without an offset is in ``zone``."""
        if self.value is None:
            return None
        moment = parse_iso(self._expect(str, "a string"), zone)
        if moment is None:
            self.fail(f"is not a valid timestamp: {clean_text(self.value, 40)!r}")
        return moment

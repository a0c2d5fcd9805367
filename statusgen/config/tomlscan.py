"""A look at the TOML text before it is parsed: what would make the parser itself costly."""

from __future__ import annotations


def nesting(text_: str) -> int:
    """The deepest nesting of arrays and inline tables (table headers count too), outside strings
    and comments: measured before parsing, since the parser recurses once per level."""
    depth = deepest = i = 0
    while i < len(text_):
        c = text_[i]
        if c == "#":
            end = text_.find("\n", i)
            i = len(text_) if end < 0 else end
        elif c in "\"'":
            i = _string_end(text_, i)
        else:
            if c in "[{":
                depth += 1
                deepest = max(deepest, depth)
            elif c in "]}":
                depth = max(depth - 1, 0)
            i += 1
    return deepest


def _string_end(text_: str, start: int) -> int:
    """Where the TOML string starting at ``start`` ends (just past its closing quote)."""
    quote = text_[start]
    mark = quote * 3 if text_.startswith(quote * 3, start) else quote
    i = start + len(mark)
    while i < len(text_):
        if quote == '"' and text_[i] == "\\":
            i += 2
        elif text_.startswith(mark, i) or (len(mark) == 1 and text_[i] == "\n"):
            return i + len(mark)
        else:
            i += 1
    return i

"""A look at the TOML text before it is parsed: what would make the parser itself costly.

Python's TOML parser recurses once per level of arrays, inline tables and dotted keys, and a
dotted key of n parts costs it time and memory in n squared: 100,000 parts in a 200 KB file
take gigabytes. So the text is scanned first, once, in linear time, and a configuration nested
deeper than any real one is refused with the line that does it.
"""

from __future__ import annotations


def too_deep(text: str, limit: int) -> str | None:
    """The first place ``text`` nests arrays, inline tables and table headers more than ``limit``
    deep, or writes a key of more than ``limit`` dotted parts, as a problem naming its line;
    None when there is none. Strings and comments are skipped."""
    containers: list[str] = []  # "h" a table header's bracket, "a" an array, "t" an inline table
    in_key, dots, line, i = True, 0, 1, 0
    while i < len(text):
        c = text[i]
        if c == "#":
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        if c in "\"'":
            end = _string_end(text, i)
            line += text.count("\n", i, end)
            i = end
            continue
        if c == "\n":
            line += 1
            if not containers:
                in_key, dots = True, 0
        elif c == "[":
            containers.append("h" if in_key and (not containers or containers[-1] == "h") else "a")
            in_key = containers[-1] == "h"
        elif c == "{":
            containers.append("t")
            in_key, dots = True, 0
        elif c in "]}":
            closed = containers.pop() if containers else ""
            in_key = closed == "h" and bool(containers)
        elif c == "," and containers and containers[-1] == "t":
            in_key, dots = True, 0
        elif c == "=" and in_key:
            in_key, dots = False, 0
        elif c == "." and in_key:
            dots += 1
            if dots >= limit:
                return f"line {line}: a key has more than {limit} dotted parts; write a shorter key"
        if len(containers) > limit:
            return f"line {line}: arrays and tables are nested more than {limit} deep; flatten the value"
        i += 1
    return None


def _string_end(text: str, start: int) -> int:
    """Where the TOML string starting at ``start`` ends (just past its closing quote)."""
    quote = text[start]
    mark = quote * 3 if text.startswith(quote * 3, start) else quote
    i = start + len(mark)
    while i < len(text):
        if quote == '"' and text[i] == "\\":
            i += 2
        elif text.startswith(mark, i) or (len(mark) == 1 and text[i] == "\n"):
            return i + len(mark)
        else:
            i += 1
    return i

"""Text that crosses into the process, made fit for every format it may land in.

Words from an operator's file, the configuration, a vendor's page or a probe agent
reach XML (Atom, SVG), iCalendar, CSV, Prometheus' text format and JSON. Each of
those forbids or mangles some code points: XML 1.0 refuses every C0 control but
tab, newline and carriage return, and U+FFFE, U+FFFF; RFC 5545 refuses every
control but tab; UTF-8 (so JSON) cannot hold a lone surrogate. A pasted ANSI colour
(ESC) or form feed would make a feed unreadable. So the edges where text enters
clean it once, with ``without_controls`` (text that may hold lines) or
``one_line`` (names, titles, labels), and nothing past them checks again.

Links are text of their own kind: one a reader may follow is kept only when it is
http(s) (``outside_link``), so no ``javascript:`` or ``data:`` URL a vendor or an
operator gives reaches a page, a feed, a calendar or the JSON.

Nothing is escaped here: escaping belongs to the writer of each format.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import urlsplit

_LINE_END = re.compile("\r\n?")
_WHITESPACE = re.compile(r"\s+")
_SPACES = re.compile(" {2,}")


def _kept(char: str) -> str:
    """What a code point becomes: itself, nothing (a code point of Unicode's category C, "other":
    a control, a format character such as a bidirectional override, a private-use or unassigned
    one, U+FFFE, U+FFFF), or U+FFFD for a surrogate, which is never text on its own: a string
    holding one cannot be written as UTF-8."""
    kind = unicodedata.category(char)
    if not kind.startswith("C") or char in "\t\n":
        return char
    return "\ufffd" if kind == "Cs" else ""


def without_controls(text: str) -> str:
    """``text`` with its line ends made newlines (CR LF and a lone CR), every control
    character but tab and newline removed (C0, DEL, C1, and the rest of Unicode's category C:
    the bidirectional controls that reorder what a reader sees, U+FFFE, U+FFFF...), and each
    lone surrogate replaced by U+FFFD."""
    text = _LINE_END.sub("\n", text)
    return text if text.isprintable() else "".join(map(_kept, text))


def one_line(text: str) -> str:
    """``text`` as one line: every run of white space (newlines, tabs, form feeds...) a single
    space, no space at either end, and no control character (``without_controls``)."""
    spaced = _WHITESPACE.sub(" ", text)  # a form feed or a vertical tab parts words as a space does
    return _SPACES.sub(" ", without_controls(spaced)).strip()


def outside_link(url: str | None) -> str | None:
    """An untrusted URL as one line, kept only when it is http or https with a host: never
    ``javascript:``, ``data:`` or ``vbscript:``, however cased or spaced."""
    link = one_line(url or "")
    try:
        parts = urlsplit(link)
    except ValueError:
        return None
    return link if parts.scheme in ("http", "https") and parts.netloc else None

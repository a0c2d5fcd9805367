"""Text that crosses into the process, made fit for every format it may land in.

Words from an operator's file, the configuration, a vendor's page or a probe agent
reach XML (Atom, SVG), iCalendar, CSV, Prometheus' text format and JSON. Each of
those forbids or mangles some code points: XML 1.0 refuses every C0 control but
tab, newline and carriage return, and U+FFFE, U+FFFF; RFC 5545 refuses every
control but tab; UTF-8 (so JSON) cannot hold a lone surrogate. A pasted ANSI colour
(ESC) or form feed would make a feed unreadable. So the edges where text enters
clean it once, with ``without_controls`` (text that may hold lines) or
``one_line`` (names, titles, labels), and nothing past them checks again.

Nothing is escaped here: escaping belongs to the writer of each format.
"""

from __future__ import annotations

import re

#: What text never holds: C0 controls but tab and newline, DEL, C1 controls, the two
#: non-characters XML forbids, and the bidirectional controls, which reorder what a
#: reader sees without being seen (a name that reads as another).
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ufffe\uffff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
#: A code point of UTF-16's surrogate range is never text on its own: a string holding one
#: cannot be written as UTF-8.
_SURROGATE = re.compile("[\ud800-\udfff]")
_LINE_END = re.compile("\r\n?")
_WHITESPACE = re.compile(r"\s+")
_SPACES = re.compile(" {2,}")


def without_controls(text: str) -> str:
    """``text`` with its line ends made newlines (CR LF and a lone CR), every control
    character but tab and newline removed (C0, DEL, C1, the bidirectional controls, U+FFFE,
    U+FFFF), and each lone surrogate replaced by U+FFFD."""
    text = _LINE_END.sub("\n", text)
    return _SURROGATE.sub("\ufffd", _CONTROLS.sub("", text))


def one_line(text: str) -> str:
    """``text`` as one line: every run of white space (newlines, tabs, form feeds...) a single
    space, no space at either end, and no control character (``without_controls``)."""
    spaced = _WHITESPACE.sub(" ", text)  # a form feed or a vertical tab parts words as a space does
    return _SPACES.sub(" ", without_controls(spaced)).strip()

"""The one rule for text entering the process: every control character but tab and newline goes,
a lone surrogate becomes U+FFFD; what stays is written as UTF-8 and is XML 1.0 character data."""

from __future__ import annotations

import unicodedata
from xml.sax.saxutils import escape

from lxml import etree

from statusgen.text import one_line, without_controls

#: Every C0 and C1 control, DEL, and lone surrogates of both halves.
EVERY_CONTROL = "".join(chr(c) for c in (*range(0x00, 0x20), *range(0x7F, 0xA0))) + "\ud800\udbff\udc00\udfff"


def test_without_controls_keeps_tab_and_newline_and_nothing_else_of_the_controls() -> None:
    cleaned = without_controls("a" + EVERY_CONTROL + "b")
    assert cleaned == "a\t\n\n\ufffd\ufffd\ufffd\ufffdb"  # tab, LF, then the lone CR as a newline
    assert [c for c in cleaned if unicodedata.category(c) == "Cc"] == ["\t", "\n", "\n"]


def test_line_ends_become_newlines() -> None:
    assert without_controls("one\r\ntwo\rthree\nfour") == "one\ntwo\nthree\nfour"


def test_an_ansi_colour_and_a_bidi_override_are_gone() -> None:
    assert without_controls("\x1b[31mred\x1b[0m \u202eevil") == "[31mred[0m evil"


def test_cleaned_text_is_utf8_and_well_formed_xml() -> None:
    cleaned = without_controls("x" + EVERY_CONTROL + "\ufffe\uffff" + "y")
    cleaned.encode("utf-8")  # a lone surrogate would raise here
    assert etree.fromstring(f"<t>{escape(cleaned)}</t>".encode()).text == cleaned


def test_one_line_is_words_single_spaced() -> None:
    assert one_line("  Payments\x0cAPI\r\n\tEU \x1b[1m ") == "Payments API EU [1m"
    assert one_line("a" + EVERY_CONTROL + "b") == "a \ufffd\ufffd\ufffd\ufffdb"

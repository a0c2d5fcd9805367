"""Escaping for markup made in Python (service and incident pages, feed entries).

``escape`` writes the same text as markupsafe's, which Jinja's autoescape
uses, so a page made in Python reads as a template would have rendered it.
It is quicker for plain strings: a service page escapes some 140 words, and
an incident's card and feed entry some 50, tens of thousands of times a full
build. A string is escaped by markupsafe's compiled escaping of text
(``_escape_inner``, what ``markupsafe.escape`` calls after its checks: 0.03-0.09
against 0.15-0.28 us a call here), or, where markupsafe comes without its
compiled part, by five replacements (``escape_text``). It returns ``str``,
not ``Markup``: the callers put its text into f-strings and wrap the whole
in ``Markup`` once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from markupsafe import escape as markup_escape


def escape_text(value: str) -> str:
    """A string as text safe in HTML and XML: ``& < > ' "`` as markupsafe writes them."""
    return (value.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("'", "&#39;").replace('"', "&#34;"))


def _compiled() -> Callable[[str], str]:
    """markupsafe's compiled escaping of a string, if it has one (it is not public: found by
    looking, and checked to write what ``escape_text`` writes), else ``escape_text``."""
    try:
        from markupsafe._speedups import _escape_inner  # type: ignore[import-not-found]
    except ImportError:
        return escape_text
    probe = "<a href=\"x\" title='y'>&amp;</a>"
    return _escape_inner if _escape_inner(probe) == escape_text(probe) else escape_text   # type: ignore[no-any-return]


_escape_str = _compiled()


def escape(value: Any) -> str:
    """``value`` as text safe in HTML and XML, text or attribute: ``& < > ' "`` as markupsafe
    writes them; markup (anything with ``__html__``) as it is; other values as ``str`` gives them."""
    if type(value) is str:
        return _escape_str(value)
    return str(markup_escape(value))

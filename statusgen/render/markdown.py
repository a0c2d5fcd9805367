"""Render: the operator's Markdown as sanitized HTML, for the pages and the feeds.

Two well-kept libraries, each a guard of its own: markdown-it-py parses CommonMark with raw
HTML off (``html=False``: a tag is shown as text) and images off (a page loads nothing from
elsewhere), and links only to http(s) and mailto; nh3 (the Rust ammonia sanitizer) then keeps
only the tags and attributes below, and again only those schemes. Only what nh3 returns is
marked safe (``Markup``): the templates keep autoescape on for everything else.
"""

from __future__ import annotations

from functools import cache

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

SCHEMES = frozenset({"http", "https", "mailto"})
TAGS = frozenset(
    {"p", "br", "a", "em", "strong", "code", "pre", "ul", "ol", "li", "blockquote", "h3", "h4", "h5", "h6", "hr"}
)
ATTRIBUTES = {"a": {"href"}, "ol": {"start"}}
MAX_CHARS = 64 << 10  # the notes folder's bound on a file: anything longer is cut, never rendered whole


def _allowed_link(url: str) -> bool:
    return url.split(":", 1)[0].strip().lower() in SCHEMES and ":" in url


@cache
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.disable(["image", "html_block", "html_inline"])
    md.validateLink = _allowed_link  # type: ignore[method-assign]
    return md


def to_html(source: str) -> Markup:
    """The Markdown ``source`` as sanitized HTML, safe to insert in a page."""
    html = _parser().render(source[:MAX_CHARS])
    return Markup(nh3.clean(html, tags=set(TAGS), attributes=ATTRIBUTES, url_schemes=set(SCHEMES)))

"""The operator's brand (docs/branding.md): a logo, a favicon, a stylesheet, an accent colour.

The files enter here, read once with the configuration and checked where they enter, so that
what ``check-config`` accepted is what the build copies into the tree:

- each at most ``MAX_BRAND_BYTES`` (read only that far), and of a kind its key takes: PNG by its
  signature, ICO by its header, SVG as XML whose root is ``<svg>``, CSS as UTF-8 text;
- an SVG holds nothing that runs or reaches out: no script (nor an element that carries one:
  ``foreignObject``, ``iframe``...), no event handler, no link or style to another file, no
  DOCTYPE or entity, no processing instruction. The pages show it through ``<img src>``, where
  nothing of it runs anyway; it is also served from the site's own origin, where a reader may
  open it as a document: refused there, a script could never run as the site's;
- a stylesheet imports nothing and names no other site: the pages' content security policy
  loads the site's own files only, so such a rule would fail in every reader's browser.

The accent is checked against the backgrounds text is read on in each theme, as
``templates/static/site.css`` declares them (``--bg``, ``--surface``): links and the site's name
in the accent must reach WCAG AA's 4.5:1 for normal text on each. Imports of statusgen: ``policy``
(the content types), ``values`` (``Invalid``).
"""

from __future__ import annotations

import math
import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from statusgen.config.values import Invalid, show
from statusgen.policy import CONTENT_TYPES

MAX_BRAND_BYTES = 512 << 10  # a logo, a favicon or a stylesheet: every page's reader loads it
BRAND_FOLDER = "static/brand"
#: The stylesheet statusgen makes of the brand (the logo's place in the header, the accent).
THEME_STYLESHEET = f"{BRAND_FOLDER}/theme.css"
#: Which kinds of file each key takes, by suffix.
KINDS = {"logo": ("svg", "png"), "favicon": ("svg", "png", "ico"), "stylesheet": ("css",)}
#: Where each lands in the tree (and the suffix after it); an ICO favicon where browsers look.
PLACES = {
    "logo": f"{BRAND_FOLDER}/logo",
    "favicon": f"{BRAND_FOLDER}/favicon",
    "stylesheet": f"{BRAND_FOLDER}/operator",
}
#: WCAG 2's least contrast for normal text (AA).
TEXT_CONTRAST = 4.5


@dataclass(frozen=True)
class BrandFile:
    """A file of the operator's, as read and checked, and where it lands in the tree."""

    source: Path
    path: str  # in the tree: static/brand/logo.svg
    data: bytes = field(repr=False, compare=False)
    # the image's own size, when it says it (the img's width and height); like the bytes, out of the
    # repr, which the keys of the build hold: they hold the bytes' digest instead (render.keys)
    width: int | None = field(default=None, repr=False)
    height: int | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return "/" + self.path

    @property
    def media_type(self) -> str:
        return CONTENT_TYPES[self.path.rsplit(".", 1)[1]]


@dataclass(frozen=True)
class Accent:
    """The operator's colour (``#rrggbb``) in the light theme, and in the dark one if given (links
    there keep statusgen's own colour otherwise: one colour seldom reads on both)."""

    light: str
    dark: str | None = None


# -- files ---------------------------------------------------------------------------------------


def brand_file(key: str, given: str, folder: Path) -> BrandFile:
    """The file ``given`` for ``key`` (relative to ``folder``), read and checked; Invalid says why not."""
    source = Path(os.path.abspath(folder / given))
    suffix = source.suffix.lower().lstrip(".")
    kinds = KINDS[key]
    if suffix not in kinds:
        names = " or ".join(", ".join(k.upper() for k in kinds).rsplit(", ", 1))
        article = "a" if key == "stylesheet" else "an"  # a CSS file, an SVG file
        raise Invalid(f"must name {article} {names} file (by its suffix), got {show(given)}")
    try:
        with source.open("rb") as file:  # bounded by what is read, not by the size the file reports
            data = file.read(MAX_BRAND_BYTES + 1)
    except OSError as exc:
        raise Invalid(
            f"{given} cannot be read ({exc.strerror}); give a file relative to the configuration file"
        ) from None
    if len(data) > MAX_BRAND_BYTES:
        raise Invalid(
            f"{given} is larger than {MAX_BRAND_BYTES >> 10} KB, and every reader would load it: make it smaller"
        )
    size = _CHECKS[suffix](data, given)
    place = "favicon" if suffix == "ico" else PLACES[key]  # /favicon.ico: where browsers look first
    return BrandFile(source, f"{place}.{suffix}", data, *(size or (None, None)))


Size = tuple[int, int] | None


def _png(data: bytes, given: str) -> Size:
    size = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    if data[:8] != b"\x89PNG\r\n\x1a\n" or data[12:16] != b"IHDR" or 0 in size:
        raise Invalid(f"{given} is not a PNG image (it lacks PNG's signature and header)")
    return size


def _ico(data: bytes, given: str) -> Size:
    if data[:4] != b"\x00\x00\x01\x00" or int.from_bytes(data[4:6], "little") == 0:
        raise Invalid(f"{given} is not an ICO icon (it lacks the ICO header)")
    return None


def _css(data: bytes, given: str) -> Size:
    text = _utf8(data, given)
    rules = _COMMENT.sub(" ", text)
    if re.search(r"@import|@font-face", rules, re.IGNORECASE):
        raise Invalid(
            f"{given} imports a file (@import) or a font (@font-face): the pages' content security policy loads "
            "neither, so it would fail in every browser; put the rules in this file, and use the readers' fonts"
        )
    for target in _URL.findall(rules):
        if re.match(r"(?i)[a-z][a-z0-9+.-]*:|//", target):
            raise Invalid(
                f"{given} names {target[:60]!r} in url(): the pages' content security policy loads the site's "
                "own files only, so it would fail in every browser; remove it"
            )
    return None


def _utf8(data: bytes, given: str) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Invalid(f"{given} is not UTF-8 text; save it as UTF-8") from None


_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)
_URL = re.compile(r"""url\(\s*['"]?\s*([^'")\s]*)""", re.IGNORECASE)
SVG_NS = "{http://www.w3.org/2000/svg}"
#: Elements that run or hold a document of their own, in any namespace (an XHTML script inside
#: an SVG runs when the SVG is opened as a document).
_RUNNING = {"script", "foreignobject", "iframe", "embed", "object", "handler", "listener"}
#: What an href may be: a part of the same file, or an image inside it.
_INSIDE = re.compile(r"#|data:image/(png|jpeg|gif|webp);base64,", re.IGNORECASE)


def _svg(data: bytes, given: str) -> Size:
    text = _utf8(data, given)
    if re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", text):  # XML forbids them; UTF-16 read as UTF-8 is full of NULs
        raise Invalid(f"{given} holds control characters, which XML forbids: save it as UTF-8")
    if re.search(r"<!(DOCTYPE|ENTITY)", text, re.IGNORECASE):
        raise Invalid(f"{given} declares a DOCTYPE or entities: remove them (an SVG image needs neither)")
    parser: ET.XMLPullParser[Any] = ET.XMLPullParser(events=("start", "pi"))  # an instruction may precede the root
    try:
        parser.feed(text)  # the characters just read, whatever encoding the file declares
        parser.close()
    except ET.ParseError as exc:
        raise Invalid(f"{given} is not well-formed XML ({exc}); export it again as plain SVG") from None
    elements: list[ET.Element] = []
    events: list[tuple[str, Any]] = list(parser.read_events())  # type: ignore[arg-type]  # the two asked for
    for event, item in events:
        problem = "holds a processing instruction (<?...?>)" if event == "pi" else _svg_problem(item)
        if problem:
            raise Invalid(
                f"{given} {problem}: an SVG of the brand is served from the site's own address, where it must "
                "neither run nor load anything; remove it (or export the SVG again as plain SVG)"
            )
        elements.append(item)
    if not elements or elements[0].tag != f"{SVG_NS}svg":
        raise Invalid(f'{given} is not an SVG image: its root is not an svg element of xmlns="{SVG_NS[1:-1]}"')
    return _svg_size(elements[0])


def _svg_problem(element: ET.Element) -> str | None:
    """What of ``element`` an SVG served from the site may not hold, in words, or None."""
    name = _local(element.tag).lower()
    if name in _RUNNING:
        return f"holds a <{_local(element.tag)}> element"
    for attribute, value in element.attrib.items():
        local = _local(attribute).lower()
        if local.startswith("on"):
            return f"holds an event handler ({_local(attribute)} on <{_local(element.tag)}>)"
        if local in ("href", "src") and not _INSIDE.match(value.strip()):
            return f"refers to another file ({_local(attribute)}={value.strip()[:60]!r})"
        if local == "attributename" and value.strip().lower().removeprefix("xlink:") in ("href", "src"):
            return f"animates a link (<{_local(element.tag)} attributeName={value!r}>)"
        if _outside(value):
            return f"refers to another file ({_local(attribute)}={value.strip()[:60]!r})"
    if name == "style" and element.text and (_outside(element.text) or "@import" in element.text.lower()):
        return "has a style that refers to another file"
    return None


def _outside(value: str) -> bool:
    """Whether a value names something outside the file: a url() not to a part of it, or a script URL."""
    squeezed = re.sub(r"\s", "", value).lower()
    return "javascript:" in squeezed or any(not t.startswith("#") for t in _URL.findall(value))


def _local(name: str) -> str:
    return name.rsplit("}", 1)[-1]


def _svg_size(root: ET.Element) -> Size:
    """The size an SVG says it has: its width and height in pixels, else its viewBox's."""
    width, height = (_pixels(root.get(k)) for k in ("width", "height"))
    if width and height:
        return width, height
    box = re.split(r"[\s,]+", (root.get("viewBox") or "").strip())
    try:
        w, h = float(box[2]), float(box[3])
    except (IndexError, ValueError):
        return None
    return (round(w), round(h)) if w >= 1 and h >= 1 and math.isfinite(w * h) else None


def _pixels(value: str | None) -> int | None:
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(px)?\s*", value or "")
    return round(float(found.group(1))) if found and float(found.group(1)) >= 1 else None


_CHECKS: dict[str, Callable[[bytes, str], Size]] = {"png": _png, "ico": _ico, "css": _css, "svg": _svg}


# -- the accent colour ---------------------------------------------------------------------------

THEMES = ("light", "dark")
#: The backgrounds of site.css that text is read on, and how a reader knows them.
BACKGROUNDS = {"--bg": "the page", "--surface": "the header and panels"}
_HEX = re.compile(r"#([0-9a-fA-F]{3}|[0-9a-fA-F]{6})")
_FORM = 'a colour such as "#0a5fc2", or one for each theme such as { light = "#0a5fc2", dark = "#6cb6ff" }'


def accent(value: Any) -> Accent:
    """``site.accent``: a colour (the light theme's) or a table of one for each theme, each
    readable as text on its theme's backgrounds."""
    if isinstance(value, str):
        given: dict[str, Any] = {"light": value}
    elif isinstance(value, Mapping) and "light" in value and set(value) <= set(THEMES):
        given = dict(value)
    else:
        raise Invalid(f"must be {_FORM}, got {show(value)}")
    colours = {theme: _colour(given[theme]) for theme in THEMES if theme in given}
    unreadable = [problem for theme, colour in colours.items() if (problem := _unreadable(colour, theme))]
    if unreadable:
        raise Invalid("; and ".join(unreadable))
    return Accent(colours["light"], colours.get("dark"))


def _colour(value: Any) -> str:
    if not isinstance(value, str) or not _HEX.fullmatch(value.strip()):
        raise Invalid(f"must be {_FORM}, got {show(value)}")
    digits = value.strip()[1:].lower()
    return "#" + ("".join(c * 2 for c in digits) if len(digits) == 3 else digits)


def _unreadable(colour: str, theme: str) -> str | None:
    """Why ``colour`` cannot be text in ``theme`` (its worst background, the ratio, a colour
    that can), or None."""
    backgrounds = theme_backgrounds()[theme]
    ratio, name = min((contrast(colour, backgrounds[n]), n) for n in BACKGROUNDS)
    if ratio >= TEXT_CONTRAST:
        return None
    fix = readable_near(colour, theme)
    verb = "darken" if theme == "light" else "lighten"
    return (
        f'"{colour}" gives link text of {_ratio(ratio)} on {BACKGROUNDS[name]} ({backgrounds[name]}) in the '
        f"{theme} theme, under the {TEXT_CONTRAST}:1 WCAG AA asks of text: {verb} it, "
        f'e.g. "{fix}" ({_ratio(_worst(fix, theme))})'
    )


def _ratio(ratio: float) -> str:
    return f"{math.floor(ratio * 100) / 100:.2f}:1"  # never rounded up to the line it misses


def readable_near(colour: str, theme: str) -> str:
    """The colour nearest ``colour`` on the way to black (light theme) or white (dark theme)
    that reads on each of the theme's backgrounds: the fix a refusal proposes."""
    rgb = _rgb(colour)
    towards = 0 if theme == "light" else 255
    for step in range(1, 101):
        mixed = "#" + "".join(f"{round(c + (towards - c) * step / 100):02x}" for c in rgb)
        if _worst(mixed, theme) >= TEXT_CONTRAST:
            return mixed
    return "#000000" if theme == "light" else "#ffffff"


def _worst(colour: str, theme: str) -> float:
    backgrounds = theme_backgrounds()[theme]
    return min(contrast(colour, backgrounds[n]) for n in BACKGROUNDS)


def _rgb(colour: str) -> tuple[int, int, int]:
    return int(colour[1:3], 16), int(colour[3:5], 16), int(colour[5:7], 16)


def luminance(colour: str) -> float:
    """WCAG 2's relative luminance of ``#rrggbb``."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = map(channel, _rgb(colour))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    """WCAG 2's contrast ratio of two colours, 1 to 21."""
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@cache
def theme_backgrounds() -> dict[str, dict[str, str]]:
    """Each theme's backgrounds as templates/static/site.css declares them (``:root``, then
    ``:root`` in its ``prefers-color-scheme: dark`` query), by custom property."""
    css = (files("statusgen.templates") / "static" / "site.css").read_text(encoding="utf-8")
    light = re.search(r":root\s*\{(.*?)\}", css, re.DOTALL)
    dark = re.search(r"@media\s*\(prefers-color-scheme:\s*dark\)\s*\{\s*:root\s*\{(.*?)\}", css, re.DOTALL)
    out = {}
    for theme, block in (("light", light), ("dark", dark)):
        found = dict(re.findall(r"(--[\w-]+):\s*(#[0-9a-fA-F]{6})\s*;", block.group(1) if block else ""))
        if any(name not in found for name in BACKGROUNDS):
            raise RuntimeError(f"templates/static/site.css declares no {' or '.join(BACKGROUNDS)} in its {theme} theme")
        out[theme] = {name: found[name].lower() for name in BACKGROUNDS}
    return out

"""The operator's brand (docs/branding.md): site.logo, site.favicon, site.stylesheet, site.accent and
site.powered_by, from check-config to the tree, both servers, and Chromium with axe in both themes.

The brand used throughout is the example's (examples/brand/): so the files the documentation
shows are the ones these tests read, serve and look at.
"""

from __future__ import annotations

import re
import struct
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from statusgen.config import load_config
from statusgen.config.brand import MAX_BRAND_BYTES, theme_backgrounds
from statusgen.errors import ConfigError
from tests.conftest import write_config
from tests.test_accessibility import STATIC, contrast, theme_colours

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "brand"
LOGO = (EXAMPLE / "acme-logo.svg").read_bytes()
STYLESHEET = (EXAMPLE / "acme.css").read_bytes()
LIGHT, DARK = "#5046e5", "#a5a0ff"  # the example's accent (examples/brand/services.toml)
BRAND = f'logo = "logo.svg"\nstylesheet = "acme.css"\naccent = {{ light = "{LIGHT}", dark = "{DARK}" }}\n'
BODY = """
[categories]
apis = "APIs"

[[services]]
slug = "alpha"
name = "Alpha API"
category = "apis"
[[services.checks]]
url = "http://127.0.0.1:9/up"
"""
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def png(width: int, height: int) -> bytes:
    """A real PNG of one colour, as an image editor writes one."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\x50\x46\xe5" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def ico(image: bytes) -> bytes:
    """An ICO file holding one PNG image (as browsers and icon tools read it)."""
    entry = struct.pack("<BBBBHHII", 16, 16, 0, 0, 1, 32, len(image), 6 + 16)
    return struct.pack("<HHH", 0, 1, 1) + entry + image


def svg(inside: str, root: str = 'viewBox="0 0 120 40"') -> bytes:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" {root}>{inside}</svg>'
    ).encode()


def site_with(tmp: Path, keys: str, files: dict[str, bytes] | None = None, body: str = BODY) -> Path:
    """A configuration whose [site] has ``keys``, with ``files`` beside it."""
    for name, data in (files or {}).items():
        (tmp / name).write_bytes(data)
    return write_config(tmp, body, f'output = "site"\nstore = "data/s.db"\n{keys}')


def problems_of(path: Path) -> list[str]:
    with pytest.raises(ConfigError) as refused:
        load_config(path)
    return refused.value.problems


# -- check-config ----------------------------------------------------------------------------


def test_a_brand_is_read_with_the_configuration(tmp_path: Path) -> None:
    files = {"logo.svg": LOGO, "acme.css": STYLESHEET, "icon.png": png(32, 16)}
    site = load_config(site_with(tmp_path, BRAND + 'favicon = "icon.png"\n', files)).site
    assert site.logo is not None and site.logo.data == LOGO and site.logo.path == "static/brand/logo.svg"
    assert (site.logo.width, site.logo.height) == (40, 40)  # the example's own size
    assert site.favicon is not None and (site.favicon.width, site.favicon.height) == (32, 16)  # read from IHDR
    assert site.favicon.media_type == "image/png"
    assert site.stylesheet is not None and site.stylesheet.data == STYLESHEET
    assert site.accent is not None and (site.accent.light, site.accent.dark) == (LIGHT, DARK)
    assert site.brand_stylesheets == ("/static/brand/theme.css", "/static/brand/operator.css")  # ours first


HOSTILE_SVGS = {
    "a script": ("<script>alert(document.cookie)</script>", "holds a <script> element"),
    "an XHTML script": (
        '<h:script xmlns:h="http://www.w3.org/1999/xhtml">alert(1)</h:script>',
        "holds a <script> element",
    ),
    "an event handler": ('<rect width="9" height="9" onload="alert(1)"/>', "holds an event handler (onload"),
    "a foreign object": ("<foreignObject><p>hi</p></foreignObject>", "holds a <foreignObject> element"),
    "an image of another site": ('<image href="https://tracker.example/p.png"/>', "refers to another file"),
    "a script link": ('<a xlink:href="javascript:alert(1)"><rect width="9" height="9"/></a>', "refers to another"),
    "a link animated": ('<a href="#x"><set attributeName="href" to="javascript:alert(1)"/></a>', "animates a link"),
    "a style importing": ("<style>@import url(https://fonts.example/a.css);</style>", "has a style that refers"),
    "a paint from elsewhere": ('<rect style="fill:url(https://x.example/p.svg#g)"/>', "refers to another file"),
}


@pytest.mark.parametrize("inside, said", HOSTILE_SVGS.values(), ids=HOSTILE_SVGS)
def test_an_svg_that_could_run_or_reach_out_is_refused(tmp_path: Path, inside: str, said: str) -> None:
    """The logo is served from the site's own origin: opened as a document there, a script would
    run as the site's, and a reference would tell another site who reads the page."""
    found = problems_of(site_with(tmp_path, 'logo = "logo.svg"\n', {"logo.svg": svg(inside)}))
    assert len(found) == 1 and found[0].startswith("services.toml: [site]: logo logo.svg "), found
    assert said in found[0] and "remove it" in found[0]


@pytest.mark.parametrize(
    "data, said",
    [
        (b'<?xml-stylesheet href="https://x.example/a.css"?>' + svg(""), "holds a processing instruction"),
        (b'<!DOCTYPE svg [<!ENTITY a "aaaa">]>' + svg("&a;"), "declares a DOCTYPE or entities"),
        (b'<html xmlns="http://www.w3.org/1999/xhtml"></html>', "is not an SVG image"),
        (b"<svg", "is not well-formed XML"),
        (b"\xff\xfe<svg/>", "is not UTF-8 text"),
        # UTF-16 without its mark reads as UTF-8 (NULs between the letters): its entities would hide
        (b'<!DOCTYPE svg [<!ENTITY a "aaaa">]>'.decode().encode("utf-16-le") + svg(""), "holds control characters"),
    ],
    ids=["stylesheet instruction", "entities", "not svg", "broken", "not utf-8", "utf-16"],
)
def test_an_svg_that_is_not_a_plain_image_is_refused(tmp_path: Path, data: bytes, said: str) -> None:
    found = problems_of(site_with(tmp_path, 'favicon = "icon.svg"\n', {"icon.svg": data}))
    assert len(found) == 1 and found[0].startswith("services.toml: [site]: favicon icon.svg "), found
    assert said in found[0]


def test_an_svg_that_only_refers_to_itself_is_kept(tmp_path: Path) -> None:
    """Gradients, reuse and embedded pictures are parts of the file itself: logos are made of them."""
    inside = (
        '<defs><linearGradient id="g"><stop offset="0" stop-color="#5046e5"/></linearGradient></defs>'
        '<rect id="r" width="9" height="9" fill="url(#g)" style="stroke:url(#g)"/><use href="#r"/>'
        '<use xlink:href="#r"/><image href="data:image/png;base64,iVBORw0KGgo="/>'
    )
    site = load_config(
        site_with(tmp_path, 'logo = "logo.svg"\n', {"logo.svg": svg(inside, 'width="60px" height="20"')})
    )
    assert site.site.logo is not None and (site.site.logo.width, site.site.logo.height) == (60, 20)


def test_brand_files_are_bounded_checked_and_named_by_their_key(tmp_path: Path) -> None:
    files = {
        "big.png": png(1, 1) + b"\0" * MAX_BRAND_BYTES,
        "fake.png": b"GIF89a not a png",
        "logo.gif": b"GIF89a",
        "icon.ico": b"\x89PNG",
    }
    keys = 'logo = "big.png"\nfavicon = "icon.ico"\nstylesheet = "missing.css"\n'
    found = problems_of(site_with(tmp_path, keys, files))
    assert found == [
        "services.toml: [site]: logo big.png is larger than 512 KB, and every reader would load it: make it smaller",
        "services.toml: [site]: favicon icon.ico is not an ICO icon (it lacks the ICO header)",
        "services.toml: [site]: stylesheet missing.css cannot be read (No such file or directory); give a file "
        "relative to the configuration file",
    ]
    for keys, said in (('logo = "fake.png"', "is not a PNG image"), ('logo = "logo.gif"', "must name a SVG or PNG")):
        (found,) = problems_of(site_with(tmp_path, keys + "\n"))
        assert found.startswith("services.toml: [site]: logo ") and said in found


@pytest.mark.parametrize(
    "css, said",
    [
        ("@import url(/other.css);", "imports a file (@import)"),
        ('@font-face { font-family: A; src: url("/a.woff2"); }', "or a font (@font-face)"),
        ("body { background: url(https://cdn.example/bg.png); }", "names 'https://cdn.example/bg.png' in url()"),
        ("body { background: url('//cdn.example/bg.png'); }", "names '//cdn.example/bg.png' in url()"),
        ("body { background: url(data:image/png;base64,AAAA); }", "names 'data:image/png;base64,AAAA' in url()"),
    ],
    ids=["import", "font", "another site", "another site without scheme", "data"],
)
def test_a_stylesheet_that_would_load_what_the_policy_refuses_is_refused(tmp_path: Path, css: str, said: str) -> None:
    """The pages' content security policy loads the site's own files only (and no font): such a
    rule would fail in every reader's browser, silently; check-config says so at once."""
    (found,) = problems_of(site_with(tmp_path, 'stylesheet = "a.css"\n', {"a.css": css.encode()}))
    assert found.startswith("services.toml: [site]: stylesheet a.css ") and said in found
    kept = "/* url(https://in.a.comment) */ .top { background: url(/static/brand/logo.svg) no-repeat; }"
    assert load_config(site_with(tmp_path, 'stylesheet = "a.css"\n', {"a.css": kept.encode()})).site.stylesheet


def test_the_accent_is_checked_against_the_backgrounds_of_the_stylesheet() -> None:
    """Both themes' backgrounds, as templates/static/site.css declares them, not a copy."""
    declared = theme_colours((STATIC / "site.css").read_text(encoding="utf-8"))
    assert theme_backgrounds() == {t: {n: declared[t][n] for n in ("--bg", "--surface")} for t in ("light", "dark")}


def readable(colour: str, theme: str) -> float:
    """The lowest contrast of ``colour`` on the theme's backgrounds, computed by the tests' own rule."""
    backgrounds = theme_colours((STATIC / "site.css").read_text(encoding="utf-8"))[theme]
    return min(contrast(colour, backgrounds[n]) for n in ("--bg", "--surface"))


@pytest.mark.parametrize(
    "accent, theme, worst",
    [
        ('"#ffcc00"', "light", "1.38:1 on the header and panels (#f4f5f7)"),
        ('"#635bff"', "light", "4.30:1 on the header and panels (#f4f5f7)"),
        ('{ light = "#0a5fc2", dark = "#1f3a93" }', "dark", "1.69:1 on the header and panels (#181c22)"),
    ],
    ids=["yellow", "nearly", "dark theme"],
)
def test_an_accent_under_wcag_aa_is_refused_with_its_ratio_and_a_fix(
    tmp_path: Path, accent: str, theme: str, worst: str
) -> None:
    (found,) = problems_of(site_with(tmp_path, f"accent = {accent}\n"))
    assert found.startswith("services.toml: [site]: accent ") and f"{worst} in the {theme} theme" in found, found
    verb, fix, ratio = re.search(r'(darken|lighten) it, e\.g\. "(#[0-9a-f]{6})" \((\d\.\d\d):1\)', found).groups()
    assert verb == ("darken" if theme == "light" else "lighten")
    assert readable(fix, theme) >= 4.5 and f"{readable(fix, theme):.2f}" >= ratio  # the fix reads, as said
    fixed = accent.replace(re.search(r"#[0-9a-f]{6}", found).group(), fix)
    assert load_config(site_with(tmp_path, f"accent = {fixed}\n")).site.accent is not None


def test_an_accent_is_a_colour_or_one_for_each_theme(tmp_path: Path) -> None:
    for given in ('"blue"', '{ dark = "#a5a0ff" }', '{ light = "#5046e5", dim = "#000000" }', "12"):
        (found,) = problems_of(site_with(tmp_path, f"accent = {given}\n"))
        assert found.startswith("services.toml: [site]: accent must be a colour such as"), found
    site = load_config(site_with(tmp_path, 'accent = "#036"\n')).site
    assert site.accent is not None and (site.accent.light, site.accent.dark) == ("#003366", None)

"""The operator's brand (docs/branding.md): site.logo, site.favicon, site.stylesheet, site.accent and
site.powered_by, from check-config to the tree, both servers, and Chromium with axe in both themes.

The brand used throughout is the example's (examples/brand/): so the files the documentation
shows are the ones these tests read, serve and look at.
"""

from __future__ import annotations

import os
import re
import shutil
import struct
import subprocess
import threading
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import lxml.html
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, sync_playwright

from statusgen.config import Config, load_config
from statusgen.config.brand import MAX_BRAND_BYTES, theme_backgrounds
from statusgen.cycle import rebuild, run_cycle
from statusgen.demo import DemoServer, demo_config
from statusgen.errors import ConfigError
from statusgen.render.tree import read_manifest
from statusgen.timeutil import utcnow
from statusgen.web.serve import PreviewServer
from tests.conformance import Server, start_nginx, start_preview
from tests.conftest import write_config
from tests.test_accessibility import STATIC, contrast, theme_colours
from tests.test_browser import ARGS, ARTIFACTS, CHROMIUM
from tests.test_pages import DEMO_CYCLES, StepClock

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
    for keys, said in (
        ('logo = "fake.png"', "is not a PNG image"),
        ('logo = "logo.gif"', "must name an SVG or PNG file (by its suffix)"),
    ):
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


# -- the tree ---------------------------------------------------------------------------------


def branded_tree(tmp: Path, keys: str = BRAND, files: dict[str, bytes] | None = None) -> tuple[Config, Path]:
    """A configuration with ``keys`` built once from a new store; the served tree."""
    tmp.mkdir(exist_ok=True)
    config = load_config(site_with(tmp, keys, {"logo.svg": LOGO, "acme.css": STYLESHEET, **(files or {})}))
    rebuild(config, lambda: NOW, new_store=not config.site.store.exists())
    return config, config.site.output.resolve()


def page(tree: Path, rel: str) -> lxml.html.HtmlElement:
    return lxml.html.document_fromstring((tree / rel).read_text(encoding="utf-8"))


def test_a_branded_build_copies_the_files_and_every_page_shows_them(tmp_path: Path) -> None:
    config, tree = branded_tree(tmp_path / "a", BRAND + 'languages = ["en", "de"]\n')
    assert (tree / "static/brand/logo.svg").read_bytes() == LOGO
    assert (tree / "static/brand/operator.css").read_bytes() == STYLESHEET
    theme = (tree / "static/brand/theme.css").read_text()
    assert f"--link: {LIGHT};" in theme and f"--link: {DARK};" in theme and ".brand .logo" in theme
    pages = ["index.html", "services/alpha/index.html", "incidents/index.html", "_errors/404.html", "de/index.html"]
    for rel in pages:
        doc = page(tree, rel)
        sheets = doc.xpath("//link[@rel='stylesheet']/@href")
        assert sheets == ["/static/site.css", "/static/brand/theme.css", "/static/brand/operator.css"], rel
        assert doc.xpath("//link[@rel='icon']/@href") == ["/static/brand/logo.svg"], rel  # the logo, by default
        (logo,) = doc.xpath("//header//a[@class='brand']/img")
        assert (logo.get("src"), logo.get("width"), logo.get("height")) == ("/static/brand/logo.svg", "40", "40")
        assert logo.get("alt") == ("Logo von Test status" if rel.startswith("de/") else "Test status logo"), rel
        assert doc.xpath("//footer//a[@href='https://pypi.org/project/statusgen/']"), rel
    for rel in ("embed/index.html", "embed/alpha/index.html", "de/embed/index.html"):
        doc = page(tree, rel)
        assert doc.xpath("//link[@rel='stylesheet']/@href")[1:] == [
            "/static/brand/theme.css",
            "/static/brand/operator.css",
        ]
        (logo,) = doc.xpath("//h1/a/img[@class='logo']")
        assert logo.get("src") == "/static/brand/logo.svg" and logo.get("alt"), rel
    assert config.site.shows_powered_by


def test_powered_by_statusgen(tmp_path: Path) -> None:
    """The footer names statusgen by default (issue 57), branded or not, unless asked not to."""
    cases = {
        "": True,
        "powered_by = true\n": True,
        "powered_by = false\n": False,
        BRAND: True,
        BRAND + "powered_by = false\n": False,
    }
    for n, (keys, shown) in enumerate(cases.items()):
        _, tree = branded_tree(tmp_path / str(n), keys)
        links = page(tree, "index.html").xpath("//footer//a[@href='https://pypi.org/project/statusgen/']/text()")
        assert links == (["Powered by statusgen"] if shown else []), keys
        assert (tree / "static/brand").exists() == keys.startswith("logo"), keys


def test_a_changed_brand_file_reaches_the_tree_and_every_page_that_shows_it(tmp_path: Path) -> None:
    """A page kept by its key (a service page) shows the logo's size: the logo's bytes are part of
    every key, so a new logo of another shape under the same name is news to it."""
    config, tree = branded_tree(tmp_path)
    service = "services/alpha/index.html"
    key = read_manifest(tree)[service].key
    wide = svg('<rect width="120" height="40" fill="#5046e5"/>')
    (tmp_path / "logo.svg").write_bytes(wide)
    (tmp_path / "acme.css").write_bytes(b".top { font-weight: 700; }\n")
    config = load_config(config.path)
    rebuild(config, lambda: NOW)
    tree = config.site.output.resolve()
    assert (tree / "static/brand/logo.svg").read_bytes() == wide
    assert (tree / "static/brand/operator.css").read_bytes() == b".top { font-weight: 700; }\n"
    (logo,) = page(tree, service).xpath("//header//img[@class='logo']")
    assert (logo.get("width"), logo.get("height")) == ("120", "40")
    assert read_manifest(tree)[service].key != key


def test_an_ico_favicon_is_where_browsers_look(tmp_path: Path) -> None:
    icon = ico(png(16, 16))
    _, tree = branded_tree(tmp_path, 'favicon = "icon.ico"\n', {"icon.ico": icon})
    assert (tree / "favicon.ico").read_bytes() == icon  # in place of statusgen's
    doc = page(tree, "index.html")
    assert doc.xpath("//link[@rel='icon']/@href") == ["/favicon.ico"]
    assert doc.xpath("//link[@rel='icon']/@type") == ["image/x-icon"]
    assert not doc.xpath("//header//img") and not (tree / "static/brand/theme.css").exists()  # no logo, no accent


# -- both servers ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def branded_files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tree holding a brand file of each kind: an SVG logo, a PNG favicon, both stylesheets, and
    an ICO favicon at /favicon.ico (built as another site's, where it is the favicon)."""
    tmp = tmp_path_factory.mktemp("brand-served")
    _, tree = branded_tree(tmp, BRAND + 'favicon = "icon.png"\n', {"icon.png": png(32, 32)})
    ico_tmp = tmp_path_factory.mktemp("brand-ico")
    _, other = branded_tree(ico_tmp, 'favicon = "icon.ico"\n', {"icon.ico": ico(png(16, 16))})
    (tree / "favicon.ico").write_bytes((other / "favicon.ico").read_bytes())  # both kinds, one tree
    return tree


@pytest.fixture(scope="module", params=["serve", "nginx"])
def brand_server(
    request: pytest.FixtureRequest, branded_files: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    server: Server = (
        start_preview(branded_files)
        if request.param == "serve"
        else start_nginx(branded_files, tmp_path_factory.mktemp("nginx-brand"))
    )
    yield server
    server.stop()


@pytest.mark.parametrize(
    "path, kind",
    [
        ("/static/brand/logo.svg", "image/svg+xml"),
        ("/static/brand/favicon.png", "image/png"),
        ("/favicon.ico", "image/x-icon"),
        ("/static/brand/operator.css", "text/css; charset=utf-8"),
        ("/static/brand/theme.css", "text/css; charset=utf-8"),
    ],
)
def test_both_servers_send_the_brand_files_as_what_they_are(brand_server: Server, path: str, kind: str) -> None:
    """With X-Content-Type-Options: nosniff, a browser uses a stylesheet or an image only when its
    type says so; and the SVG, opened as a document, runs under a policy that lets nothing run."""
    with brand_server.client() as http:
        answer = http.get(path)
    assert answer.status_code == 200 and answer.content == brand_server.file(path.lstrip("/"))
    assert answer.headers["content-type"] == kind
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["content-security-policy"] == "default-src 'none'; frame-ancestors 'none'"


# -- Chromium ---------------------------------------------------------------------------------


@dataclass
class BrandedSite:
    base: str
    config: Config


@pytest.fixture(scope="module")
def branded_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[BrandedSite]:
    """The demo's services, run as the page tests run them (tests.test_pages.demo_build), with the
    example's brand and a second language; served by the preview server."""
    tmp = tmp_path_factory.mktemp("branded-demo")
    for name in ("acme-logo.svg", "acme.css"):
        shutil.copy(EXAMPLE / name, tmp / name)
    targets = DemoServer()
    threading.Thread(target=targets.serve_forever, daemon=True).start()
    try:
        text = demo_config(targets.server_address[1], 8080, tmp, tmp / "site", 30, languages=("en", "de"))
        brand = (EXAMPLE / "services.toml").read_text().split("[site]\n", 1)[1].split("\n\n", 1)[0]
        text = re.sub(r'title = "statusgen demo"\n', brand + "\n", text, count=1)
        (tmp / "demo.toml").write_text(text, encoding="utf-8")
        config = load_config(tmp / "demo.toml")
        clock = StepClock(utcnow().replace(microsecond=0) - timedelta(days=1))
        for n in range(DEMO_CYCLES):
            if n == DEMO_CYCLES - 1:
                clock.t = utcnow().replace(microsecond=0)
            run_cycle(config, clock)
            clock.step()
    finally:
        targets.shutdown()
        targets.server_close()
    server = PreviewServer(config.site.output, "127.0.0.1", 0, quiet=True, per_minute=100_000)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield BrandedSite(f"http://127.0.0.1:{server.server_address[1]}", config)
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def chromium(branded_site: BrandedSite) -> Iterator[Browser]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


def _hex(css_colour: str) -> str:
    r, g, b = (int(v) for v in re.findall(r"\d+", css_colour)[:3])
    return f"#{r:02x}{g:02x}{b:02x}"


def _drawn(page: Page, selector: str, prop: str) -> str:
    return page.eval_on_selector(selector, f"e => getComputedStyle(e).{prop}")


SCREENSHOT = ROOT / "docs" / "branded.png"
REFRESH = "STATUSGEN_REFRESH_SCREENSHOT"  # `make screenshot` sets it (tests/test_demo.py)
AXE = Axe()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_a_branded_site_in_chromium_reads_well_with_no_accessibility_violation(
    chromium: Browser, branded_site: BrandedSite, scheme: str
) -> None:
    """Every kind of page of the branded demo in Chromium, in each theme: the logo drawn, the
    operator's stylesheet applied after ours, links and the site's name in the theme's accent at
    4.5:1 or more as drawn, nothing refused by the content security policy or fetched elsewhere,
    and axe-core finds nothing."""
    slug = branded_site.config.services[0].slug
    accent = LIGHT if scheme == "light" else DARK
    urls = ["/", f"/services/{slug}/", "/incidents/", "/method/", "/de/", "/nope/", "/embed/", f"/embed/{slug}/"]
    found = {}
    for url in urls:
        context = chromium.new_context(viewport={"width": 1280, "height": 900}, color_scheme=scheme)  # type: ignore[arg-type]
        page = context.new_page()
        errors: list[str] = []
        requests: list[str] = []
        page.on("console", lambda m, errors=errors: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e, errors=errors: errors.append(str(e)))
        page.on("request", lambda r, requests=requests: requests.append(r.url))
        answer = page.goto(branded_site.base + url, wait_until="load")
        assert answer is not None and answer.status == (404 if url == "/nope/" else 200), url
        if url == "/nope/":  # the page itself, answered 404 as it should be
            errors = [
                e
                for e in errors
                if not e.startswith("Failed to load resource: the server responded with a status of 404")
            ]
        assert errors == [], (url, errors)  # a style or image the policy refused would be said here
        assert all(r.startswith(branded_site.base + "/") for r in requests), (url, requests)
        assert page.eval_on_selector("img.logo", "i => i.complete && i.naturalWidth") == 40, url
        if url.startswith("/embed/"):
            link = "h1 a"
            background = _drawn(page, "h1", "backgroundColor")
        else:
            link = "nav a:not([aria-current])"
            background = _drawn(page, ".top", "backgroundColor")
            assert _hex(_drawn(page, ".top", "borderTopColor")) == accent, url  # the band
            assert _hex(_drawn(page, ".brand", "color")) == accent, url
            assert "Georgia" in _drawn(page, ".brand", "fontFamily"), url  # the operator's rule won
        drawn = _hex(_drawn(page, link, "color"))
        assert drawn == accent, url
        assert contrast(drawn, _hex(background)) >= 4.5, (url, drawn, background)
        if url == "/":
            ARTIFACTS.mkdir(exist_ok=True)
            shot = page.screenshot(path=str(ARTIFACTS / f"branded-{scheme}.png"))
            if os.environ.get(REFRESH) == "1":
                SCREENSHOT.with_name(f"branded{'' if scheme == 'light' else '-dark'}.png").write_bytes(shot)
        violations = AXE.run(page).response["violations"]
        if violations:
            found[url] = [(v["id"], v["impact"], [n["html"][:120] for n in v["nodes"][:3]]) for v in violations]
        context.close()
    assert found == {}


def test_the_screenshots_of_the_brand_are_in_the_docs() -> None:
    """docs/branding.md shows the branded demo in both themes, as the browser test takes it."""
    doc = (ROOT / "docs" / "branding.md").read_text(encoding="utf-8")
    for name in ("branded.png", "branded-dark.png"):
        shot = (ROOT / "docs" / name).read_bytes()
        assert shot[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(shot[16:20], "big") == 1280, name
        assert f"({name})" in doc, name
    assert "[docs/branding.md](docs/branding.md)" in (ROOT / "README.md").read_text(encoding="utf-8")
    # `make screenshot` takes them again: it runs this file's browser test with REFRESH set
    recipe = subprocess.run(["make", "-n", "screenshot"], cwd=ROOT, capture_output=True, text=True, check=True)
    assert f"{REFRESH}=1" in recipe.stdout and "tests/test_brand.py" in recipe.stdout
    assert "branded_site_in_chromium" in recipe.stdout

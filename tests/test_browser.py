"""The website in a real browser: Debian's Chromium driven by Playwright.

The demo build is served by the preview server; each page is opened at 1280 px and
360 px wide, in light and dark, with every request and console message recorded.
Screenshots go to test-artifacts/ (gitignored) for a person to look at.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from statusgen import charts
from statusgen.history import RANGES
from statusgen.pages import status_word
from statusgen.serve import PreviewServer
from statusgen.state import STATUSES

from .test_accessibility import contrast
from .test_pages import DemoBuild, demo_build

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"
VARIANTS = [(scheme, width) for scheme in ("light", "dark") for width in (1280, 360)]


@dataclass
class Site:
    base: str
    build: DemoBuild

    def json(self, url: str) -> Any:
        """An API answer, over HTTP from the same server as the pages."""
        answer = httpx.get(self.base + url)
        assert answer.status_code == 200, url
        return answer.json()


@dataclass
class Visit:
    page: Page
    requests: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


@pytest.fixture(scope="module")
def site() -> Iterator[Site]:
    build = demo_build()
    server = PreviewServer(build.root, "127.0.0.1", 0, quiet=True, per_minute=100_000)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield Site(f"http://127.0.0.1:{server.server_address[1]}", build)
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(site: Site) -> Iterator[Browser]:
    """Chromium, started after the demo is built: Playwright's loop would stop ``asyncio.run``."""
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def visit(browser: Browser, url: str, scheme: str = "light", width: int = 1280) -> Visit:
    """Open a page in a fresh context, recording every request and every console error."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)  # type: ignore[arg-type]
    page = context.new_page()
    seen = Visit(page)
    page.on("request", lambda r: seen.requests.append(r.url))
    page.on("console", lambda m: seen.errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: seen.errors.append(str(e)))
    page.on("requestfailed", lambda r: seen.errors.append(f"failed: {r.url}"))
    answer = page.goto(url, wait_until="load")
    assert answer is not None and answer.status == 200, url
    return seen


def check_every_variant(browser: Browser, site: Site, path: str, name: str,
                        inspect: Callable[[Page, str, int], None] | None = None) -> None:
    """Light and dark, wide and narrow: a screenshot, no console error, nothing outside the site.

    ``inspect(page, scheme, width)`` runs further checks on each variant while it is open.
    """
    ARTIFACTS.mkdir(exist_ok=True)
    for scheme, width in VARIANTS:
        seen = visit(browser, site.base + path, scheme, width)
        seen.page.screenshot(path=str(ARTIFACTS / f"{name}-{scheme}-{width}.png"), full_page=True)
        assert seen.errors == [], (path, scheme, width)
        outside = [u for u in seen.requests if not u.startswith(site.base + "/")]
        assert outside == [], (path, outside)
        assert site.base + "/static/site.css" in seen.requests
        overflow = seen.page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        assert overflow <= 0, f"{path} is {overflow} px wider than a {width} px screen"
        if inspect:
            inspect(seen.page, scheme, width)
        seen.page.context.close()


# -- the front page --------------------------------------------------------------------------

def front_page_matches_the_snapshot(page: Page, snapshot: dict[str, Any]) -> None:
    assert page.inner_text("#health-index") == charts.number(snapshot["health_index"])
    for status in STATUSES:
        item = page.locator(f".counts li[data-status='{status}']")
        assert item.inner_text().split() == [str(snapshot["counts"]["by_status"][status]), *status_word(status).split()]
    for svc in snapshot["services"]:
        word = page.locator(f"#svc-{svc['slug']} .svc-head .st")
        assert word.inner_text().strip() == status_word(svc["status"])


def test_front_page(browser: Browser, site: Site) -> None:
    snapshot = site.json("/api/v1/snapshot")

    def inspect(page: Page, scheme: str, width: int) -> None:
        front_page_matches_the_snapshot(page, snapshot)
        if width == 1280:
            colours_have_enough_contrast(page, scheme)

    check_every_variant(browser, site, "/", "front", inspect)


def test_front_page_bar_tells_a_day_on_hover_and_on_focus(browser: Browser, site: Site) -> None:
    history = site.json("/api/v1/services/acme-api/history?range=90d")
    today = history["points"][-1]
    page = visit(browser, site.base + "/").page
    cell = page.locator("#svc-acme-api .bar li").last
    tip = cell.locator("span")
    expected = f"{charts.day_text(today['start'], with_year=False)}: {charts.number(today['availability'])}%, " \
               f"{today['incident_minutes']} min of incidents"
    assert tip.bounding_box()["width"] <= 1   # type: ignore[index]  # hidden until asked
    cell.hover()
    assert tip.inner_text() == expected and tip.bounding_box()["width"] > 50   # type: ignore[index]
    page.mouse.move(0, 0)
    page.locator("#svc-acme-api .bar li").first.focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == expected
    assert tip.bounding_box()["width"] > 50   # type: ignore[index]
    page.context.close()


# -- a service page --------------------------------------------------------------------------

def test_service_page(browser: Browser, site: Site) -> None:
    record = site.json("/api/v1/services/payments-eu")["service"]

    def inspect(page: Page, scheme: str, width: int) -> None:
        assert page.inner_text("#reason") == record["state"]["reason"]
        assert page.inner_text("#status .st").strip() == status_word(record["state"]["status"])
        for check in record["checks"]:
            assert check["url"] in page.inner_text("section[aria-labelledby='h-checks']")

    check_every_variant(browser, site, "/services/payments-eu/", "service", inspect)


def test_service_page_ranges_switch_without_javascript(browser: Browser, site: Site) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site.base + "/services/payments-eu/")
    names = list(RANGES)
    assert page.is_visible("#panel-24h") and not page.is_visible("#panel-7d")
    page.click("label[for='range-7d']")
    assert page.is_visible("#panel-7d") and not page.is_visible("#panel-24h")
    page.keyboard.press("ArrowRight")   # radio buttons move on with the arrow keys
    assert page.is_visible(f"#panel-{names[2]}")
    for name in names:
        page.click(f"label[for='range-{name}']")
        history = httpx.get(f"{site.base}/api/v1/services/payments-eu/history?range={name}").json()
        shown = page.inner_text(f"#panel-{name} dd[data-field='availability']")
        assert shown == f"{charts.number(history['summary']['availability'])}%"
        assert page.locator(f"#panel-{name} svg.chart").count() == 2
    context.close()


# -- incidents ---------------------------------------------------------------------------------

def test_incidents_page(browser: Browser, site: Site) -> None:
    expected = {section: site.json(f"/api/v1/incidents?active={active}")["incidents"]
                for section, active in (("h-open", "1"), ("h-past", "0"))}
    assert all(expected.values()), "the demo has open and past incidents"

    def inspect(page: Page, scheme: str, width: int) -> None:
        for section, incidents in expected.items():
            titles = page.locator(f"section[aria-labelledby='{section}'] article h3").all_inner_texts()
            assert titles == [i["title"] for i in incidents]

    check_every_variant(browser, site, "/incidents/", "incidents", inspect)


# -- colours as the browser draws them ----------------------------------------------------------

BACKGROUND_JS = """el => {
  const colour = e => getComputedStyle(e).color;
  let node = el;
  while (node) {
    const bg = getComputedStyle(node).backgroundColor;
    if (bg && bg !== 'rgba(0, 0, 0, 0)' && bg !== 'transparent') return [colour(el), bg];
    node = node.parentElement;
  }
  return [colour(el), 'rgb(255, 255, 255)'];
}"""


def _rgb(css: str) -> str:
    parts = css[css.index("(") + 1:css.index(")")].split(",")
    return "#" + "".join(f"{int(float(p)):02x}" for p in parts[:3])


def colours_have_enough_contrast(page: Page, scheme: str) -> None:
    """Status words (text, 4.5:1) and bar cells (marks, 3:1) as Chromium draws them."""
    words = page.locator(".st")
    assert words.count() >= len(STATUSES)
    for i in range(words.count()):
        fg, bg = words.nth(i).evaluate(BACKGROUND_JS)
        assert contrast(_rgb(fg), _rgb(bg)) >= 4.5, (scheme, words.nth(i).inner_text(), fg, bg)
    body_bg = _rgb(page.evaluate("getComputedStyle(document.body).backgroundColor"))
    assert (body_bg == "#ffffff") == (scheme == "light"), "the theme follows prefers-color-scheme"
    fills = page.locator(".bar li").evaluate_all("els => els.map(el => getComputedStyle(el).getPropertyValue('--c').trim())")
    assert fills
    for fill in set(fills):
        assert contrast(fill, body_bg) >= 3, (scheme, fill, body_bg)

"""The website in a real browser: Debian's Chromium driven by Playwright.

The demo build is served by the preview server; each page is opened at 1280 px and
360 px wide, in light and dark, with every request and console message recorded.
Screenshots go to test-artifacts/ (gitignored) for a person to look at.
"""

from __future__ import annotations

import dataclasses
import http.server
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Page, Response, expect, sync_playwright

from statusgen.model import RANGES, STATUSES
from statusgen.policy import EMBED_POLICY, PAGE_POLICY
from statusgen.render.build import build
from statusgen.render.pages import charts
from statusgen.render.words import ENGLISH
from statusgen.store import Store
from statusgen.web.serve import PreviewServer
from tests.conformance import Server, served
from tests.test_accessibility import contrast
from tests.test_pages import DemoBuild, bar_foot, demo_build, en_number, en_status_word

bucket_time, outcome_word = ENGLISH.bucket_time, ENGLISH.outcome_word
number, status_word = en_number, en_status_word  # the tests' own, written from the docs: not the code's


CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
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
    ARTIFACTS.mkdir(exist_ok=True)
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


def check_every_variant(
    browser: Browser, site: Site, path: str, name: str, inspect: Callable[[Page, str, int], None] | None = None
) -> None:
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
    assert page.inner_text("#health-index") == number(snapshot["health_index"])
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


def told(point: dict[str, Any], resolution_s: int, tell: str = "availability") -> str:
    """What the script says of a bucket (static/site.js), from its point in the history JSON."""
    when = bucket_time(point["start"], resolution_s)
    if tell == "latency":
        if point["latency_p50_ms"] is None:
            return f"{when}: no latency measured"
        return f"{when}: p50 {number(point['latency_p50_ms'])} ms, p95 {number(point['latency_p95_ms'])} ms"
    minutes = point["incident_minutes"]
    if point["availability"] is None:
        what = "maintenance only" if point["maintenance"] else "no data"
        return f"{when}: {what}" + (f", {number(minutes)} min of incidents" if minutes else "")
    return f"{when}: {number(point['availability'])}% available, {number(minutes)} min of incidents"


def point_at(page: Page, selector: str, index: int, count: int, plot: tuple[float, float] = (0, 1)) -> None:
    """Move the mouse over bucket ``index`` of ``count``; ``plot`` is the plot's left and width, as parts of the box."""
    page.locator(selector).scroll_into_view_if_needed()
    box = page.locator(selector).bounding_box()
    assert box is not None
    page.mouse.move(
        box["x"] + box["width"] * (plot[0] + plot[1] * (index + 0.5) / count), box["y"] + box["height"] * 0.6
    )


def tip_in_view(page: Page, tip: Locator) -> None:
    box = tip.bounding_box()
    assert box is not None and box["width"] > 50
    assert box["x"] >= 0 and box["x"] + box["width"] <= page.viewport_size["width"] + 0.5  # type: ignore[index]


def drawn(site: Site, slug: str, width: int) -> list[dict[str, Any]]:
    """The days a front page bar draws at ``width``, as the docs say: the last 90 days (60 under
    900 px, 30 under 600 px), then today so far, the service record's bucket in progress."""
    points = site.json(f"/api/v1/services/{slug}/history?range=90d")["points"]
    shown = 30 if width < 600 else 60 if width < 900 else 90
    today = site.json(f"/api/v1/services/{slug}")["service"]["in_progress"]["90d"]
    return [*points[-shown:], today | {"today": True}]


def told_day(point: dict[str, Any]) -> str:
    text = told(point, 86400)
    if point.get("today"):  # "Dec 4, 2026, today so far: 100% available, ..."
        day, rest = text.split(": ", 1)
        return f"{day}, today so far: {rest}"
    return text


def test_front_page_bar_tells_a_day_on_hover_and_on_focus(browser: Browser, site: Site) -> None:
    for width in (1280, 800, 360):
        days = drawn(site, "acme-api", width)
        seen = visit(browser, site.base + "/", width=width)
        page = seen.page
        bar, tip = "#svc-acme-api .bar", page.locator("#svc-acme-api .tip")
        assert tip.count() == 0 and not any("/history" in u for u in seen.requests), (
            "nothing is fetched before it is asked"
        )
        assert page.is_visible("#h-services ~ p [data-hint]"), "the script says how to use the bars"
        for day in (len(days) - 1, len(days) // 2, 0):
            point_at(page, bar, day, len(days))
            expect(tip).to_have_text(told_day(days[day]))
            tip_in_view(page, tip)
            if day == len(days) // 2:
                page.screenshot(path=str(ARTIFACTS / f"front-tip-{width}.png"))
        page.mouse.move(0, 0)
        expect(tip).to_have_count(0)
        page.locator("#svc-acme-api .svc-head a").focus()
        page.keyboard.press("Tab")  # the bar is the next stop
        assert page.evaluate("document.activeElement.className") == "bar"
        active = page.locator("#svc-acme-api .bar")
        last = len(days) - 1
        for key, day in (("", last), ("ArrowLeft", last - 1), ("Home", 0), ("ArrowRight", 1), ("End", last)):
            if key:
                page.keyboard.press(key)
            expect(tip).to_have_text(told_day(days[day]))
            assert active.get_attribute("aria-valuetext") == told_day(days[day])
        cells = page.locator("#svc-acme-api .bar i").evaluate_all(
            "els => els.filter(e => e.getBoundingClientRect().width > 0).length"
        )
        assert cells >= 1
        page.context.close()


def test_a_phone_shows_the_last_30_days_and_a_tap_tells_the_day_it_lands_on(browser: Browser, site: Site) -> None:
    days = drawn(site, "acme-api", 390)
    assert len(days) == 31
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True)
    page = context.new_page()
    page.goto(site.base + "/", wait_until="load")
    bar = page.locator("#svc-acme-api .bar")
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    assert box is not None
    # the tenth cell from the left: each of the 31 a 31st of the bar
    page.touchscreen.tap(box["x"] + box["width"] * 9.5 / 31, box["y"] + box["height"] / 2)
    expect(page.locator("#svc-acme-api .tip")).to_have_text(told_day(days[9]))
    assert box["width"] / 31 > 9, "a day a finger can hit"
    context.close()


def test_front_page_without_javascript_tells_the_90_days_in_words(browser: Browser, site: Site) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site.base + "/")
    since = site.json("/api/v1/health")["collection"]["collecting_since"]
    for svc in site.json("/api/v1/snapshot")["services"]:
        history = site.json(f"/api/v1/services/{svc['slug']}/history?range=90d")
        young = since if since and since > history["points"][0]["start"] else None
        assert page.inner_text(f"#svc-{svc['slug']} .bar-foot") == bar_foot(history["summary"], young)
        bar = page.locator(f"#svc-{svc['slug']} .bar")
        assert bar.get_attribute("tabindex") is None, "no keyboard stop without the script that tells the days"
        assert not page.is_visible("[data-hint]"), "no word of pointing and keys without the script"
        widths = bar.locator("i").evaluate_all("els => els.map(e => e.getBoundingClientRect().width)")
        # the 90 days, then today so far as of the last build, one day wide, in its band
        assert all(w > 0 for w in widths) and sum(widths) == pytest.approx(bar.bounding_box()["width"] * 90 / 91, abs=1)  # type: ignore[index]
        today = site.json(f"/api/v1/services/{svc['slug']}")["service"]["in_progress"]["90d"]
        shown = page.locator(f"#svc-{svc['slug']}").get_attribute("data-today")
        assert shown == day_band(today["availability"], today["maintenance"]), svc["slug"]
    context.close()


#: The bands' colours in each theme (templates/static/site.css), by the letter of a bar's cell.
BAND_COLOURS = {
    "light": {"f": "#218a3f", "h": "#6b8700", "m": "#ad6c00", "l": "#d1242f"},
    "dark": {"f": "#2ea043", "h": "#9bb81a", "m": "#d29922", "l": "#f85149"},
}
LEGEND_LETTERS = {"a-full": "f", "a-high": "h", "a-mid": "m", "a-low": "l"}


def test_each_band_has_its_colour_in_the_bars_and_the_legend(browser: Browser, site: Site) -> None:
    """100%, from 99%, from 95% and below each draw in their own colour, the same in a bar's cells
    and in the legend that names them, in light and in dark."""
    for scheme, colours in BAND_COLOURS.items():
        context = browser.new_context(color_scheme=scheme)  # type: ignore[arg-type]
        page = context.new_page()
        page.goto(site.base + "/")
        legend = page.locator(".legend i").evaluate_all(
            "els => els.map(e => [e.className, getComputedStyle(e).getPropertyValue('--c').trim()])"
        )
        assert {LEGEND_LETTERS[c]: bg for c, bg in legend if c in LEGEND_LETTERS} == colours, scheme
        cells = page.locator(".bar i").evaluate_all(
            "els => els.map(e => [e.classList[0], getComputedStyle(e).getPropertyValue('--c').trim()])"
        )
        drawn = {letter: bg for letter, bg in cells if letter in colours}
        assert drawn and all(colours[letter] == bg for letter, bg in drawn.items()), (scheme, drawn)
        context.close()


def day_band(availability: float | None, maintenance: int) -> str:
    """A day's band letter by the legend's thresholds: 100%, 99%, 95%, below; maintenance or no data."""
    if availability is None:
        return "x" if maintenance else "n"
    return "f" if availability >= 100 else "h" if availability >= 99 else "m" if availability >= 95 else "l"


# -- a service page --------------------------------------------------------------------------


def test_service_page(browser: Browser, site: Site) -> None:
    record = site.json("/api/v1/services/payments-eu")["service"]

    def inspect(page: Page, scheme: str, width: int) -> None:
        assert page.inner_text("#reason") == record["state"]["reason"]
        assert page.inner_text("#status .st").strip() == status_word(record["state"]["status"])
        for check in record["checks"]:
            assert check["url"] in page.inner_text("section[aria-labelledby='h-checks']")

    check_every_variant(browser, site, "/services/payments-eu/", "service", inspect)


def open_polling(browser: Browser, site: Site, url: str, polled: str) -> tuple[Page, list[tuple[str | None, int]]]:
    """A page opened on Playwright's clock (the test moves time), from the moment of the site's
    data (later in a long run, past stale_after, the page would say it is out of date instead); the
    If-None-Match and status of each answer to ``polled``, as they come."""
    page = browser.new_context().new_page()
    page.clock.install(time=site.json("/api/v1/snapshot")["as_of"])
    asked: list[tuple[str | None, int]] = []

    def seen(r: Response) -> None:
        if r.url.endswith(polled):
            asked.append((r.request.headers.get("if-none-match"), r.status))

    page.on("response", seen)
    page.goto(url, wait_until="load")
    return page, asked


def answered(page: Page, asked: list[tuple[str | None, int]], n: int, timeout_s: float = 10.0) -> None:
    """Wait until ``n`` answers to the polled URL have come (a busy machine answers late)."""
    deadline = time.monotonic() + timeout_s
    while len(asked) < n and time.monotonic() < deadline:
        page.wait_for_timeout(100)


def test_service_page_tells_the_latest_results_from_the_record_and_asks_again(browser: Browser, site: Site) -> None:
    """The page leaves out what moves with every result; its script tells it from the record, and
    asks for the record again every interval with the ETag it has (a 304 costs no body)."""
    slug = "payments-eu"
    record = site.json(f"/api/v1/services/{slug}")["service"]
    page, asked = open_polling(browser, site, f"{site.base}/services/{slug}/", record["links"]["self"])
    for check in record["checks"]:
        told = page.locator(f"[data-live='check-{check['check']}']")
        r = check["last_result"]
        said = outcome_word(r["outcome"])
        expect(told).to_contain_text(said[0].upper() + said[1:])
        if r["latency_ms"] is not None:  # as a number reads (2.0 is "2", as the script writes it)
            expect(told).to_contain_text(f"{number(r['latency_ms'])} ms")
    day = record["last_day"]["summary"]
    last_day = f"{number(day['checks'])} counted, {number(day['failed'])} failed"  # closed and in progress
    expect(page.locator("[data-live='last-day']")).to_contain_text("Last day, from ")
    expect(page.locator("[data-live='last-day']")).to_contain_text(last_day)
    expect(page.locator("[data-live='as-of']")).to_contain_text("Data as of")
    assert asked == [(None, 200)]
    interval = site.build.config.site.interval
    page.clock.run_for(int(interval * 1000) + 1000)
    answered(page, asked, 2)
    expect(page.locator("[data-live='last-day']")).to_contain_text(last_day)
    assert len(asked) == 2 and asked[1][0] is not None and asked[1][1] == 304, asked
    page.context.close()
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(f"{site.base}/services/{slug}/", wait_until="load")
    assert page.inner_text("[data-live='check-1']") == "In the JSON"  # without script: a link to the record
    context.close()


def test_front_page_follows_the_snapshot_and_asks_again(browser: Browser, site: Site) -> None:
    snapshot = site.json("/api/v1/snapshot")
    page, asked = open_polling(browser, site, f"{site.base}/", "/api/v1/snapshot")
    expect(page.locator("[data-live='front-as-of']")).to_contain_text("Data as of")
    assert page.inner_text("#overall strong") == snapshot["summary"]
    front_page_matches_the_snapshot(page, snapshot)
    page.clock.run_for(int(site.build.config.site.interval * 1000) + 1000)
    answered(page, asked, 2)
    assert asked[0] == (None, 200) and len(asked) == 2 and asked[1][0] is not None and asked[1][1] == 304, asked
    assert page.locator("[data-live='front-changed']").is_hidden()  # the open incidents are the same
    page.context.close()


def test_times_read_in_the_readers_zone_and_say_for_how_long(browser: Browser, site: Site) -> None:
    record = site.json("/api/v1/services/payments-eu")["service"]
    since = datetime.fromisoformat(record["state"]["since"].replace("Z", "+00:00"))
    context = browser.new_context(timezone_id="Asia/Tokyo", locale="en-GB")
    page = context.new_page()
    page.goto(site.base + "/services/payments-eu/", wait_until="load")
    shown = page.locator("#status time")
    assert shown.get_attribute("title") == ENGLISH.moment(record["state"]["since"])  # the markup's, kept at hand
    local = since.astimezone(ZoneInfo("Asia/Tokyo"))
    assert f"{local:%H:%M}" in shown.inner_text() and "UTC" not in shown.inner_text()
    assert re.search(r"\(for \d+ (min|hr \d+ min|days?)\)", page.inner_text("#status"))
    context.close()
    context = browser.new_context(java_script_enabled=False, timezone_id="Asia/Tokyo")
    page = context.new_page()
    page.goto(site.base + "/services/payments-eu/", wait_until="load")
    assert page.inner_text("#status time") == ENGLISH.moment(record["state"]["since"])  # no script: UTC, as written
    context.close()


PLOT = (charts.LEFT / charts.W, charts.PLOT_W / charts.W)  # the plot area, as parts of a chart's width


def history_end(site: Site, slug: str, name: str) -> str:
    """Where a range's closed buckets end: the bucket in progress starts there."""
    return site.json(f"/api/v1/services/{slug}/history?range={name}")["to"]


def test_service_page_charts_tell_a_bucket_on_hover_and_on_focus(browser: Browser, site: Site) -> None:
    slug = "payments-eu"
    page = visit(browser, f"{site.base}/services/{slug}/").page
    record = site.json(f"/api/v1/services/{slug}")["service"]
    for name in ("24h", "90d"):
        assert record["in_progress"][name]["start"] == history_end(site, slug, name)
        history = site.json(f"/api/v1/services/{slug}/history?range={name}")
        points, res = history["points"], history["resolution_s"]
        page.click(f"label[for='range-{name}']")
        for n, tell in enumerate(("latency", "availability")):
            chart = f"#panel-{name} figure:nth-of-type({n + 1}) svg"
            tip = page.locator(f"#panel-{name} figure:nth-of-type({n + 1}) .tip")
            for index in (len(points) - 1, len(points) // 2):
                point_at(page, chart, index, len(points), PLOT)
                expect(tip).to_have_text(told(points[index], res, tell))
                tip_in_view(page, tip)
            page.screenshot(path=str(ARTIFACTS / f"service-tip-{name}-{tell}.png"))
            page.mouse.move(0, 0)
            page.focus(chart)  # on the bucket in progress first, after the closed ones (issue 54)
            expect(tip).to_contain_text("so far")
            page.keyboard.press("ArrowLeft")
            expect(tip).to_have_text(told(points[-1], res, tell))
            assert page.locator(chart).get_attribute("aria-valuetext") == told(points[-1], res, tell)
            page.keyboard.press("Home")
            expect(tip).to_have_text(told(points[0], res, tell))
            page.keyboard.press("PageUp")
            step = -(-(len(points) + 1) // 12)  # a twelfth of the slider: the closed buckets and the one in progress
            expect(tip).to_have_text(told(points[step], res, tell))
            page.locator("body").focus()
    page.context.close()


def test_service_page_ranges_switch_without_javascript(browser: Browser, site: Site) -> None:
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site.base + "/services/payments-eu/")
    names = list(RANGES)
    assert page.is_visible("#panel-24h") and not page.is_visible("#panel-7d")
    page.click("label[for='range-7d']")
    assert page.is_visible("#panel-7d") and not page.is_visible("#panel-24h")
    page.keyboard.press("ArrowRight")  # radio buttons move on with the arrow keys
    assert page.is_visible(f"#panel-{names[2]}")
    for name in names:
        page.click(f"label[for='range-{name}']")
        history = httpx.get(f"{site.base}/api/v1/services/payments-eu/history?range={name}").json()
        shown = page.inner_text(f"#panel-{name} dd[data-field='availability']")
        assert shown == f"{number(history['summary']['availability'])}%"
        assert page.locator(f"#panel-{name} svg.chart").count() == 2
    context.close()


# -- incidents ---------------------------------------------------------------------------------


def test_incidents_page(browser: Browser, site: Site) -> None:
    expected = {
        section: site.json(f"/api/v1/incidents?active={active}")["incidents"]
        for section, active in (("h-open", "1"), ("h-past", "0"))
    }
    assert all(expected.values()), "the demo has open and past incidents"

    def inspect(page: Page, scheme: str, width: int) -> None:
        titles = page.locator("section[aria-labelledby='h-open'] article h3").all_inner_texts()
        assert titles == [i["title"] for i in expected["h-open"]]
        rows = page.locator("section[aria-labelledby='h-past'] tbody tr td:first-child").all_inner_texts()
        assert rows == [i["title"] for i in expected["h-past"]]  # the demo's few: each day's are all listed

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
    parts = css[css.index("(") + 1 : css.index(")")].split(",")
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
    fills = page.locator(".bar i").evaluate_all(
        "els => els.map(el => getComputedStyle(el).getPropertyValue('--c').trim())"
    )
    assert fills
    for fill in set(fills):
        assert contrast(fill, body_bg) >= 3, (scheme, fill, body_bg)


class _Blank(http.server.BaseHTTPRequestHandler):
    """Another origin's page: blank (or ``BODY``), with no policy of its own."""

    BODY = b"<!doctype html><title>another origin</title>"

    def do_GET(self) -> None:
        body = self.BODY
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def another_origin(browser: Browser, body: bytes = _Blank.BODY, now: str | None = None) -> Iterator[Page]:
    """A page of another loopback origin (127.0.0.2) holding ``body``, opened in Chromium (on a
    clock started at ``now``, when given)."""
    handler = type("Page", (_Blank,), {"BODY": body})
    other = http.server.ThreadingHTTPServer(("127.0.0.2", 0), handler)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    context = browser.new_context()
    if now is not None:
        context.clock.install(time=now)
    page = context.new_page()
    try:
        page.goto(f"http://127.0.0.2:{other.server_address[1]}/", wait_until="load")
        yield page
    finally:
        context.close()
        other.shutdown()
        other.server_close()


def test_a_script_on_another_origin_revalidates_the_api(browser: Browser, site: Site) -> None:
    """A page of another loopback origin reads the API, then asks again with If-None-Match: the
    browser preflights that request, and the script gets its 304."""
    with another_origin(browser) as page:
        got = page.evaluate(
            """async (url) => {
                const first = await fetch(url, { cache: "no-store" });
                const etag = first.headers.get("ETag");
                const again = await fetch(url, { cache: "no-store", headers: { "If-None-Match": etag } });
                return [first.status, etag, again.status];
            }""",
            site.base + "/api/v1/snapshot",
        )
    assert got[0] == 200 and got[1] and got[2] == 304, got


def test_another_origin_frames_the_embed_and_not_the_pages(browser: Browser, site: Site) -> None:
    """A page of another loopback origin frames /embed/ (the site's status in one line, linked to
    the site) and a service's; the front page refuses to be framed."""
    slug = site.build.config.services[0].slug
    frames = {"site": "/embed/", "service": f"/embed/{slug}/", "front": "/"}
    markup = "".join(f'<iframe id="{k}" title="{k}" src="{site.base}{v}"></iframe>' for k, v in frames.items())

    as_of = site.json("/api/v1/snapshot")["as_of"]  # the frames read as fresh as when the site was made
    with another_origin(browser, f"<!doctype html><title>framing</title>{markup}".encode(), as_of) as page:
        shown = {k: page.frame_locator(f"#{k}").locator("body") for k in frames}
        snapshot = site.json("/api/v1/snapshot")
        expect(shown["site"].locator(".banner")).to_contain_text(status_word(snapshot["status"]))
        assert shown["site"].locator(".banner a").get_attribute("href") == "/"  # read against the frame's address
        expect(shown["service"].locator(".banner")).to_contain_text(site.build.config.services[0].name)
        element = page.query_selector("#front")
        front = element.content_frame() if element else None
        assert front is not None and front.url.startswith("chrome-error"), front  # refused: not framed
        # the embed's Subscribe link opens the site's subscribe page in place of the framing page
        shown["service"].get_by_role("link", name="Subscribe").click()
        page.wait_for_url(f"{site.base}/subscribe/")


# -- a site in two languages, on both servers --------------------------------------------------


@pytest.fixture(scope="module")
def bilingual(site: Site, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's store built again as a site in English (at /) and German (at /de/)."""
    work = tmp_path_factory.mktemp("bilingual")
    demo = site.build.config
    with Store(demo.site.store) as source, Store(work / "copy.db") as store:
        source.db.backup(store.db)
        languages = dataclasses.replace(demo.site, store=store.path, output=work / "site", languages=("en", "de"))
        last = store.last_finished_run()
        assert last is not None and last.finished_at is not None
        build(store, dataclasses.replace(demo, site=languages), last.finished_at, workers=1)
    return work / "site"


@pytest.fixture(scope="module", params=["serve", "nginx"])
def bilingual_server(
    request: pytest.FixtureRequest, bilingual: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    yield from served(request.param, bilingual, tmp_path_factory.mktemp("nginx-bilingual"))


def test_every_languages_embed_and_nothing_else_may_be_framed(bilingual_server: Server, site: Site) -> None:
    """The embeddable status says it may be framed in each language's folder too; every other
    page of either language, a missing embed among them, says it may not."""
    slug = site.build.config.services[0].slug
    framed = ["/embed/", f"/embed/{slug}/", "/de/embed/", f"/de/embed/{slug}/"]
    refused = ["/", "/de/", f"/de/services/{slug}/", "/de/incidents/", "/de/api/", "/de/embed/nosuch/"]
    with bilingual_server.client() as client:
        for path in framed + refused:
            answer = client.get(path)
            assert answer.headers["content-type"] == "text/html; charset=utf-8", path
            policy = EMBED_POLICY if path in framed else PAGE_POLICY
            assert answer.headers["content-security-policy"] == policy, (bilingual_server.kind, path)


def test_another_origin_frames_the_german_embed_and_not_the_german_pages(
    browser: Browser, bilingual_server: Server, site: Site
) -> None:
    """On both servers, a page of another loopback origin frames /de/embed/ and a service's German
    embed (each in German, linked to the German pages); the German front page and a German
    service page refuse to be framed."""
    slug = site.build.config.services[0].slug
    base = bilingual_server.base
    frames = {"site": "/de/embed/", "service": f"/de/embed/{slug}/", "front": "/de/", "page": f"/de/services/{slug}/"}
    markup = "".join(f'<iframe id="{k}" title="{k}" src="{base}{v}"></iframe>' for k, v in frames.items())

    as_of = site.json("/api/v1/snapshot")["as_of"]  # the frames read as fresh as when the site was made
    with another_origin(browser, f"<!doctype html><title>framing</title>{markup}".encode(), as_of) as page:
        for name, link in (("site", "/de/"), ("service", f"/de/services/{slug}/")):
            shown = page.frame_locator(f"#{name}")
            expect(shown.locator("h1.banner")).to_be_visible()
            assert shown.locator("html").get_attribute("lang") == "de", name
            assert shown.locator("h1.banner a").get_attribute("href") == link, name
        for name in ("front", "page"):
            element = page.query_selector(f"#{name}")
            frame = element.content_frame() if element else None
            assert frame is not None and frame.url.startswith("chrome-error"), (name, frame)  # refused

"""A page never passes old data off as current. Every document of the present says when it is
out of date (``stale_after``); in real Chromium with the page's clock moved past it, the status
banner of every kind of page becomes a warning, axe-clean; before it, no warning; without
script, the front page's banner says what time its words are as of."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import pytest
from playwright.sync_api import Browser, Page

from statusgen import routes
from statusgen.render.words import ENGLISH
from tests import test_browser
from tests.test_axe import AXE, kinds_of_page
from tests.test_browser import Site

site = test_browser.site  # the demo, served, and the same Chromium
browser = test_browser.browser


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def present_documents(site: Site) -> dict[str, Any]:
    """Every document that describes the present, by URL."""
    slug = site.build.config.services[0].slug
    urls = ["/api/v1/snapshot", "/api/v1/health", "/api/v1/services", "/api/v1/services?status=operational"]
    urls += [f"/api/v1/services?category={c}" for c in site.build.config.categories]
    urls.append(f"/api/v1/services/{slug}")
    v2 = routes.STATUSPAGE_FILES
    urls += [f"/{v2[name]}" for name in ("summary", "status", "components", "unresolved", "upcoming", "active")]
    return {url: site.json(url) for url in urls}


def test_every_document_of_the_present_says_when_it_is_out_of_date(site: Site) -> None:
    stale_s = site.build.config.site.stale_after_s
    assert stale_s == 3 * site.build.config.site.interval
    snapshot = site.json("/api/v1/snapshot")
    for url, doc in present_documents(site).items():
        as_of = doc["as_of"] if url.startswith("/api/v1/services/") else snapshot["as_of"]
        assert moment(doc["stale_after"]) == moment(as_of) + timedelta(seconds=stale_s), url
    for url in ("/api/v1/incidents", f"/{routes.STATUSPAGE_FILES['incidents']}"):
        assert "stale_after" not in site.json(url)  # a list of the past is never out of date


def opened(browser: Browser, site: Site, url: str, at: datetime, scheme: str = "light", width: int = 1280) -> Page:
    """``url`` opened with the page's clock at ``at``, once the script has asked for its data."""
    context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)  # type: ignore[arg-type]
    page = context.new_page()
    page.clock.set_fixed_time(at)
    with page.expect_response(lambda r: "/api/v1/" in r.url):
        answer = page.goto(site.base + url, wait_until="load")
    assert answer is not None and answer.status in (200, 404), url
    page.wait_for_load_state("networkidle")
    return page


def warning(page: Page) -> str | None:
    """The stale warning the page shows, if it shows one."""
    shown = page.locator(".banner-stale:visible")
    return shown.inner_text() if shown.count() else None


@pytest.mark.parametrize("scheme, width", [("light", 1280), ("dark", 360)])
def test_past_stale_after_every_page_warns_and_stays_accessible(
    browser: Browser, site: Site, scheme: str, width: int
) -> None:
    snapshot = site.json("/api/v1/snapshot")
    late = moment(snapshot["stale_after"]) + timedelta(minutes=90)
    found = {}
    for url in kinds_of_page(site):
        page = opened(browser, site, url, late, scheme, width)
        said = warning(page)
        assert said is not None and said.startswith("This page has not been updated since "), (url, said)
        assert " ago)." in said and "may be out of date" in said, (url, said)
        violations = AXE.run(page).response["violations"]
        if violations:
            found[url] = [(v["id"], [n["html"][:100] for n in v["nodes"][:2]]) for v in violations]
        page.context.close()
    assert found == {}


def test_the_front_page_warning_keeps_what_it_said_as_of_then(browser: Browser, site: Site) -> None:
    snapshot = site.json("/api/v1/snapshot")
    page = opened(browser, site, "/", moment(snapshot["stale_after"]) + timedelta(hours=3))
    said = warning(page)
    assert said is not None and said.endswith(f"As of then: {snapshot['summary']}")
    assert "(3 hr " in said  # how long ago, from the data's time (Intl's units, in the page's language)
    assert page.locator("#overall.banner-stale").count() == 1  # the status banner itself, in its place
    assert page.locator("[data-stale-banner]").is_hidden()
    page.context.close()


def test_before_stale_after_no_page_warns(browser: Browser, site: Site) -> None:
    snapshot = site.json("/api/v1/snapshot")
    fresh = moment(snapshot["as_of"]) + timedelta(seconds=30)
    for url in kinds_of_page(site):
        page = opened(browser, site, url, fresh)
        assert warning(page) is None, url
        page.context.close()


def test_without_script_the_front_banner_says_as_of_when(browser: Browser, site: Site) -> None:
    snapshot = site.json("/api/v1/snapshot")
    context = browser.new_context(java_script_enabled=False)
    page = context.new_page()
    page.goto(site.base + "/", wait_until="load")
    assert page.inner_text("#overall .as-of") == f"As of {ENGLISH.moment(snapshot['as_of'])}."
    assert page.locator("[data-stale-banner]").is_hidden()
    context.close()

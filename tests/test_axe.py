"""axe-core, the accessibility engine browsers' own tools use, on every kind of page in real
Chromium: light and dark, 360 px and desktop, after the site's script has run. Zero violations."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser

from tests import test_browser
from tests.test_browser import Site

AXE = Axe()
site = test_browser.site  # the same demo, served, and the same Chromium
browser = test_browser.browser


def kinds_of_page(site: Site) -> list[str]:
    """One page of every kind the build writes, and the HTML 404."""
    slug = site.build.config.services[0].slug
    past = site.json("/api/v1/incidents?active=0")["incidents"]
    day = past[0]["started_at"][:10]  # the demo has past incidents: their day's and month's pages
    periods = [f"/incidents/{day[:7]}/", f"/incidents/{day}/"]
    return [
        "/",
        f"/services/{slug}/",
        f"/services/{slug}/incidents/",
        "/incidents/",
        *periods,
        "/method/",
        "/subscribe/",
        "/reports/",
        f"/reports/{site.json('/api/v1/reports')['months'][-1]['month']}/",  # a whole month of the past
        "/api/",
        "/embed/",
        f"/embed/{slug}/",
        "/nope/",
    ]


# Each theme and each width once: colours differ by theme, layout by width.
VARIANTS = [("light", 1280), ("dark", 360)]


@pytest.mark.parametrize("scheme, width", VARIANTS, ids=[f"{s}-{w}" for s, w in VARIANTS])
def test_no_accessibility_violation_on_any_page(browser: Browser, site: Site, scheme: str, width: int) -> None:
    found = {}
    for url in kinds_of_page(site):
        context = browser.new_context(viewport={"width": width, "height": 900}, color_scheme=scheme)  # type: ignore[arg-type]
        page = context.new_page()
        answer = page.goto(site.base + url, wait_until="load")
        assert answer is not None and answer.status == (404 if url == "/nope/" else 200), url
        violations = AXE.run(page).response["violations"]
        if violations:
            found[url] = [(v["id"], v["impact"], [n["html"][:120] for n in v["nodes"][:3]]) for v in violations]
        context.close()
    assert found == {}

"""A glance on a phone (issue 54): the front page opens with a headline of a few words in the
worst status's colour, then the sentence; on a 390 x 844 screen the first screen holds the
headline, the open incidents' titles and the first services, in English, German and Japanese.
The demo's store in three languages (``tests.test_languages.tri``), served by the preview
server, in real Chromium."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser

from tests.test_languages import Tri, browser, preview, tri

__all__ = ["browser", "preview", "tri"]  # fixtures of test_languages, used here

#: Status words as the English pages write them (docs/api.md's statuses).
WORDS = {
    "degraded": "Degraded performance",
    "partial_outage": "Partial outage",
    "major_outage": "Major outage",
    "maintenance": "Under maintenance",
}


def expected_headline(snapshot: dict) -> tuple[str, str]:
    affected = [s for s in snapshot["services"] if s["status"] not in ("operational", "unknown")]
    if not affected:
        return "operational", "All services operational"
    if len(affected) == 1:
        return snapshot["status"], f"{WORDS[affected[0]['status']]}: {affected[0]['name']}"
    return snapshot["status"], f"{len(affected)} services affected"


def test_the_headline_says_the_worst_in_a_few_words(tri: Tri) -> None:
    snapshot = tri.json("api/v1/snapshot.json")
    status, words = expected_headline(snapshot)
    (headline,) = tri.page("index.html").xpath("//div[@id='overall']/p[@class='headline']/span")
    assert (headline.get("class"), headline.text_content()) == (f"st st-{status}", words)
    assert len(words.split()) <= 6


@pytest.mark.parametrize("tag", ["en", "de", "ja"])
def test_the_first_screen_of_a_phone_shows_the_headline_the_incidents_and_services(
    browser: Browser, preview: str, tri: Tri, tag: str
) -> None:
    context = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True, timezone_id="UTC")
    page = context.new_page()
    # The page as read when it was made: later, past stale_after, its banner says so instead.
    page.clock.install(time=tri.json("api/v1/snapshot.json")["as_of"])
    page.goto(preview + ("/" if tag == "en" else f"/{tag}/"), wait_until="load")

    def inside(selector: str, first: bool = False) -> None:
        found = page.locator(selector)
        boxes = (found.first if first else found).evaluate_all(
            "els => els.map(e => { const b = e.getBoundingClientRect(); return [b.top, b.bottom]; })"
        )
        assert boxes, selector
        for top, bottom in boxes:
            assert top >= 0 and bottom <= 844, (tag, selector, top, bottom)

    inside("#overall .headline")
    if tri.json("api/v1/snapshot.json")["open_incidents"]:
        inside("#overall .sentence a")  # the open incidents' titles
    inside(".front-services li.svc", first=True)  # the first service, its bar and words
    context.close()

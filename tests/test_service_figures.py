"""The present on a service page (issue 54): every figure a service page shows is the JSON it says
it comes from. Each figure names its field (``data-field``, a path in a document) and the document
(``data-source``, on it or an ancestor: a history's URL or the service's record's); the number
shown is parsed back as the page's language writes it and compared with that document, fetched
from the same server, for every service of the demo, in English, German and Japanese, in real
Chromium, with script and without. Without script the panels show the closed buckets of their
history and say up to when; with it, each panel also tells its bucket in progress (the record's
``in_progress``) and draws it in its charts' last slot, and the last-day line's counts are the
24-hour panel's plus that bucket's."""

from __future__ import annotations

import re
from typing import Any

import httpx
import pytest
from playwright.sync_api import Browser, Page

from tests.test_languages import Tri, browser, preview, tri

__all__ = ["browser", "preview", "tri"]  # fixtures of test_languages, used here

RANGES = ("24h", "7d", "30d", "90d")
#: (group, decimal) separators as each language writes numbers (CLDR).
SEPARATORS = {"en": (",", "."), "de": (".", ","), "ja": (",", ".")}
#: What each panel shows of its history, and each line of the record.
PANEL = {
    "from",
    "to",
    "summary.availability",
    "summary.latency_p50_ms",
    "summary.latency_p95_ms",
    "summary.checks",
    "summary.failed",
    "summary.incident_minutes",
}
POINT = ("availability", "latency_p50_ms", "latency_p95_ms", "checks", "failed", "incident_minutes")
DASH = "\u2014"


def parse(text: str, tag: str, percent: bool) -> float | None:
    """A number as the page wrote it (``1,440``, ``99,793 %``, ``—``), back to a number."""
    said = text.replace("\u00a0", " ").replace("\u202f", " ").strip()
    if said == DASH:
        return None
    if percent:
        assert said.endswith("%"), said
        said = said.removesuffix("%").strip()
    group, decimal = SEPARATORS[tag]
    assert re.fullmatch(r"-?[\d.,]+", said), said
    return float(said.replace(group, "").replace(decimal, "."))


def field(doc: Any, path: str) -> Any:
    """``service.in_progress.24h.checks`` of a document."""
    for key in path.split("."):
        doc = doc[key]
    return doc


#: What each shown figure is (an element marked with its field that holds no other): (source URL,
#: field, its text, the datetime of its <time> or null, the data-live line or panel it is in).
SHOWN = """() => [...document.querySelectorAll("main [data-field]:not(:has([data-field]))")].map((e) => [
  e.closest("[data-source]")?.dataset.source ?? null, e.dataset.field, e.textContent,
  e.querySelector("time")?.getAttribute("datetime") ?? null,
  e.closest("[data-live]")?.dataset.live ?? e.closest(".panel")?.id ?? null,
])"""


class Documents:
    """The JSON documents the page names, fetched from the server that serves the page."""

    def __init__(self, base: str) -> None:
        self.base, self.docs = base, dict[str, Any]()

    def __call__(self, url: str) -> Any:
        if url not in self.docs:
            answer = httpx.get(self.base + url)
            assert answer.status_code == 200, url
            self.docs[url] = answer.json()
        return self.docs[url]


def check_figures(page: Page, docs: Documents, tag: str) -> dict[str, dict[str, float | str | None]]:
    """Every figure shown equals its document's field; returns them by line (or panel) and field."""
    by_place: dict[str, dict[str, float | str | None]] = {}
    for source, name, text, at, place in page.evaluate(SHOWN):
        assert source and place, (name, text)
        expected = field(docs(source), name)
        if at is not None or name.endswith(("from", "to", "start")):
            assert at == expected, (place, name, at, expected)
            shown: float | str | None = at
        else:
            shown = parse(text, tag, name.endswith("availability"))
            assert shown == expected, (source, place, name, text, expected)
        assert name not in by_place.setdefault(place, {}), (place, name)
        by_place[place][name] = shown
    return by_place


@pytest.mark.parametrize("script", [True, False], ids=["script", "no-script"])
def test_every_figure_of_a_service_page_is_its_json(browser: Browser, preview: str, tri: Tri, script: bool) -> None:
    docs = Documents(preview)
    context = browser.new_context(java_script_enabled=script, timezone_id="UTC")
    page = context.new_page()
    page.clock.install(time=tri.json("api/v1/snapshot.json")["as_of"])  # the page reads as fresh
    for tag in SEPARATORS:
        prefix = "" if tag == "en" else f"/{tag}"
        for svc in tri.config.services:
            slug = svc.slug
            record = f"/api/v1/services/{slug}"
            page.goto(f"{preview}{prefix}/services/{slug}/", wait_until="load")
            if script:
                page.wait_for_selector('[data-live="last-day"] [data-field]', state="attached", timeout=5000)
                page.wait_for_selector('[data-live="progress-90d"] [data-field]', state="attached", timeout=5000)
            shown = check_figures(page, docs, tag)
            where = (tag, slug)
            # every panel says its figures and the period they cover: its history's closed buckets
            for name in RANGES:
                assert set(shown[f"panel-{name}"]) >= PANEL, (where, name, shown[f"panel-{name}"])
                history = docs(f"/api/v1/services/{slug}/history?range={name}")
                progress = field(docs(record), f"service.in_progress.{name}")
                assert progress["start"] == history["to"], (where, name)  # the bucket after the closed ones
                line = page.locator(f'[data-live="progress-{name}"]')
                sofar = page.locator(f"#panel-{name} svg[data-range] .sofar.slot")
                if not script:  # as of its build: nothing claims to include now
                    assert line.is_hidden() and f"progress-{name}" not in shown, where
                    assert sofar.count() == 0, where
                    continue
                base = f"service.in_progress.{name}"
                told = shown[f"progress-{name}"]
                assert set(told) == {f"{base}.{k}" for k in (*POINT, "start")}, (where, told)
                assert sofar.count() == 2, where  # latency and availability, each its slot drawn
            day = shown.get("last-day")
            if not script:
                assert day is None and page.locator('[data-live="last-day"]').is_hidden(), where
                continue
            assert day is not None, where
            summary = field(docs(record), "service.last_day.summary")
            closed = shown["panel-24h"]
            # the line's counts are the 24-hour panel's, as the panel shows them, plus the bucket in progress
            assert day["summary.checks"] == closed["summary.checks"], where
            assert day["summary.failed"] == closed["summary.failed"], where
            now = shown["progress-24h"]
            for count in ("checks", "failed"):
                assert (
                    day[f"service.last_day.summary.{count}"]
                    == summary[count]
                    == closed[f"summary.{count}"] + now[f"service.in_progress.24h.{count}"]
                    == day[f"service.in_progress.24h.{count}"] + day[f"summary.{count}"]
                ), (where, count)
            for name in ("availability", "latency_p50_ms", "latency_p95_ms", "incident_minutes"):
                assert f"service.last_day.summary.{name}" in day, (where, name)
            assert day["service.last_day.from"] == closed["from"], where
    context.close()


def test_the_slider_of_a_chart_reaches_the_bucket_in_progress(browser: Browser, preview: str, tri: Tri) -> None:
    """A chart's last slot is the bucket so far: End reaches it, and it says so with the record's figure."""
    slug = tri.config.services[0].slug
    context = browser.new_context(timezone_id="UTC")
    page = context.new_page()
    page.clock.install(time=tri.json("api/v1/snapshot.json")["as_of"])
    page.goto(f"{preview}/services/{slug}/", wait_until="load")
    page.wait_for_selector('[data-live="progress-24h"] [data-field]', state="attached", timeout=5000)
    history = tri.json(f"api/v1/services/{slug}/history/24h.json")
    progress = tri.json(f"api/v1/services/{slug}.json")["service"]["in_progress"]["24h"]
    chart = page.locator('#panel-24h svg[data-tell="availability"]')
    before = chart.get_attribute("aria-valuetext")  # the slider's words before it tells a bucket
    chart.focus()
    chart.press("End")
    page.wait_for_function(
        "([el, before]) => el.getAttribute('aria-valuetext') !== before", arg=[chart.element_handle(), before]
    )
    assert chart.get_attribute("aria-valuemax") == str(history["count"] + 1)
    text = chart.get_attribute("aria-valuetext") or ""
    assert "so far" in text, text
    found = re.search(r"([\d.,]+)% available", text)
    if progress["availability"] is None:
        assert found is None, text
    else:
        assert found is not None and parse(found.group(1) + "%", "en", True) == progress["availability"], text
    context.close()

"""A site in three languages (``site.languages = ["en", "de", "ja"]``): every page in each, at /,
/de/ and /ja/, each naming its language, linking its translations and switching between them;
served by both servers and published with each file's Content-Language; and read in real
Chromium: no English word of the catalog left on a German or Japanese page, dates and numbers
in the locale's form, axe-clean in light and dark at 360 and 1280 px, nothing wider than a
phone, Japanese lines broken between phrases."""

from __future__ import annotations

import dataclasses
import re
import shutil
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import lxml.html
import pytest
from axe_playwright_python.sync_playwright import Axe
from babel.messages import pofile
from playwright.sync_api import Browser, Page, sync_playwright

from statusgen import routes
from statusgen.config import Config, MailServer, SubscriptionsConfig, load_config
from statusgen.cycle import rebuild
from statusgen.i18n import Language, translations
from statusgen.render.build import build
from statusgen.render.tree import current_generation
from statusgen.render.words import words as words_of
from statusgen.store import Store
from statusgen.web.publish import publish_tree
from statusgen.web.serve import PreviewServer
from tests.conformance import start_nginx
from tests.conftest import write_config
from tests.objectstore import s3_server
from tests.test_browser import ARGS, CHROMIUM
from tests.test_pages import demo_build

LANGUAGES = ("en", "de", "ja")
LOCALE = Path(__file__).resolve().parents[1] / "statusgen" / "locale"
PLACES = re.compile(r"%\(\w+\)[sd]|%%|<[^>]+>|&\w+;")


@dataclass
class Tri:
    root: Path  # the served tree (a link to its current generation)
    config: Config

    def page(self, rel: str) -> lxml.html.HtmlElement:
        return lxml.html.document_fromstring((self.root / rel).read_bytes())

    def json(self, rel: str) -> Any:
        import json

        return json.loads((self.root / rel).read_bytes())


@pytest.fixture(scope="module")
def tri(tmp_path_factory: pytest.TempPathFactory) -> Tri:
    """The demo's store built as a site in English (at /), German and Japanese, with
    subscriptions by email."""
    demo = demo_build()
    work = tmp_path_factory.mktemp("languages")
    store = Store(work / "copy.db")
    with Store(demo.config.site.store) as source:
        source.db.backup(store.db)
    site = dataclasses.replace(demo.config.site, store=store.path, output=work / "site", languages=LANGUAGES)
    # with subscriptions by email: the subscribe page says all it can
    mail = SubscriptionsConfig("status@example.com", MailServer(folder=work / "in"), MailServer(folder=work / "out"))
    config = dataclasses.replace(demo.config, site=site, subscriptions=mail)
    last = store.last_finished_run()
    assert last is not None and last.finished_at is not None
    build(store, config, last.finished_at, workers=1)
    store.close()
    return Tri(work / "site", config)


def first_language_pages(tri: Tri) -> list[str]:
    """Every page of the first language: the tree's HTML outside the other languages' folders."""
    others = {tag.lower() for tag in LANGUAGES[1:]}
    return sorted(
        rel for p in tri.root.rglob("*.html") if (rel := str(p.relative_to(tri.root))).split("/")[0] not in others
    )


def url_of(rel: str) -> str | None:
    """A page file's URL (None for the error pages, which are never asked for by their path)."""
    if rel.startswith("_errors/"):
        return None
    return "/" + rel.removesuffix("index.html")


def test_every_page_is_in_every_language_and_links_its_translations(tri: Tri) -> None:
    base = tri.config.site.base_url.rstrip("/")
    pages = first_language_pages(tri)
    assert len(pages) > 20
    for rel in pages:
        for tag in LANGUAGES:
            path = rel if tag == "en" else f"{tag.lower()}/{rel}"
            page = tri.page(path)
            assert page.get("lang") == tag, path
            here = url_of(rel)
            if here is None or rel.startswith("embed/"):
                continue
            links = {a.get("hreflang"): a.get("href") for a in page.xpath("//head/link[@hreflang]")}
            want = {t: base + ("" if t == "en" else f"/{t.lower()}") + here for t in LANGUAGES}
            assert links == {**want, "x-default": base + here}, path
            switch = page.xpath("//nav[@class='langs']//a")
            assert [(a.get("hreflang"), a.text_content()) for a in switch] == [
                ("en", "English"),
                ("de", "Deutsch"),
                ("ja", "日本語"),
            ], path
            assert [a.get("hreflang") for a in switch if a.get("aria-current") == "true"] == [tag], path
            # a page's links to pages stay in its language; its data links do not move
            hrefs = [a.get("href") for a in page.xpath("//main//a[starts-with(@href, '/')]")]
            for href in hrefs:
                bare = href.split("#")[0].split("?")[0]
                if tag != "en" and bare.endswith("/"):
                    assert href.startswith(f"/{tag}/"), (path, href)
                if bare.startswith(("/api/v1/", "/feed/")) or bare.endswith((".xml", ".csv", ".json")):
                    assert not href.startswith(f"/{tag}/"), (path, href)


def test_the_json_feeds_and_documents_stay_in_the_first_language(tri: Tri) -> None:
    for tag in LANGUAGES[1:]:
        assert not (tri.root / tag / "api" / "v1").exists() and not (tri.root / tag / "feed").exists()
    health = tri.json(f"{routes.API}/health.json")
    assert health["languages"] == list(LANGUAGES)
    snapshot = tri.json(f"{routes.API}/snapshot.json")
    front_de = tri.page("de/index.html").get_element_by_id("overall").xpath(".//strong")[0].text_content()
    assert snapshot["summary"] != front_de and snapshot["summary"].endswith(".")
    assert snapshot["status"] in ("operational", "degraded", "partial_outage", "major_outage", "maintenance", "unknown")


#: A time as the store's English keeps it inside a sentence (``timeutil.moment``), not as a page writes one.
STORE_TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC")


@pytest.mark.parametrize("tag", ["de", "ja"])
def test_a_time_inside_a_reason_is_written_as_the_page_writes_a_time(tri: Tri, tag: str) -> None:
    """A reason's times ("failing since ...", a maintenance's end) read as every other time of the
    page (Babel's day and 24-hour clock, in UTC, ``Words.moment``), in the JSON's language too."""
    said_since = 0
    for svc in tri.config.services:
        record = tri.json(routes.service_file(svc.slug))["service"]
        reason = tri.page(f"{tag}/services/{svc.slug}/index.html").get_element_by_id("reason").text_content()
        assert not STORE_TIME.search(reason) and not STORE_TIME.search(record["reason"]), (tag, svc.slug, reason)
        if record["since"] and words_of(Language("en")).moment(record["since"]) in record["reason"]:
            assert words_of(Language(tag)).moment(record["since"]) in reason, (tag, svc.slug, reason)
            said_since += 1
    assert said_since >= 2  # the demo's two failing services and its slow one say since when


def test_what_the_operator_did_not_set_is_said_in_the_page_s_language(tri: Tri) -> None:
    """Without site.description and site.contact, each page says statusgen's own words for them in
    its language (the description in its head and on the front page, whom to ask on the API page),
    never the English ones; the JSON error bodies keep them, in English as the rest."""
    description, contact = "Current state of the services we depend on.", "the operator of this site"
    assert (tri.config.site.description, tri.config.site.contact) == (description, contact)  # not set
    for tag in LANGUAGES[1:]:
        catalog = translations(tag)
        assert catalog.gettext(description) != description and catalog.gettext(contact) != contact
        pages = [tri.page(f"{tag.lower()}/{rel}") for rel in first_language_pages(tri)]
        heads = {said for page in pages for said in page.xpath("//meta[@name='description']/@content")}
        assert heads == {catalog.gettext(description)}, tag
        front = tri.page(f"{tag.lower()}/index.html").text_content()
        assert catalog.gettext(description) in front and description not in front, tag
        api = tri.page(f"{tag.lower()}/api/index.html").text_content()
        assert catalog.gettext(contact) in api and contact not in api, tag
    assert contact in tri.json("_errors/429.json")["error"]["message"]


@pytest.fixture(scope="module")
def preview(tri: Tri) -> Iterator[str]:
    server = PreviewServer(tri.root, "127.0.0.1", 0, quiet=True, per_minute=100_000, pages_per_minute=100_000)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def nginx(tri: Tri, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    server = start_nginx(tri.root, tmp_path_factory.mktemp("nginx-languages"), rate_limit=False)
    try:
        yield f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()


SAID = {
    "/": "en",
    "/de/": "de",
    "/ja/incidents/": "ja",
    "/de/method/": "de",
    "/api/v1/snapshot": "en",
    "/api/v2/summary.json": "en",
    "/feed/incidents.xml": "en",
    "/static/site.css": "en",
}


@pytest.mark.parametrize("server", ["preview", "nginx"])
def test_both_servers_serve_each_language_and_say_which(server: str, request: pytest.FixtureRequest) -> None:
    base = request.getfixturevalue(server)
    with httpx.Client(base_url=base) as client:
        for url, tag in SAID.items():
            answer = client.get(url)
            assert answer.status_code == 200, (server, url)
            assert answer.headers["content-language"] == tag, (server, url)
            again = client.get(url, headers={"If-None-Match": answer.headers["etag"]})
            assert again.status_code == 304 and again.headers["content-language"] == tag, (server, url)
        for url, tag in (("/de/services/nope/", "de"), ("/ja/nope", "ja"), ("/nope/", "en"), ("/fr/", "en")):
            missing = client.get(url)  # the page that is not there, told in the language asked for
            assert missing.status_code == 404 and missing.headers["content-language"] == tag, (server, url)
            assert f'<html lang="{tag}">' in missing.text, (server, url)
        assert client.get("/api/v1/nope").headers["content-type"].startswith("application/json")
        moved = client.get("/ja/incidents")
        assert moved.status_code == 301 and moved.headers["location"].endswith("/ja/incidents/")


def test_publish_gives_each_file_its_language(tri: Tri, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)  # rclone 1.60's S3 client refuses it (test_publish_s3)
    with s3_server() as s3:
        publish_tree(tri.root, s3.remote())
        objects = s3.objects()
    generation = current_generation(tri.root)
    assert generation is not None
    for rel, (body, headers) in objects.items():
        assert body == (generation / rel).read_bytes()
        assert headers["content-language"] == routes.language_of(rel, LANGUAGES), rel
    assert "de/index.html" in objects and "ja/services/acme-api/index.html" in objects


# -- in Chromium --------------------------------------------------------------------------------


def english_left(tag: str) -> list[str]:
    """What would show that a page in ``tag`` still speaks English: each message of its catalog
    whose translation differs, cut at its placeholders and markup into the runs of words a page
    could show (at least four letters)."""
    with (LOCALE / tag / "LC_MESSAGES" / "statusgen.po").open("rb") as f:
        catalog = pofile.read_po(f, locale=tag)
    runs: set[str] = set()
    for message in catalog:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        strings = message.string if isinstance(message.string, tuple) else (message.string,)
        said = " ".join(strings)
        for english in ids:
            for run in PLACES.split(english):
                run = run.strip(" .,;:()·—-/")
                if len(re.sub(r"[^A-Za-z]", "", run)) >= 4 and run not in said:
                    runs.add(run)
    return sorted(runs, key=len, reverse=True)


def recorded_words(tri: Tri) -> set[str]:
    """The words a page shows as they were written, not translated: the operator's (names,
    descriptions, checks, notes and incidents of their own) and the vendors' (their views), but
    never one that is a message of the catalog: those the page must translate. What statusgen's
    decisions say (reasons, incident titles and updates) is not among them: it is translated."""
    with (LOCALE / "statusgen.pot").open("rb") as f:
        messages = {m.id if isinstance(m.id, str) else m.id[0] for m in pofile.read_po(f) if m.id}
    found: set[str] = set()

    def walk(value: object) -> None:
        if isinstance(value, str):
            if len(value) >= 4 and value not in messages:
                found.add(value)
        elif isinstance(value, dict):
            for v in value.values():
                walk(v)
        elif isinstance(value, list | tuple):
            for v in value:
                walk(v)

    site = tri.config.site
    walk([site.title, site.description, site.vantage_point, *tri.config.categories.values()])
    for svc in tri.config.services:
        record = tri.json(routes.service_file(svc.slug))["service"]
        walk([svc.name, svc.description or "", svc.url or "", record["vendor"]])
        walk([[c["label"], c["url"]] for c in record["checks"]])
        walk([[m["title"], m["message"] or ""] for m in record["upcoming_maintenance"]])
    for incident in tri.json("api/v1/incidents.json")["incidents"]:
        if incident["source"] == "operator":
            walk(incident)
        walk([u["message"] for u in incident["updates"] if u["kind"] == "note"])
    return found


@pytest.fixture(scope="module")
def browser(tri: Tri) -> Iterator[Browser]:
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


def pages_to_read(tri: Tri) -> list[str]:
    """The front, service, incidents and report pages (the ones read in every variant), then one
    page of every other kind."""
    slug = tri.config.services[0].slug
    month = tri.json(f"{routes.API}/reports.json")["months"][-1]["month"]
    day = tri.json("api/v1/incidents.json")["incidents"][-1]["started_at"][:10]
    main = ["", f"services/{slug}/", "incidents/", f"reports/{month}/"]
    others = [
        f"services/{slug}/incidents/",
        f"incidents/{day[:7]}/",
        f"incidents/{day}/",
        "reports/",
        "method/",
        "subscribe/",
    ]
    return main + others + ["api/", "embed/", f"embed/{slug}/"]


MAIN_PAGES = 4  # the first of pages_to_read: every theme at every width


def open_page(browser: Browser, url: str, scheme: str = "light", width: int = 1280) -> Page:
    context = browser.new_context(
        viewport={"width": width, "height": 900},
        color_scheme=scheme,  # type: ignore[arg-type]
        timezone_id="UTC",
    )
    page = context.new_page()
    answer = page.goto(url, wait_until="load")
    assert answer is not None and answer.status == (404 if url.endswith("/nope/") else 200), url
    page.wait_for_timeout(300)  # the script's first answers (the record, the snapshot) are told
    return page


SHOWN_TEXT = """() => {
  // every word shown, but code: samples (<pre>, the JSON in its own language) and machine values (<code>)
  const body = document.body.cloneNode(true);
  body.querySelectorAll("pre, code").forEach((el) => el.remove());
  document.body.after(body);
  const parts = [document.title, body.innerText];
  body.remove();
  for (const el of document.querySelectorAll("[aria-label], [title], [aria-valuetext]")) {
    for (const name of ["aria-label", "title", "aria-valuetext"]) parts.push(el.getAttribute(name) || "");
  }
  return parts.join("\\n");
}"""

#: How each language writes a day and a percentage (Babel on the server, Intl in the browser).
LOCALE_FORMS = {
    "de": (
        re.compile(r"\b\d{1,2}\. (Jan|Feb|März|Apr|Mai|Juni|Juli|Aug|Sept|Okt|Nov|Dez)\.? \d{4}"),
        re.compile(r"\d,\d+\u00a0%"),
    ),
    "ja": (re.compile(r"\d{4}年\d{1,2}月\d{1,2}日"), re.compile(r"\d\.\d+%")),
}


@pytest.mark.parametrize("tag", ["de", "ja"])
def test_chromium_shows_each_page_in_its_language_with_its_forms(
    browser: Browser, preview: str, tri: Tri, tag: str
) -> None:
    english, recorded = english_left(tag), sorted(recorded_words(tri), key=len, reverse=True)
    day_form, percent_form = LOCALE_FORMS[tag]
    for rel in [*pages_to_read(tri), "nope/"]:
        page = open_page(browser, f"{preview}/{tag}/{rel}")
        text = page.evaluate(SHOWN_TEXT)
        assert page.evaluate("document.documentElement.lang") == tag
        for words in recorded:
            text = text.replace(words, " ")
        text = re.sub(r"/[\w/{}.?=-]+", " ", text)  # URL paths (/api/v1/incidents): machine values
        left = [run for run in english if re.search(rf"(?<![\w-]){re.escape(run)}(?![\w-])", text, re.ASCII)]
        assert left == [], (tag, rel, left[:10])
        if rel in pages_to_read(tri)[:MAIN_PAGES]:  # pages that show dates whatever the data
            assert day_form.search(text), (tag, rel)
        if rel in ("", pages_to_read(tri)[3]):  # the front page's bars, the report's figures
            assert percent_form.search(text), (tag, rel)
        page.context.close()


AXE = Axe()


@pytest.mark.parametrize("tag", ["de", "ja", "fr", "es", "pt-BR"])
def test_every_shipped_language_is_axe_clean_and_fits_a_phone(
    browser: Browser, tmp_path_factory: pytest.TempPathFactory, tri: Tri, tag: str
) -> None:
    root = tri.root
    if tag not in LANGUAGES:  # the other shipped languages: the same store built in them
        root = built_in(tri, tag, tmp_path_factory)
    server = PreviewServer(root, "127.0.0.1", 0, quiet=True, per_minute=100_000, pages_per_minute=100_000)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}/{tag.lower()}/"
    found: dict[str, object] = {}
    try:
        # The main pages in every theme at every width (German and Japanese, the longest words and the
        # other script) or in each theme and each width once; every other kind once, at a phone's width.
        every = 4 if tag in LANGUAGES else 2
        # French, Spanish and Portuguese: their words in the layout German and Japanese test in full
        kinds = [*pages_to_read(tri), "nope/"] if tag in LANGUAGES else pages_to_read(tri)[:MAIN_PAGES]
        for i, rel in enumerate(kinds):
            variants = [("dark", 360), ("light", 1280), ("light", 360), ("dark", 1280)][
                : every if i < MAIN_PAGES else 1
            ]
            for scheme, width in variants:
                page = open_page(browser, base + rel, scheme, width)
                violations = AXE.run(page).response["violations"]
                if violations:
                    found[f"{rel} {scheme} {width}"] = [
                        (v["id"], [n["html"][:100] for n in v["nodes"][:2]]) for v in violations
                    ]
                if width == 360:
                    wide = page.evaluate("document.documentElement.scrollWidth")
                    assert wide <= 360, (tag, rel, scheme, wide)
                page.context.close()
    finally:
        server.shutdown()
        server.server_close()
    assert found == {}


def built_in(tri: Tri, tag: str, factory: pytest.TempPathFactory) -> Path:
    """The same store built as a site in English and ``tag``."""
    work = factory.mktemp(f"site-{tag}")
    store_path = work / "copy.db"
    shutil.copyfile(tri.config.site.store, store_path)
    site = dataclasses.replace(tri.config.site, store=store_path, output=work / "site", languages=("en", tag))
    config = dataclasses.replace(tri.config, site=site)
    with Store(store_path) as store:
        last = store.last_finished_run()
        assert last is not None and last.finished_at is not None
        build(store, config, last.finished_at, workers=1)
    return work / "site"


def test_japanese_lines_break_between_phrases_not_inside_words(browser: Browser, preview: str) -> None:
    page = open_page(browser, f"{preview}/ja/", "light", 360)
    breaks = page.evaluate(
        """() => [...document.querySelectorAll("body *")].map((el) => getComputedStyle(el).wordBreak)"""
    )
    assert "break-all" not in breaks and set(breaks) == {"auto-phrase"}
    assert page.evaluate("getComputedStyle(document.body).lineBreak") == "strict"
    page.context.close()


#: What each language writes after a label (the catalogs' "label: value" messages say the same).
LABEL_COLONS = {"ja": "\uff1a", "de": ": ", "en": ": "}


@pytest.mark.parametrize("tag", ["ja", "de", "en"])
def test_a_stacked_table_labels_its_cells_with_the_colon_of_the_page_s_language(
    browser: Browser, preview: str, tri: Tri, tag: str
) -> None:
    """On a phone a table's cells are stacked, each after its column's name (``data-label``) and the
    colon its language writes: the full-width one in Japanese, on every page with such a table."""
    prefix = "" if tag == "en" else f"/{tag}"
    pages = pages_to_read(tri)  # the service, a month's report, the months, a day's incidents
    for rel in (pages[1], pages[3], "reports/", pages[6]):
        page = open_page(browser, f"{preview}{prefix}/{rel}", "light", 360)
        shown = page.evaluate(
            """() => [...document.querySelectorAll("table.stack td[data-label]")].map((td) => [
              td.dataset.label, getComputedStyle(td, "::before").content])"""
        )
        page.context.close()
        for label, content in shown:
            assert content == f'"{label}{LABEL_COLONS[tag]}"', (tag, rel, content)
        assert shown, (tag, rel)


def test_past_stale_after_a_page_warns_in_its_own_language(browser: Browser, preview: str, tri: Tri) -> None:
    """The stale warning is said in the page's language, and tells the site's sentence as of then
    only in it: the snapshot's (the JSON's language) on a page in that language, the page's own on
    the front page in another, none on other pages in another."""
    snapshot = tri.json(f"{routes.API}/snapshot.json")
    late = datetime.fromisoformat(snapshot["stale_after"]) + timedelta(hours=2)
    german = tri.page("de/index.html").get_element_by_id("overall").xpath(".//strong")[0].text_content()
    with (LOCALE / "de" / "LC_MESSAGES" / "statusgen.po").open("rb") as f:
        catalog = pofile.read_po(f, locale="de")
    stale = catalog.get("This page has not been updated since %(time)s (%(duration)s ago).").string
    opening = stale.split("%(")[0]
    for url, said in (("/de/", german), ("/de/incidents/", None), ("/incidents/", snapshot["summary"])):
        context = browser.new_context(timezone_id="UTC")
        page = context.new_page()
        page.clock.set_fixed_time(late)
        with page.expect_response(lambda r: "/api/v1/" in r.url):
            page.goto(preview + url, wait_until="load")
        page.wait_for_load_state("networkidle")
        text = page.locator(".banner-stale:visible").inner_text()
        if url.startswith("/de/"):
            assert text.startswith(opening), (url, text)
        assert (said in text) if said else (snapshot["summary"] not in text and german not in text), (url, text)
        context.close()


def test_where_the_checks_run_from_is_said_in_each_language_when_not_set(tmp_path: Path) -> None:
    """Without site.vantage_point, every footer says statusgen's words for it in its page's
    language ("Measured from a single host"), never the English ones inside another language."""
    body = '[categories]\nweb = "Web"\n[[services]]\nslug = "a"\nname = "A"\ncategory = "web"\n'
    body += '[[services.checks]]\nurl = "http://127.0.0.1:9/"\n'
    site = 'languages = ["en", "de", "ja"]\noutput = "site"\nstore = "data/s.db"\n'
    config = load_config(write_config(tmp_path, body, site))
    rebuild(config, new_store=True)
    english = "a single host"

    def footer(rel: str) -> str:
        page = lxml.html.fromstring((tmp_path / "site" / rel).read_bytes())
        return " ".join(page.xpath("string(//footer)").split())

    assert f"Measured from {english}," in footer("index.html")
    for tag in ("de", "ja"):
        said = translations(tag).gettext(english)
        assert said != english
        for rel in ("index.html", "method/index.html", "services/a/index.html"):
            assert said in footer(f"{tag}/{rel}") and english not in footer(f"{tag}/{rel}"), (tag, rel)

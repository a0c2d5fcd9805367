"""The subscribe page (issue 58, "Subscribing without a server") in Debian's Chromium: the demo's
store built with ``[subscriptions]`` in three languages, served by the preview server.

With script, the one ``mailto:`` link follows the ticked boxes and is what ``statusgen.mailto``
writes for those services and the page's language; without script, each service has its own
link, grouped as the front page groups the services; without ``[subscriptions]`` the page keeps
the feeds, calendars and chats and says nothing of email. Every page, in every language, and
the embed link to it.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import httpx
import lxml.html
import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, Page, expect

from statusgen import routes
from statusgen.config import Config, MailServer, SubscriptionsConfig
from statusgen.i18n import Language, site_languages, translations
from statusgen.mailto import SUBSCRIBE, command, mailto, subject
from statusgen.render.build import build
from statusgen.store import Store
from statusgen.web.serve import PreviewServer
from tests import test_browser
from tests.test_pages import demo_build

LANGUAGES = ("en", "de", "pt-BR")
ADDRESS = "status@example.com"
PAGE = routes.SUBSCRIBE_PAGE


@dataclass
class Served:
    root: Path
    config: Config
    base: str


def serve(root: Path, config: Config) -> Iterator[Served]:
    server = PreviewServer(root, "127.0.0.1", 0, quiet=True, per_minute=100_000, pages_per_minute=100_000)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield Served(root, config, f"http://127.0.0.1:{server.server_address[1]}")
    server.shutdown()
    server.server_close()


def built(work: Path, languages: tuple[str, ...], mail: SubscriptionsConfig | None) -> tuple[Path, Config]:
    """The demo's store built in ``languages``, with ``mail`` as its ``[subscriptions]``."""
    demo = demo_build()
    with Store(work / "copy.db") as store:
        with Store(demo.config.site.store) as source:
            source.db.backup(store.db)
        site = dataclasses.replace(demo.config.site, store=store.path, output=work / "site", languages=languages)
        config = dataclasses.replace(demo.config, site=site, subscriptions=mail)
        last = store.last_finished_run()
        assert last is not None and last.finished_at is not None
        build(store, config, last.finished_at, workers=1)
    return work / "site", config


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Three languages, with subscriptions by email."""
    work = tmp_path_factory.mktemp("subscribe")
    mail = SubscriptionsConfig(ADDRESS, MailServer(folder=work / "in"), MailServer(folder=work / "out"))
    yield from serve(*built(work, LANGUAGES, mail))


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """One language, no ``[subscriptions]``."""
    yield from serve(*built(tmp_path_factory.mktemp("plain"), ("en",), None))


browser = test_browser.browser  # the same Chromium, started after this module's ``site`` is built


def opened(browser: Browser, url: str, script: bool = True, scheme: str = "light") -> Page:
    context = browser.new_context(java_script_enabled=script, color_scheme=scheme)  # type: ignore[arg-type]
    page = context.new_page()
    answer = page.goto(url, wait_until="load")
    assert answer is not None and answer.status == 200, url
    return page


def front_order(browser: Browser, site: Served, lang: Language) -> list[str]:
    """The services as the front page lists them: by category, each category's in its order."""
    page = opened(browser, site.base + lang.url("/"), script=False)
    order = [i.removeprefix("svc-") for i in page.locator("li.svc").evaluate_all("(l) => l.map((e) => e.id)")]
    page.context.close()
    return order


@pytest.mark.parametrize("tag", LANGUAGES)
def test_the_script_writes_the_link_of_the_ticked_services_as_mailto_does(
    browser: Browser, site: Served, tag: str
) -> None:
    lang = next(lang for lang in site_languages(LANGUAGES) if lang.tag == tag)
    page = opened(browser, site.base + lang.url(PAGE))
    link = page.locator("[data-subscribe-link]")
    expect(link).to_be_visible()
    expect(page.locator("[data-subscribe-each]")).to_be_hidden()  # the boxes say it all
    assert link.get_attribute("href") == mailto(ADDRESS, SUBSCRIBE, (), tag)  # none ticked: the whole site
    boxes = page.locator("input[name=service]")
    values = boxes.evaluate_all("(l) => l.map((e) => e.value)")
    assert values == front_order(browser, site, lang)
    names = {s.slug: s.name for s in site.config.services}
    for picked in ([values[0]], [values[0], values[2]], values[1:4]):
        for slug in values:
            page.get_by_label(names[slug], exact=True).set_checked(slug in picked)
        href = link.get_attribute("href") or ""
        assert href == mailto(ADDRESS, SUBSCRIBE, tuple(picked), tag)
        said = unquote(href.partition("?subject=")[2])
        assert said == subject(SUBSCRIBE, tuple(picked), tag)
        asked = command(said)  # what the run reads back from the message it makes
        assert asked is not None and (asked.services, asked.language) == (tuple(picked), tag)
    for slug in values:
        page.get_by_label(names[slug], exact=True).uncheck()
    assert link.get_attribute("href") == mailto(ADDRESS, SUBSCRIBE, (), tag)
    page.context.close()


@pytest.mark.parametrize("tag", LANGUAGES)
def test_without_script_each_service_has_its_own_link(browser: Browser, site: Served, tag: str) -> None:
    lang = next(lang for lang in site_languages(LANGUAGES) if lang.tag == tag)
    page = opened(browser, site.base + lang.url(PAGE), script=False)
    expect(page.locator("[data-subscribe-pick]")).to_be_hidden()
    expect(page.locator(f'[data-subscribe-each] a[href="{mailto(ADDRESS, SUBSCRIBE, (), tag)}"]')).to_be_visible()
    links = page.locator("[data-subscribe-each] a[data-slug]")
    slugs = links.evaluate_all("(l) => l.map((e) => e.dataset.slug)")
    assert slugs == front_order(browser, site, lang)  # grouped by category, as the front page
    for slug in slugs:
        one = page.locator(f'a[data-slug="{slug}"]')
        expect(one).to_be_visible()
        assert one.get_attribute("href") == mailto(ADDRESS, SUBSCRIBE, (slug,), tag)
    page.context.close()


def test_without_subscriptions_the_page_keeps_feeds_calendars_and_chats(browser: Browser, plain: Served) -> None:
    page = opened(browser, plain.base + PAGE)
    assert page.locator("#by-email").count() == 0
    assert page.locator("a[href^='mailto:']").count() == 0
    for heading in ("#by-feed", "#by-chat"):
        expect(page.locator(heading)).to_be_visible()
    hrefs = page.locator("#main section a").evaluate_all("(l) => l.map((e) => e.getAttribute('href'))")
    wanted = {"/feed/incidents.xml", f"/{routes.CALENDAR}"}
    for s in plain.config.services:
        wanted |= {routes.service_feed_url(s.slug), f"/{routes.service_calendar_file(s.slug)}"}
    assert set(hrefs) == wanted
    with httpx.Client(base_url=plain.base) as client:
        for href in sorted(wanted):
            assert client.get(href).status_code == 200, href
    chats = page.locator("section[aria-labelledby=by-chat]").inner_text()
    feed = plain.config.site.base_url.rstrip("/") + "/feed/incidents.xml"
    for said in ("Slack", "Microsoft Teams", "Discord", f"/feed subscribe {feed}", "MonitoRSS", "Power Automate"):
        assert said in chats, said
    page.context.close()


def subscribe_links(page: lxml.html.HtmlElement, lang: Language) -> list[lxml.html.HtmlElement]:
    return page.xpath(f"//header//nav[not(@class='langs')]//a[@href='{lang.url(PAGE)}']")


def test_every_page_and_embed_links_the_subscribe_page_in_its_language(site: Served) -> None:
    pages = sorted(str(p.relative_to(site.root)) for p in site.root.rglob("*.html"))
    tags = {lang.tag: lang for lang in site_languages(LANGUAGES)}
    kinds = set()
    for rel in pages:
        lang = tags[routes.language_of(rel, LANGUAGES)]
        page = lxml.html.document_fromstring((site.root / rel).read_bytes())
        if routes.is_embed(rel, LANGUAGES):
            links = page.xpath(f"//a[@href='{lang.url(PAGE)}'][@target='_top']")
        else:
            links = subscribe_links(page, lang)
        assert [a.text_content() for a in links] == [translations(lang.tag).gettext("Subscribe")], rel
        kinds.add(rel.removeprefix(lang.prefix.lstrip("/") + "/").split("/")[0])
    assert {"index.html", "services", "incidents", "reports", "method", "api", "embed", "_errors"} <= kinds
    assert "subscribe" in kinds


def test_the_nav_leads_to_the_page_and_marks_it(browser: Browser, site: Served) -> None:
    for lang in site_languages(LANGUAGES):
        page = opened(browser, site.base + lang.url("/"))
        page.locator("header nav").get_by_role("link", name=translations(lang.tag).gettext("Subscribe")).click()
        page.wait_for_url(site.base + lang.url(PAGE))
        assert page.locator("header nav a[aria-current=page]").get_attribute("href") == lang.url(PAGE)
        assert page.evaluate("document.documentElement.lang") == lang.tag
        page.context.close()


AXE = Axe()


@pytest.mark.parametrize("script", [True, False], ids=["script", "no-script"])
def test_the_email_part_is_axe_clean(browser: Browser, site: Served, script: bool) -> None:
    found = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(color_scheme=scheme)  # type: ignore[arg-type]
        if not script:  # the site's script refused, not all script: axe is one
            context.route("**/static/site.js", lambda route: route.abort())
        page = context.new_page()
        page.goto(site.base + PAGE, wait_until="load")
        expect(page.locator("[data-subscribe-pick]")).to_be_visible(visible=script)
        violations = AXE.run(page).response["violations"]
        if violations:
            found[scheme] = [(v["id"], [n["html"][:120] for n in v["nodes"][:3]]) for v in violations]
        page.context.close()
    assert found == {}

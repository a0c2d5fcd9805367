"""Atom feeds: valid against RFC 4287's RELAX NG schema, plus what the schema cannot see."""

from __future__ import annotations

from pathlib import Path

import feedparser
import lxml.etree as et
import lxml.html
import pytest
import rnc2rng
from markupsafe import Markup

from statusgen.config import SiteConfig
from statusgen.demo import main as demo
from statusgen.render.templating import render

ATOM = "{http://www.w3.org/2005/Atom}"
SCHEMA = Path(__file__).parent / "schemas" / "atom.rnc"


@pytest.fixture(scope="module")
def relaxng() -> et.RelaxNG:
    rng = rnc2rng.dumps(rnc2rng.load(str(SCHEMA))).replace('xmlns:local=""', "")
    return et.RelaxNG(et.fromstring(rng.encode()))


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("feeds")
    demo(
        ["--no-serve", "--cycles", "8", "--pause", "0", "--workdir", str(work / "data"), "--output", str(work / "site")]
    )
    return work / "site"


def feeds(site: Path) -> list[Path]:
    found = sorted((site / "feed").rglob("*.xml"))
    assert len(found) > 5
    return found


def test_every_feed_is_valid_against_the_rfc_4287_schema(demo_site, relaxng):
    for path in feeds(demo_site):
        doc = et.parse(str(path))
        assert relaxng.validate(doc), f"{path}: {relaxng.error_log}"


def test_the_schema_can_fail(relaxng):
    broken = et.fromstring(b'<feed xmlns="http://www.w3.org/2005/Atom"><title>x</title></feed>')
    assert not relaxng.validate(broken)  # no id, no updated


def test_what_the_schema_cannot_see(demo_site):
    entries_seen = 0
    for path in feeds(demo_site):
        feed = et.parse(str(path)).getroot()
        entries = feed.findall(f"{ATOM}entry")
        has_feed_author = feed.find(f"{ATOM}author/{ATOM}name") is not None
        assert has_feed_author or all(e.find(f"{ATOM}author") is not None for e in entries), path
        ids = [e.findtext(f"{ATOM}id") for e in entries]
        assert len(ids) == len(set(ids)), path
        assert all(i.startswith("tag:") for i in ids + [feed.findtext(f"{ATOM}id")])
        links = {ln.get("rel", "alternate"): ln.get("href") for ln in feed.findall(f"{ATOM}link")}
        assert links["self"].endswith(path.relative_to(demo_site).as_posix())
        for e in entries:
            alternate = [ln for ln in e.findall(f"{ATOM}link") if ln.get("rel", "alternate") == "alternate"]
            assert alternate or e.find(f"{ATOM}content") is not None
        entries_seen += len(entries)
    assert entries_seen >= 4


def test_a_feed_reader_sees_the_whole_timeline_newest_first(demo_site):
    feed = feedparser.parse((demo_site / "feed" / "incidents.xml").read_bytes())
    assert not feed.bozo
    assert feed.feed.author and feed.feed.links
    published = [e.published_parsed for e in feed.entries]
    assert published == sorted(published, reverse=True)  # newest incident first
    resolved = next(e for e in feed.entries if e.title.endswith("(resolved)"))
    body = resolved.content[0].value
    assert "opened" in body and "resolved" in body and "Recovered after" in body


HOSTILE = "<script>alert(\"x\")</script> & 'quoted' <b>"


def test_a_feed_escapes_every_text_and_an_xml_parser_reads_it_back():
    e = {
        "id": f"tag:x,2026-11-22:incident/{HOSTILE}",
        "title": HOSTILE,
        "published": "2026-11-22T20:00:00Z",
        "updated": "2026-11-22T21:00:00Z",
        "url": f'https://status.example.com/incidents/a.html?"{HOSTILE}',
        "severity": HOSTILE,
        "service": "x",
        "service_name": HOSTILE,
        "summary": HOSTILE,
        "state_words": HOSTILE,
        "ended": "2026-11-22T21:00:00Z",
        "duration": HOSTILE,
        "updates": [{"at": "2026-11-22T20:00:00Z", "kind": HOSTILE, "status": HOSTILE, "message": HOSTILE}],
        "operator": False,
        "categories": [(HOSTILE, f"Severity: {HOSTILE}"), ("x", f"Service: {HOSTILE}")],
        "content": "feed-content.html",
    }
    head = {
        "id": "tag:x,2026-11-22:feed",
        "title": HOSTILE,
        "subtitle": HOSTILE,
        "updated": "2026-11-22T21:00:00Z",
        "self_url": f"https://status.example.com/feed/?{HOSTILE}",
        "alternate_url": "https://status.example.com/",
    }
    entry = Markup(render("feed-entry.xml", e=e).decode("utf-8"))
    text = render("feed.xml", feed=head, entries=[entry], site=SiteConfig(title=HOSTILE), version="0")
    assert b"<script" not in text and b"<b>" not in text
    feed = et.fromstring(text)
    assert feed.findtext(f"{ATOM}title") == feed.findtext(f"{ATOM}author/{ATOM}name") == HOSTILE
    entry = feed.find(f"{ATOM}entry")
    assert entry.findtext(f"{ATOM}title") == entry.findtext(f"{ATOM}summary") == HOSTILE
    assert entry.findtext(f"{ATOM}id") == e["id"] and entry.find(f"{ATOM}link").get("href") == e["url"]
    assert [c.get("label") for c in entry.findall(f"{ATOM}category")] == [f"Severity: {HOSTILE}", f"Service: {HOSTILE}"]
    content = entry.find(f"{ATOM}content")
    assert content.get("type") == "html"  # HTML, escaped: a reader parses it once more
    inner = lxml.html.fragment_fromstring(content.text, create_parent="div")
    assert not inner.xpath("//script|//b") and inner.text_content().count(HOSTILE) == 6
    assert f"{HOSTILE}: {HOSTILE}. Started" in inner.text_content()

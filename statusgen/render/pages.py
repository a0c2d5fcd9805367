"""Render: the web pages and their assets, from the build's JSON documents.

    index.html                   the front page: health index, counts, open incidents,
                                 every service by category with its 90-day bar
    services/{slug}/index.html   one service: state and reason, vendor view, checks,
                                 latency and availability charts, incidents, links
    incidents/index.html         open and past incidents with their timelines
    services/{slug}/incidents/index.html
                                 every incident of one service, each told in full
                                 (an incident's URL is its part there: ``routes.incident_page_url``)
    method/index.html            how the checks are made, from the configuration
    api/index.html               every endpoint: parameters, caching, limits, examples
    static/...                   the stylesheet and the icon (``templates/static/``)

One source of truth: every number a page shows is read from ``docs`` (tree
path -> the JSON document of this build), never recomputed from ``SiteData``,
so the pages and the API cannot disagree. The configuration gives only words
(title, vantage point) and, on the method page, the settings that no JSON
document carries.

Links are root-relative (``/services/acme/``), like the ``links`` of the JSON
documents: the tree works wherever it is served at the root of a host, so a
mirrored copy served at ``/`` works as is. Pages ask for nothing outside the
site: a stylesheet, an icon and one small script under ``/static/``, no web
fonts. The script only adds: on hover and keyboard focus, the bars and charts
tell each bucket's numbers, read from the history JSON of the same site;
without it every page still tells the same in words (``charts.py``).

Speed: a build of 1,000 services renders its pages in about two seconds, so
the markup that repeats most (bars, charts, the day table, status words and
times) is made by Python functions of numbers, not by template loops or
macros; the templates hold the words around them. Service pages, each made
again by every cycle, and services' incidents pages are made whole in Python
inside the layout of ``base.html`` rendered once (``Layout``); only a
service's vendor section is a template.

Vendor and service text is untrusted: templates rely on Jinja's autoescape
(never ``|safe``), links to outside pages are kept only when they are
http(s), and the markup made in Python escapes every word it holds.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from jinja2 import BytecodeCache, Environment
from jinja2.bccache import Bucket
from markupsafe import Markup

from statusgen import routes
from statusgen.config import Config, SiteConfig
from statusgen.decide.history import series_of
from statusgen.model import (
    DESCRIPTIONS,
    RANGES,
    STATUS_WORDS,
    STATUSES,
    Outcome,
    Status,
)
from statusgen.policy import MAX_AGE, RATE_PER_MINUTE
from statusgen.render import charts
from statusgen.render.documents import configured_record, incidents_by_service
from statusgen.render.gather import SiteData
from statusgen.render.htmltext import escape
from statusgen.render.openapi import openapi_document
from statusgen.timeutil import human_duration, iso

STATIC = Path(__file__).resolve().parents[2] / "templates" / "static"
PAST_WITH_TIMELINES = 50   # the incidents page tells the newest past incidents in full, lists the older ones
PAST_ON_SERVICE_PAGE = 5   # a service page lists its newest past incidents; its incidents page has them all
SNAPSHOT = f"{routes.API}/snapshot.json"
HEALTH = f"{routes.API}/health.json"
IMPACT_WORDS = {"none": "no visible impact"}
SOURCE_WORDS = {"checks": "our own checks", "vendor": "the vendor's status page", "schedule": "the maintenance schedule"}
#: Failure outcomes of a check (the vendor-only ``parse`` is not one).
CHECK_FAILURES = tuple((o.value, DESCRIPTIONS[o]) for o in Outcome if o not in (Outcome.OK, Outcome.PARSE))


# -- filters: how numbers and words are shown ---------------------------------------

def status_word(status: str) -> str:
    """``partial_outage`` as ``Partial outage``; unknown words are shown as they are."""
    try:
        words = STATUS_WORDS[Status(status)]
    except ValueError:
        words = IMPACT_WORDS.get(status, status.replace("_", " "))
    return sentence(words)


@functools.lru_cache(maxsize=4096)
def duration(seconds: int | None) -> str:
    """A duration in seconds as a person says it (``2 h 5 min``); remembered, as ``when``."""
    return "\u2014" if seconds is None else human_duration(timedelta(seconds=seconds))


def outside_link(url: str | None) -> str | None:
    """An untrusted URL, kept only when it is http(s): never ``javascript:`` or ``data:``."""
    if not url:
        return None
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    return url if parts.scheme in ("http", "https") and parts.netloc else None


def outcome_word(outcome: str) -> str:
    """A check outcome in words (``timeout`` as ``timed out``)."""
    try:
        return DESCRIPTIONS[Outcome(outcome)]
    except ValueError:
        return outcome


def byte_size(count: int) -> str:
    """A byte cap as a person reads it (``1 MiB``, ``512 KiB``, ``1500 bytes``)."""
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count % size == 0:
            return f"{count // size} {unit}"
    return f"{count} bytes"


def sentence(text: str) -> str:
    """The first letter upper-case, the rest as it is (Jinja's ``capitalize`` lowers the rest)."""
    return text[:1].upper() + text[1:]


# -- markup that pages repeat thousands of times: Python, not macros -----------------------
#
# A build of 1,000 services writes some 8,000 pages; a Jinja macro call (or
# import) costs tens of microseconds, a function a few. These are called from
# the templates like macros (``status(s)``, ``when(ts)``, ``timeline(updates)``,
# ``incident_card(i)``) and escape every word they are given.

@functools.lru_cache(maxsize=256)
def status_label(status: str) -> Markup:
    """A status as its word, with the class that adds its symbol and colour (never colour alone)."""
    return Markup(f'<span class="st st-{escape(status)}">{escape(status_word(status))}</span>')


@functools.lru_cache(maxsize=65536)
def when(stamp: str | None) -> Markup:
    """A time as ``<time>``: the RFC 3339 stamp for machines, ``2026-11-22 20:21 UTC`` for people.

    Remembered: a build shows each incident's times on its page, in its feed entries, on its
    service's page and on the incidents page (some 47,000 calls for 7,000 incidents)."""
    if not stamp:
        return Markup("&mdash;")
    return Markup(f'<time datetime="{escape(stamp)}">{escape(charts.moment_text(stamp))}</time>')


def _update(u: dict[str, Any]) -> str:
    state = f" · {status_label(u['status'])}" if u["status"] else ""
    return f'\n<li>{when(u["at"])} <span class="kind">{escape(sentence(u["kind"]))}</span>{state}<br>{escape(u["message"])}</li>'


def timeline(updates: list[dict[str, Any]]) -> Markup:
    """An incident's updates, oldest first: when, what kind, the status it reached, the message."""
    return Markup(f'<ol class="timeline">{"".join([_update(u) for u in updates])}\n</ol>')


def incident_facts(i: dict[str, Any]) -> Markup:
    """Which service, how severe, when it started, and whether it is open or how long it lasted."""
    if i["open"]:
        state = f"<dt>State</dt><dd><strong>Open</strong>, last update {when(i['updated_at'])}</dd>"
    else:
        state = f"<dt>Resolved</dt><dd>{when(i['ended_at'])}, after {escape(duration(i['duration_s']))}</dd>"
    return Markup(f'<dl class="facts">\n<dt>Service</dt><dd><a href="{escape(routes.service_page_url(i["service"]))}">'
                  f'{escape(i["service_name"])}</a></dd>\n<dt>Severity</dt><dd><span class="sev">'
                  f'{escape(sentence(i["severity"]))}</span></dd>\n<dt>Started</dt><dd>{when(i["started_at"])}</dd>\n'
                  f"{state}\n</dl>")


def incident_card(i: dict[str, Any]) -> Markup:
    """An incident told in full: its title linking where it is told for good (its part of its
    service's incidents page), its facts and its timeline."""
    anchor = escape(routes.incident_anchor(i["id"]))
    return Markup(f'<article class="incident" aria-labelledby="{anchor}">\n<h3 id="{anchor}"><a href="'
                  f'{escape(i["links"]["page"])}">{escape(i["title"])}</a></h3>\n{incident_facts(i)}\n'
                  f"{timeline(i['updates'])}\n</article>")


def incident_rows(incidents: list[dict[str, Any]]) -> Markup:
    """Incidents as rows of a table (incident, severity, started, lasted), each linking its timeline."""
    return Markup("".join([
        f'\n<tr><td data-label="Incident"><a href="{escape(i["links"]["page"])}">{escape(i["title"])}</a></td>'
        f'<td data-label="Severity">{escape(sentence(i["severity"]))}</td><td data-label="Started">'
        f'{when(i["started_at"])}</td><td data-label="Lasted">{escape(duration(i["duration_s"]))}</td></tr>'
        for i in incidents]))


GLOBALS = {"status": status_label, "when": when, "timeline": timeline, "incident_facts": incident_facts,
           "incident_card": incident_card, "incident_rows": incident_rows}

FILTERS = {
    "number": charts.number, "moment": charts.moment_text, "day": charts.day_text,
    "status_word": status_word, "duration": duration, "outside_link": outside_link,
    "range_label": lambda name: charts.RANGE_LABELS.get(name, name),
    "source_word": lambda source: SOURCE_WORDS.get(source, source), "outcome_word": outcome_word,
    "bytes": byte_size, "iso": iso, "sentence": sentence,
    "service_page_url": routes.service_page_url, "service_feed_url": routes.service_feed_url,
}


class CompiledTemplates(BytecodeCache):
    """Compiled templates kept in memory across the builds of one process.

    Every build makes a fresh Environment; without this, each would compile
    the page templates again. Jinja checks each entry against the template's
    source, so an edited template is compiled anew.
    """

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: Bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket: Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


COMPILED = CompiledTemplates()


def _render(env: Environment, template: str, **context: Any) -> bytes:
    """A template rendered to UTF-8 bytes."""
    return env.get_template(template).render(**context).encode("utf-8")


# -- the documents a page reads ---------------------------------------------------------

def _service_record(docs: dict[str, Any], slug: str) -> dict[str, Any]:
    record: dict[str, Any] = docs[routes.service_file(slug)]["service"]
    return record


def _incidents(docs: dict[str, Any], active: str | None = None) -> list[dict[str, Any]]:
    incidents: list[dict[str, Any]] = docs[routes.incidents_file(active)]["incidents"]
    return incidents


def static_files() -> dict[str, bytes]:
    """The assets of ``templates/static/``, as ``static/<name>``."""
    return {f"static/{p.name}": p.read_bytes() for p in sorted(STATIC.iterdir()) if p.is_file()}


# -- the front page -------------------------------------------------------------------

def front_bar(history: dict[str, Any]) -> dict[str, Any]:
    """What the front page shows of a service's 90-day history: its bar's cells and its summary
    (small: a forked renderer hands it back for each of its services). Drawn from the
    history's chart columns (``charts.history_cells``), not from its points read back."""
    return {"cells": charts.history_cells(history), "summary": history["summary"]}


def _front_service(summary: dict[str, Any], bar: dict[str, Any]) -> dict[str, Any]:
    return {"summary": summary, "cells": bar["cells"], "days": bar["summary"]}


def _categories(docs: dict[str, Any], bars: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Categories in declared order, each with its counts and its services."""
    snapshot = docs[SNAPSHOT]
    out = []
    for slug, counts in snapshot["counts"]["by_category"].items():
        members = [_front_service(s, bars[s["slug"]]) for s in snapshot["services"] if s["category"] == slug]
        if members:
            out.append({"slug": slug, "counts": counts, "services": members})
    return out


def front_page(env: Environment, config: Config, docs: dict[str, Any],
               bars: dict[str, dict[str, Any]] | None = None) -> bytes:
    """The health index, the counts, open incidents, and every service with its 90-day bar.

    ``bars``: each service's ``front_bar``, when the service pages have made them already.
    """
    if bars is None:
        bars = {s["slug"]: front_bar(docs[routes.history_file(s["slug"], "90d")]) for s in docs[SNAPSHOT]["services"]}
    return _render(env, "index.html", site=config.site, nav="status", snapshot=docs[SNAPSHOT],
                   health=docs[HEALTH], open_incidents=_incidents(docs, "1"),
                   categories=_categories(docs, bars), legend=charts.LEGEND, statuses=STATUSES)


# -- a page per service -----------------------------------------------------------------

def _chart_panels(docs: dict[str, Any], slug: str) -> list[dict[str, Any]]:
    """One panel per history range: its document, its URL and its two charts (drawn from the
    history's ``Series``, without reading its points back)."""
    panels = []
    for name in RANGES:
        history = docs[routes.history_file(slug, name)]
        series = series_of(history)
        panels.append({"name": name, "history": history, "url": routes.history_url(slug, name),
                       "latency": charts.latency_chart(history, series),
                       "availability": charts.availability_chart(history, series)})
    return panels


def service_page(env: Environment, config: Config, docs: dict[str, Any], slug: str,
                 incidents: list[dict[str, Any]], bars: dict[str, dict[str, Any]] | None = None) -> bytes:
    """One service: its record, vendor view, checks, charts of every range, its days, incidents and links.

    Open incidents are told with their timelines; the newest past ones (``PAST_ON_SERVICE_PAGE``) are
    listed, each linking its timeline on the service's incidents page, which tells them all.
    ``bars`` (slug -> ``front_bar``) receives this service's, for the front page.

    Made in Python inside the layout of ``base.html`` (``Layout``), as incidents pages are: a
    cycle renders every service's page again, and the template took 0.3 ms a page. The
    vendor's section, shown only for services with a vendor source, is a template
    (``service-vendor.html``).
    """
    record = _service_record(docs, slug)
    category = docs[SNAPSHOT]["counts"]["by_category"].get(record["category"], {})
    days = docs[routes.history_file(slug, "90d")]
    if bars is not None:
        bars[slug] = front_bar(days)
    name, feed = escape(record["name"]), escape(record["links"]["feed"])
    head = (f'<link rel="alternate" type="application/atom+xml" title="{name}: incidents" href="{feed}">\n'
            f'<link rel="alternate" type="application/json" title="{name} (JSON)" '
            f'href="{escape(record["links"]["self"])}">\n<script src="/static/site.js" defer></script>\n')
    main = "".join((
        _state_section(record, category, docs[routes.service_file(slug)]["as_of"]),
        _vendor_section(env, record["vendor"]),
        _checks_section(record),
        _charts_section(_chart_panels(docs, slug)),
        _days_section(charts.day_table(days)),
        _incidents_section(slug, incidents),
        f'\n<section aria-labelledby="h-data">\n<h2 id="h-data">Data</h2>\n<ul class="links">\n'
        f'<li><a href="{escape(record["links"]["self"])}">This service as JSON</a></li>\n'
        f'<li><a href="{escape(record["links"]["history"])}">Its history as JSON</a></li>\n'
        f'<li><a href="{feed}">Its incidents feed (Atom)</a></li>\n</ul>\n</section>\n'))
    return _layout(env, config.site, "status").page(f"{name} \u00b7 {escape(config.site.title)}", head, main)


@functools.lru_cache(maxsize=8)
def _layout(env: Environment, site: SiteConfig, nav: str) -> Layout:
    """``Layout.of``, once per process for each kind of page (the settings are part of the key)."""
    return Layout.of(env, site, nav)


def _state_section(s: dict[str, Any], category: dict[str, Any], as_of: str) -> str:
    """The head of a service page: its category, name, description and link, then its state."""
    st, url = s["state"], outside_link(s["url"])
    sources = ", ".join([SOURCE_WORDS.get(source, source) for source in st["sources"]]) or "nothing yet"
    description = f"<p>{escape(s['description'])}</p>" if s["description"] else ""
    home = f'<p class="small"><a href="{escape(url)}" rel="nofollow noopener">{escape(s["url"])}</a></p>' if url else ""
    oi = s["open_incident"]
    open_incident = (f'<p>Open incident: <a href="{escape(oi["page"])}">{escape(oi["title"])}</a> '
                     f'({escape(oi["severity"])}, since {when(oi["started_at"])})</p>') if oi else ""
    return (f'\n<p class="small"><a href="/">Status</a> \u203a {escape(category.get("name") or s["category"])}</p>\n'
            f'<h1>{escape(s["name"])}</h1>\n{description}\n{home}\n\n'
            f'<section class="state" aria-labelledby="h-state">\n<h2 id="h-state" class="sr-only">Current state</h2>\n'
            f'<p id="status">{status_label(st["status"])} <span class="muted">since {when(st["since"])}</span></p>\n'
            f'<p id="reason">{escape(st["reason"])}</p>\n'
            f'<p class="small muted">Rests on: {escape(sources)}. Our own checks alone say: '
            f'{escape(status_word(st["own_checks"]))}. As of {when(as_of)}.</p>\n{open_incident}\n</section>\n\n')


def _vendor_section(env: Environment, vendor: dict[str, Any] | None) -> str:
    """What the vendor says (a template: vendor views vary most), or that no vendor is read."""
    if vendor:
        told = env.get_template("service-vendor.html").render(vendor=vendor)
    else:
        told = ('\n<p class="muted">No vendor source is configured for this service: its status rests on our '
                'own checks.</p>\n')
    return (f'<section aria-labelledby="h-vendor">\n<h2 id="h-vendor">What the vendor says</h2>\n\n{told}\n'
            '</section>\n\n')


def _check_row(c: dict[str, Any]) -> str:
    """A check of the service: its request, what it expects, its limits and its last result."""
    r = c["last_result"]
    keyword = f", text \u201c{escape(c['keyword'])}\u201d" if c["keyword"] else ""
    if r:
        status = f", HTTP {escape(r['http_status'])}" if r["http_status"] else ""
        took = f", {escape(charts.number(r['latency_ms']))} ms" if r["latency_ms"] is not None else ""
        last = (f'<span class="{"outcome-ok" if r["outcome"] == "ok" else "outcome-bad"}">'
                f'{escape(sentence(outcome_word(r["outcome"])))}</span>{status}{took}'
                f'{" (slow)" if r["slow"] else ""}<br><span class="small muted">{when(r["at"])}</span>')
    else:
        last = "No result yet"
    return (f'\n<tr><td data-label="Check">{escape(c["check"])}</td><td data-label="Request"><code>'
            f'{escape(c["method"])} {escape(c["url"])}</code></td>\n<td data-label="Expects">HTTP '
            f'{escape(", ".join([str(code) for code in c["expect_status"]]))}{keyword}</td>\n'
            f'<td data-label="Limits">timeout {escape(charts.number(c["timeout_s"]))} s; slow above '
            f'{escape(charts.number(c["degraded_ms"]))} ms</td>\n<td data-label="Last result">{last}</td></tr>')


def _checks_section(s: dict[str, Any]) -> str:
    """The service's checks, its thresholds, and the numbers of its last day."""
    t, day, n = s["thresholds"], s["last_day"]["summary"], charts.number
    return ('<section aria-labelledby="h-checks">\n<h2 id="h-checks">Checks</h2>\n'
            '<div class="table-wrap"><table class="stack">\n<caption class="sr-only">Each check and its last result'
            '</caption>\n<thead><tr><th scope="col">#</th><th scope="col">Request</th><th scope="col">Expects</th>'
            '<th scope="col">Limits</th><th scope="col">Last result</th></tr></thead>\n<tbody>'
            f'{"".join([_check_row(c) for c in s["checks"]])}\n</tbody></table></div>\n'
            f'<p class="small">An outage is declared after {escape(t["failures_to_open"])} failed cycles in a row and '
            f'resolved after {escape(t["successes_to_resolve"])} good cycles in a row. '
            '<a href="/method/">How the checks are made</a>.</p>\n\n'
            f'<p class="small">Last day: {escape(s["last_day"]["count"])} results, {escape(day["failed"])} failed; '
            f'availability {escape(n(day["availability"]))}%; latency p50 {escape(n(day["latency_p50_ms"]))} ms, '
            f'p95 {escape(n(day["latency_p95_ms"]))} ms.</p>\n</section>\n\n')


def _panel(p: dict[str, Any]) -> str:
    """One range: its summary, its two charts and a link to its JSON."""
    h, n = p["history"], charts.number
    s, name, label = h["summary"], escape(p["name"]), escape(charts.RANGE_LABELS.get(p["name"], p["name"]))
    availability = escape(n(s["availability"])) + ("%" if s["availability"] is not None else "")
    maintenance = f", {escape(s['maintenance'])} in maintenance" if s["maintenance"] else ""
    excluded = f", {escape(s['excluded'])} set aside" if s["excluded"] else ""
    return (f'\n<div class="panel" id="panel-{name}">\n<h3>Last {label} <span class="small muted">'
            f'({escape(h["count"])} buckets of {escape(duration(h["resolution_s"]))}, UTC)</span></h3>\n'
            f'<dl class="facts">\n<dt>Availability</dt><dd data-field="availability">{availability}</dd>\n'
            f'<dt>Latency</dt><dd data-field="latency">p50 {escape(n(s["latency_p50_ms"]))} ms, '
            f'p95 {escape(n(s["latency_p95_ms"]))} ms</dd>\n'
            f'<dt>Checks</dt><dd>{escape(s["checks"])} counted, {escape(s["failed"])} failed'
            f'{maintenance}{excluded}</dd>\n'
            f'<dt>Incidents</dt><dd>{escape(n(s["incident_minutes"]))} min</dd>\n</dl>\n<div class="chart-pair">\n'
            '<figure><figcaption>Latency</figcaption>\n<ul class="key"><li class="k50">p50 (median)</li>'
            f'<li class="k95">p95</li></ul>\n{p["latency"]}\n</figure>\n<figure><figcaption>Availability</figcaption>\n'
            '<p class="key">Share of good answers per bucket; a low strip: nothing counted.</p>\n'
            f'{p["availability"]}\n</figure>\n</div>\n<p class="small"><a href="{escape(p["url"])}">This range as JSON'
            '</a></p>\n</div>')


def _charts_section(panels: list[dict[str, Any]]) -> str:
    """A tab per range, then its panel (``_panel``)."""
    tabs = "".join([
        f'\n<input type="radio" name="range" id="range-{escape(p["name"])}"{" checked" if i == 0 else ""}>'
        f'<label for="range-{escape(p["name"])}">{escape(charts.RANGE_LABELS.get(p["name"], p["name"]))}</label>'
        for i, p in enumerate(panels)])
    return ('<section aria-labelledby="h-charts">\n<h2 id="h-charts">Latency and availability</h2>\n'
            '<p class="small muted"><span data-hint hidden>Point at a chart, or focus it and use the arrow keys, '
            'for the numbers of each bucket. </span><a href="#days">Every day of the last 90</a> is also listed '
            f'below.</p>\n<div class="tabs">{tabs}{"".join([_panel(p) for p in panels])}\n</div>\n</section>\n\n')


def _days_section(rows: str) -> str:
    """The table of the last 90 days (``charts.day_rows``), folded."""
    return ('<section aria-labelledby="h-days">\n<h2 id="h-days">Day by day</h2>\n'
            '<details><summary>The last 90 UTC days, newest first</summary>\n<p class="small muted">Availability '
            'in %, incidents in minutes, checks counted and failed, latency p50 and p95 in ms.</p>\n'
            '<div class="table-wrap"><table class="days" id="days">\n<caption class="sr-only">Each day of the last 90'
            '</caption>\n<thead><tr><th scope="col">Day</th><th scope="col">Availability</th><th scope="col">'
            'Incidents</th><th scope="col">Checks</th><th scope="col">Failed</th><th scope="col">p50</th>'
            f'<th scope="col">p95</th></tr></thead>\n<tbody>{rows}</tbody></table></div>\n</details>\n</section>\n\n')


def _incidents_section(slug: str, incidents: list[dict[str, Any]]) -> str:
    """Open incidents told in full, then the newest past ones listed, each linking its timeline, then a
    link to every incident of the service (its incidents page): the page stays short however long the
    service has been watched."""
    open_ = [i for i in incidents if i["open"]]
    past = [i for i in incidents if not i["open"]]
    cards = "".join([f"{incident_card(i)}\n" for i in open_])
    if past:
        shown = past[:PAST_ON_SERVICE_PAGE]
        which = (f"The {len(shown)} newest of {len(past)} past incidents" if len(shown) < len(past)
                 else "Past incidents")
        listed = (f'\n<p class="small muted">{which}, newest first; each links to its timeline.</p>\n'
                  '<div class="table-wrap"><table class="stack" id="past">\n<thead><tr>'
                  '<th scope="col">Incident</th><th scope="col">Severity</th><th scope="col">Started</th>'
                  f'<th scope="col">Lasted</th></tr></thead>\n<tbody>{incident_rows(shown)}\n</tbody></table></div>')
    elif not open_:
        listed = "\n<p>No incidents recorded for this service.</p>"
    else:
        listed = ""
    every = (f'\n<p class="small"><a href="{escape(routes.service_incidents_url(slug))}">Every incident of this '
             f'service ({len(incidents)}), each with its timeline</a></p>') if incidents else ""
    return (f'<section aria-labelledby="h-incidents">\n<h2 id="h-incidents">Incidents</h2>\n{cards}{listed}{every}\n'
            '</section>\n')


# -- incidents -------------------------------------------------------------------------

def incidents_page(env: Environment, config: Config, docs: dict[str, Any]) -> bytes:
    """Open incidents, then past ones with their timelines; the oldest listed, each linking its page."""
    return _render(env, "incidents.html", site=config.site, nav="incidents",
                   open_list=docs[routes.incidents_file("1")], past_list=docs[routes.incidents_file("0")],
                   recent=PAST_WITH_TIMELINES,
                   as_of=docs[routes.incidents_file()]["as_of"])


# -- services' incidents pages: one per service, made in Python inside the layout rendered once ----

_BLOCKS = ("title", "head", "main")     # the blocks of base.html a page fills


@dataclass(frozen=True)
class Layout:
    """``base.html`` rendered once for one kind of page, cut where its blocks go. A page made
    here is what a template extending ``base.html`` renders, without a template render per
    page: a cycle makes every service's page again, and a full build every service's
    incidents page."""

    parts: tuple[str, ...]    # the layout's text before, between and after the blocks

    @classmethod
    def of(cls, env: Environment, site: SiteConfig, nav: str) -> Layout:
        marks = [f"\0{block}\0" for block in _BLOCKS]      # NUL: never in a rendered page
        source = '{% extends "base.html" %}' + "".join(
            f"{{% block {block} %}}{mark}{{% endblock %}}" for block, mark in zip(_BLOCKS, marks))
        text = env.from_string(source).render(site=site, nav=nav)
        parts = []
        for mark in marks:                              # each block once, in this order
            before, _, text = text.partition(mark)
            parts.append(before)
        return cls((*parts, text))

    def page(self, title: str, head: str, main: str) -> bytes:
        p = self.parts
        return "".join((p[0], title, p[1], head, p[2], main, p[3])).encode("utf-8")


def service_incidents_page(layout: Layout, site_title: str, slug: str, name: str,
                           incidents: list[dict[str, Any]]) -> bytes:
    """Every incident of one service, newest first, each told in full (its facts and timeline)
    under the anchor its URL names (``routes.incident_page_url``); then links to its service,
    its JSON and its feed."""
    name_html, feed = escape(name), escape(routes.service_feed_url(slug))
    open_ = "".join([f"{incident_card(i)}\n" for i in incidents if i["open"]])
    past = "".join([f"{incident_card(i)}\n" for i in incidents if not i["open"]])
    if incidents:
        told = ((f'<section aria-labelledby="h-open">\n<h2 id="h-open">Open</h2>\n{open_}</section>\n'
                 if open_ else "") +
                (f'<section aria-labelledby="h-past">\n<h2 id="h-past">Past</h2>\n{past}</section>\n' if past else ""))
    else:
        told = "<p>No incidents recorded for this service.</p>\n"
    main = (f'\n<p class="small"><a href="/">Status</a> \u203a <a href="{escape(routes.service_page_url(slug))}">'
            f'{name_html}</a> \u203a Incidents</p>\n<h1>Incidents of {name_html}</h1>\n'
            f'<p class="muted">Every incident this site recorded for {name_html}, newest first, each with its '
            f'timeline. <a href="{feed}">Follow them in a feed reader (Atom)</a>.</p>\n{told}'
            f'<section aria-labelledby="h-data">\n<h2 id="h-data">Data</h2>\n<ul class="links">\n'
            f'<li><a href="{escape(routes.service_page_url(slug))}">{name_html}: its page</a></li>\n'
            f'<li><a href="{escape(routes.service_url(slug))}">The service as JSON</a></li>\n'
            f'<li><a href="/api/v1/incidents">Every incident as JSON</a></li>\n'
            f'<li><a href="{feed}">Incidents feed of {name_html} (Atom)</a></li>\n</ul>\n</section>\n')
    head = f'<link rel="alternate" type="application/atom+xml" title="{name_html}: incidents" href="{feed}">\n'
    return layout.page(f"Incidents of {name_html} \u00b7 {escape(site_title)}", head, main)


# -- the method page and the API page --------------------------------------------------

def method_page(env: Environment, config: Config, docs: Mapping[str, Any]) -> bytes:
    """How the checks are made: the health document, the fields of each service's record that its
    configuration makes (``configured_record``), what only the configuration holds, and each
    range's bucket count and size (``history.RANGES``, which every history document is made by).
    Made of these alone, it is made before any service, beside the other site-wide files."""
    services = [{"record": configured_record(s), "config": s} for s in config.services]
    ranges = [{"name": name, "count": rng.buckets, "resolution_s": rng.resolution_s} for name, rng in RANGES.items()]
    return _render(env, "method.html", site=config.site, nav="method", health=docs[HEALTH], services=services,
                   ranges=ranges, outcomes=CHECK_FAILURES,
                   any_vendor=any(s.vendor for s in config.services),
                   any_maintenance=any(s.maintenance for s in config.services))


def _example_url(path: str, operation: dict[str, Any], slug: str) -> str:
    """A real URL of this site for an endpoint: the first service, the first value of each parameter."""
    query = [f"{p['name']}={p['schema']['enum'][0]}" for p in operation["parameters"]
             if p["in"] == "query" and p["schema"].get("enum")]
    url = path.replace("{slug}", slug)
    return url + ("?" + "&".join(query) if query else "")


def _endpoints(config: Config) -> list[dict[str, Any]]:
    """Every endpoint of the OpenAPI document, with an example URL."""
    slug = config.services[0].slug if config.services else "example"
    out = []
    for path, item in openapi_document(config)["paths"].items():
        op = item["get"]
        out.append({"path": path, "summary": op["summary"], "parameters": op["parameters"],
                    "responses": sorted(op["responses"].items()), "example": _example_url(path, op, slug)})
    return out


def _pretty(document: Any) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


def api_page(env: Environment, config: Config, docs: dict[str, Any]) -> bytes:
    """Every endpoint of the OpenAPI document, with caching, limits and examples of this build."""
    example = {"slug": config.services[0].slug if config.services else "example", "base": config.site.base_url}
    return _render(env, "api.html", site=config.site, nav="api", endpoints=_endpoints(config), example=example,
                   health_json=_pretty(docs[HEALTH]), error_json=_pretty(docs[routes.error_file("400-range")]),
                   max_age=MAX_AGE, per_minute=RATE_PER_MINUTE, statuses=STATUSES, ranges=list(RANGES))


# -- the whole site ----------------------------------------------------------------------

def prepare(env: Environment) -> None:
    """Give the environment the page filters, globals and compiled-template cache (once is enough)."""
    env.filters.update(FILTERS)
    env.globals.update(GLOBALS)
    if env.bytecode_cache is None:
        env.bytecode_cache = COMPILED


def incident_pages(env: Environment, config: Config, docs: Mapping[str, Any]
                   ) -> Iterator[tuple[str, Any, Callable[[], bytes]]]:
    """The incidents page, then each service's incidents page: its path, what it shows (its
    inputs: a build keeps the page when they are the same), and how to render it. Every
    configured service has one, and so does a service no longer configured that has incidents
    (their links stay good)."""
    yield ("incidents/index.html", [docs[routes.incidents_file("1")], docs[routes.incidents_file("0")]],
           partial(incidents_page, env, config, docs))
    layout = _layout(env, config.site, "incidents")
    by_service = incidents_by_service(docs)
    names = {s.slug: s.name for s in config.services}
    names |= {slug: told[0]["service_name"] for slug, told in by_service.items() if slug not in names}
    for slug, name in names.items():
        if not routes.SLUG_RE.match(slug):
            raise ValueError(f"service {slug!r} of an incident cannot name a page file")
        told = by_service.get(slug, [])
        yield (routes.service_incidents_file(slug), [slug, name, told],
               partial(service_incidents_page, layout, config.site.title, slug, name, told))


def site_pages(env: Environment, data: SiteData, docs: Mapping[str, Any]) -> dict[str, bytes]:
    """The pages made of the site-wide documents and the configuration alone (the API page, the
    method page) and the assets."""
    prepare(env)
    files = static_files()
    files["api/index.html"] = api_page(env, data.config, docs)
    files["method/index.html"] = method_page(env, data.config, docs)
    return files


def service_wide_pages(env: Environment, data: SiteData, docs: Mapping[str, Any],
                       bars: dict[str, dict[str, Any]]) -> dict[str, bytes]:
    """The page made of every service's record: the front page.
    ``bars``: each service's ``front_bar``, as the service pages made them."""
    prepare(env)
    return {"index.html": front_page(env, data.config, docs, bars)}


def page_files(env: Environment, data: SiteData, docs: dict[str, Any]) -> dict[str, bytes]:
    """Every page and asset, built from ``docs`` (tree path -> the JSON document of this build)."""
    prepare(env)
    by_service = incidents_by_service(docs)
    bars: dict[str, dict[str, Any]] = {}   # each service's front_bar, made with its page
    files = {}
    for summary in docs[SNAPSHOT]["services"]:
        slug = summary["slug"]
        files[f"services/{slug}/index.html"] = service_page(env, data.config, docs, slug,
                                                            by_service.get(slug, []), bars)
    files |= {path: make() for path, _, make in incident_pages(env, data.config, docs)}
    return files | site_pages(env, data, docs) | service_wide_pages(env, data, docs, bars)

"""Render: the monthly reports, as JSON (``/api/v1/reports``, ``/api/v1/reports/{YYYY-MM}``), CSV
(``/reports/{YYYY-MM}.csv``) and pages (``/reports/``, ``/reports/{YYYY-MM}/``), from the store's
monthly rollups and the incidents (``decide.reports`` holds the rules).

A month's files are made of its own data only, and a finished month's data does not change:
its files keep their bytes (and their ETag, and are not uploaded again) from build to build.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from statusgen import routes
from statusgen.config import ServiceConfig
from statusgen.decide.history import Span
from statusgen.decide.reports import MonthFigures, Tally, figures, month_of, months_before, summed
from statusgen.i18n import N_, Language, site_languages, translations
from statusgen.model import STATUSES
from statusgen.render import keys
from statusgen.render.gather import SiteData, as_of_service
from statusgen.render.templating import render
from statusgen.timeutil import iso_epoch

Document = dict[str, Any]

#: The accounting rules, as every report states them (``decide.reports`` applies them).
RULES = {
    "period": N_("Calendar months in UTC; the current month counts up to the data's time (to)."),
    "unknown": N_(
        "Each run speaks for the time since the run before it, at most one interval. Time no run "
        "spoke for (collection stopped, the service not yet configured) and time the service was not "
        "measured (paused) is unknown: it is never counted as up."
    ),
    "down": N_(
        "A major outage counts as down for its whole time; a partial outage for a share of 30%, as "
        "Statuspage weighs it."
    ),
    "degraded": N_("Degraded time is up: slow, but working."),
    "maintenance": N_("Maintenance time is not counted against availability: it leaves the counted time."),
    "availability": N_("(counted - down) / counted, where counted is the known time not in maintenance."),
    "excluded": N_(
        "Results set aside by the vantage rules (our own network failing) change no status; "
        "they are counted in excluded_results."
    ),
    "sla": N_(
        "A target is met when the month's availability is at least the target. The error budget is the "
        "down time the target allows over the month's length less its maintenance; what is left is that less "
        "the down time so far (negative: overspent)."
    ),
    "categories": N_(
        "A category's availability is the mean of its services' availabilities, each weighted by its counted "
        "time: their time up over their counted time, together. Its target is judged on that figure alone, so a "
        "category can meet its target while some of its services miss their own; each category says how many did."
    ),
}
CSV_COLUMNS = (
    "month",
    "service",
    "name",
    "category",
    "availability",
    *(f"{s}_minutes" for s in STATUSES),
    "down_minutes",
    "incidents",
    "incident_minutes",
    "excluded_results",
    "sla",
    "sla_met",
    "error_budget_left_minutes",
)


def kept_months(data: SiteData) -> list[str]:
    """The months reports are made for, newest first: the current one, and each earlier one the
    store holds a rollup of, within ``site.report_months``."""
    now = int(data.time.timestamp())
    first = months_before(month_of(now), data.config.site.report_months - 1)
    held = {m for months in data.months.values() for m in months}
    return sorted({month_of(now), *(m for m in held if m >= first)}, reverse=True)


@dataclass(frozen=True)
class Report:
    """One month's figures: the site's, each category's, each service's."""

    month: str
    site: MonthFigures
    categories: dict[str, tuple[MonthFigures, int, int]]  # category -> its figures, its services, those missed
    services: dict[str, MonthFigures]


def month_report(data: SiteData, month: str) -> Report:
    config, now = data.config, int(data.time.timestamp())
    tallies = {s.slug: data.months.get(s.slug, {}).get(month, Tally()) for s in config.services}
    spans: dict[str, list[Span]] = {s.slug: data.spans_of(s.slug) for s in config.services}
    services = {s.slug: figures(month, tallies[s.slug], spans[s.slug], now, config.target(s)) for s in config.services}
    categories = {}
    for category in config.categories:
        members = [s.slug for s in config.services if s.category == category]
        if members:
            total = summed(tallies[m] for m in members)
            held = [span for m in members for span in spans[m]]
            categories[category] = (
                figures(month, total, held, now, config.sla.get(category), len(members)),
                len(members),
                sum(1 for m in members if services[m].met is False),  # their own targets, missed (so far)
            )
    every = [span for held in spans.values() for span in held]
    site = figures(month, summed(tallies.values()), every, now, None, max(1, len(config.services)))
    return Report(month, site, categories, services)


def figures_document(f: MonthFigures) -> Document:
    sla = None
    if f.sla is not None:
        sla = {
            "target": f.sla,
            "met": f.met,
            "error_budget_minutes": f.error_budget_minutes,
            "error_budget_left_minutes": f.error_budget_left_minutes,
        }
    return {
        "availability": f.availability,
        "minutes": f.minutes,
        "down_minutes": f.down_minutes,
        "maintenance_minutes": f.maintenance_minutes,
        "incidents": f.incidents,
        "incident_minutes": f.incident_minutes,
        "excluded_results": f.excluded,
        "sla": sla,
    }


def _period(f: MonthFigures) -> Document:
    return {"month": f.month, "from": iso_epoch(f.start), "to": iso_epoch(f.end), "complete": f.complete}


def _links(month: str) -> Document:
    return {
        "self": routes.report_url(month),
        "csv": "/" + routes.report_csv_file(month),
        "page": routes.report_page_url(month),
    }


def rules(tag: str) -> dict[str, str]:
    """The accounting rules in a language."""
    said = translations(tag)
    return {key: said.gettext(rule) for key, rule in RULES.items()}


def report_document(data: SiteData, report: Report) -> Document:
    config = data.config
    return {
        **_period(report.site),
        "as_of": iso_epoch(report.site.end),  # a finished month's report keeps its bytes
        "rules": rules(config.site.languages[0]),
        "site": figures_document(report.site),
        "categories": [
            {
                "category": c,
                "name": config.categories[c],
                "services": n,
                "services_missed": missed,
                **figures_document(f),
            }
            for c, (f, n, missed) in report.categories.items()
        ],
        "services": [
            {
                "slug": svc.slug,
                "name": svc.name,
                "category": svc.category,
                **figures_document(report.services[svc.slug]),
            }
            for svc in config.services
        ],
        "links": _links(report.month),
    }


def reports_list(data: SiteData, reports: list[Report]) -> Document:
    return {
        "as_of": iso_epoch(int(data.time.timestamp())) if reports else None,
        "count": len(reports),
        "months": [{**_period(r.site), "availability": r.site.availability, "links": _links(r.month)} for r in reports],
    }


#: How a cell a spreadsheet would run as a formula begins (OWASP, "CSV Injection").
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def text_cell(value: str) -> str:
    """A text cell that a spreadsheet shows as text: one that would begin a formula gets a single
    quote before it, as OWASP recommends. Our own numbers are written as they are."""
    return "'" + value if value.startswith(FORMULA_STARTS) else value


def report_csv(data: SiteData, report: Report) -> bytes:
    """One row per service, with a header row; RFC 4180 (CRLF, fields quoted where needed); the
    names neutralised for spreadsheets (``text_cell``)."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(CSV_COLUMNS)
    for svc in data.config.services:
        f = report.services[svc.slug]
        writer.writerow(
            (
                report.month,
                text_cell(svc.slug),
                text_cell(svc.name),
                text_cell(svc.category),
                "" if f.availability is None else f.availability,
                *(f.minutes[s] for s in STATUSES),
                f.down_minutes,
                f.incidents,
                f.incident_minutes,
                f.excluded,
                "" if f.sla is None else f.sla,
                "" if f.met is None else ("yes" if f.met else "no"),
                "" if f.error_budget_left_minutes is None else f.error_budget_left_minutes,
            )
        )
    return out.getvalue().encode("utf-8")


#: Keeps a month's files when they were made from inputs of this key (``build._kept``): whether it did.
Keep = Callable[[list[str], str], bool]


Made = list[tuple[str, bytes | Document, str | None]]  # each file: its path, its content, its key


def report_files(data: SiteData, site_key: str = "", kept: Keep | None = None) -> Made:
    """Every file of the reports, each with its key: JSON documents (as documents), the CSV and
    the pages (as bytes), a page in each language of the site. A month whose document is the
    served one's (every finished month's) keeps its files (``kept``): none is made again."""
    site = data.config.site
    langs = site_languages(site.languages)
    reports = [month_report(data, m) for m in kept_months(data)]
    listing = reports_list(data, reports)
    files: Made = [(routes.REPORTS, listing, None)]
    said = {lang.tag: rules(lang.tag) for lang in langs}
    for lang in langs:
        page = _page("reports.html", lang, routes.report_page_url(), site=site, listing=listing, rules=said[lang.tag])
        files.append((lang.file(routes.report_page_file()), page, None))
    for r in reports:
        doc = report_document(data, r)
        pages = [lang.file(routes.report_page_file(r.month)) for lang in langs]
        key = keys.key(keys.ReportInputs(site_key, doc))
        if kept is not None and kept([routes.report_file(r.month), routes.report_csv_file(r.month), *pages], key):
            continue
        files += [(routes.report_file(r.month), doc, key), (routes.report_csv_file(r.month), report_csv(data, r), key)]
        for lang, path in zip(langs, pages, strict=True):
            told = {"site": site, "report": doc, "statuses": STATUSES, "rules": said[lang.tag]}
            files.append((path, _page("report.html", lang, routes.report_page_url(r.month), **told), key))
    return files


def _page(template: str, lang: Language, here: str, **context: object) -> bytes:
    return render(template, lang, here=here, nav="reports", **context)


def current_month(data: SiteData, svc: ServiceConfig) -> Document:
    """A service's figures of its current month so far, as of its own data (its record's
    ``as_of``): a service without new data keeps its record's bytes."""
    as_of = int(as_of_service(data, svc).timestamp())
    month = month_of(as_of)
    f = figures(
        month,
        data.months.get(svc.slug, {}).get(month, Tally()),
        data.spans_of(svc.slug),
        as_of,
        data.config.target(svc),
    )
    return {**_period(f), **figures_document(f), "links": _links(month)}

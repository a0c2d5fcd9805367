"""Where each public URL lives in the output tree, and how a request maps to it.

One table, used by the renderer (to name files), the preview server (to
answer requests) and the nginx configuration (to write its maps). Query
variants are pre-rendered files; a raw query value never reaches a path: it
must match a strict pattern and name a file that the build wrote.

    /api/v1/snapshot                         api/v1/snapshot.json
    /api/v1/services                         api/v1/services.json
    /api/v1/services?category=C&status=S     api/v1/services/_filter/{C|_all}/{S|_all}.json
    /api/v1/services/{slug}                  api/v1/services/{slug}.json
    /api/v1/services/{slug}/history?range=R  api/v1/services/{slug}/history/{R|24h}.json
    /api/v1/incidents?active=A               api/v1/incidents.json, api/v1/incidents/_active/{0|1}.json
    /api/v1/incidents?service=S&active=A     api/v1/incidents/_service/{S}/{_all|0|1}.json
    /api/v1/health                           api/v1/health.json
    /api/v1/reports                          api/v1/reports.json
    /api/v1/reports/{YYYY-MM}                api/v1/reports/{YYYY-MM}.json
    /feed/incidents.xml                      feed/incidents.xml
    /feed/services/{slug}.xml                feed/services/{slug}.xml
    /incidents/{slug}-{start}.html           301 to /services/{slug}/incidents/#inc-{slug}-{start}
                                             (an incident's own page in earlier versions: ``OLD_INCIDENT``)
    error bodies                             _errors/{400-category,400-status,400-range,400-active,
                                                      404,404-service,405,429}.json
    error pages (for people)                 _errors/{404,429}.html

The interface (``is_interface``) is the JSON under /api/ and the feeds under
/feed/: its errors are the JSON bodies, and it has the rate limit of the
interface. Every other path is a page for people: its 404 and 429 are HTML
pages in the site's layout, and it has a limit of its own
(``policy.PAGES_PER_MINUTE``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from statusgen.model import DEFAULT_RANGE, RANGES, SLUG, SLUG_RE

API = "api/v1"
ALL = "_all"
VALUE_RE = re.compile(r"^[a-z0-9_-]{1,63}$")
ACTIVE_VALUES = ("0", "1")
ERROR_DIR = "_errors"
#: The maintenance calendars (iCalendar, ``render.formats.calendar``): the site's, and one per service.
CALENDAR = "feed/maintenance.ics"


def service_calendar_file(slug: str) -> str:
    return f"feed/services/{slug}.ics"


#: The page of every way to follow the site: email (``mailto``), the feeds, the calendars, chats.
SUBSCRIBE_PAGE = "/subscribe/"


def subscribe_page_file() -> str:
    return "subscribe/index.html"


def embed_file(slug: str | None = None) -> str:
    """The embeddable status (``/embed/``): the site's, or one service's."""
    return "embed/index.html" if slug is None else f"embed/{slug}/index.html"


def embed_pattern(languages: Sequence[str]) -> str:
    """The files of the embeddable status in every language of the site (``embed/index.html``,
    ``de/embed/{slug}/index.html``): the only pages other sites may frame. A regular expression
    that Python and nginx read alike."""
    folders = "|".join(re.escape(tag.lower()) for tag in languages[1:])
    return (rf"(?:(?:{folders})/)?" if folders else "") + rf"embed/(?:{SLUG}/)?index\.html"


def is_embed(rel: str, languages: Sequence[str]) -> bool:
    """Whether a file of the tree is the embeddable status, in one of the site's languages."""
    return re.fullmatch(embed_pattern(languages), rel) is not None


def badge_file(slug: str, kind: str) -> str:
    """A service's badge (``render.formats.badges``): ``json``, the shields.io endpoint, or ``svg``."""
    return f"badges/{slug}.{kind}"


#: The site in Prometheus' text exposition format (``render.formats.metrics``).
METRICS = "metrics"
#: Atlassian Statuspage's public v2 API, at its own paths: static files (``render.formats.statuspage``),
#: served as they are, with the interface's rules.
STATUSPAGE = "api/v2"
STATUSPAGE_FILES = {
    "summary": f"{STATUSPAGE}/summary.json",
    "status": f"{STATUSPAGE}/status.json",
    "components": f"{STATUSPAGE}/components.json",
    "incidents": f"{STATUSPAGE}/incidents.json",
    "unresolved": f"{STATUSPAGE}/incidents/unresolved.json",
    "maintenances": f"{STATUSPAGE}/scheduled-maintenances.json",
    "upcoming": f"{STATUSPAGE}/scheduled-maintenances/upcoming.json",
    "active": f"{STATUSPAGE}/scheduled-maintenances/active.json",
}
#: An incident's own page in earlier versions (its id is its service's slug and its start); its
#: links live on in feed readers and chats, so they are sent on to where the incident is told now.
INCIDENT_START = r"[0-9]{8}t[0-9]{6}"  # the start of an incident in its id (``incidents.incident_id``)
OLD_INCIDENT = re.compile(rf"^/incidents/(?P<slug>{SLUG})-(?P<at>{INCIDENT_START})\.html$")
ALLOW = "GET, HEAD"


#: The monthly reports (``render.reports``): a month is ``YYYY-MM``, in UTC.
MONTH = r"[0-9]{4}-(0[1-9]|1[0-2])"
MONTH_RE = re.compile(MONTH)
REPORTS = f"{API}/reports.json"


def report_file(month: str) -> str:
    return f"{API}/reports/{month}.json"


def report_csv_file(month: str) -> str:
    return f"reports/{month}.csv"


def report_page_file(month: str | None = None) -> str:
    """The page of a month's report, or the page listing them."""
    return "reports/index.html" if month is None else f"reports/{month}/index.html"


def report_url(month: str) -> str:
    return f"/{API}/reports/{month}"


def report_page_url(month: str | None = None) -> str:
    return "/reports/" if month is None else f"/reports/{month}/"


def services_file(category: str | None = None, status: str | None = None) -> str:
    if category is None and status is None:
        return f"{API}/services.json"
    return f"{API}/services/_filter/{category or ALL}/{status or ALL}.json"


def service_file(slug: str) -> str:
    return f"{API}/services/{slug}.json"


def history_file(slug: str, range_name: str) -> str:
    return f"{API}/services/{slug}/history/{range_name}.json"


def incidents_file(active: str | None = None, service: str | None = None) -> str:
    """The incidents list: all, or open (``active`` "1") or closed ("0") only; of one service or all."""
    if service is not None:
        return f"{API}/incidents/_service/{service}/{active or ALL}.json"
    return f"{API}/incidents.json" if active is None else f"{API}/incidents/_active/{active}.json"


def service_incidents_list_url(slug: str) -> str:
    return f"/{API}/incidents?service={slug}"


def service_feed_file(slug: str) -> str:
    return f"feed/services/{slug}.xml"


def error_file(name: str) -> str:
    return f"{ERROR_DIR}/{name}.json"


def error_page_file(name: str) -> str:
    """An error told to people: an HTML page of the site (``404``, ``429``)."""
    return f"{ERROR_DIR}/{name}.html"


def _segments(path: str) -> list[str] | None:
    """A percent-decoded path's segments as nginx reads them: runs of slashes are one, dot
    segments are resolved; None when it climbs above the root."""
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return parts


def is_interface(path: str) -> bool:
    """Whether a request path (percent-decoded, and not ``is_refused``) is the interface (/api/
    and /feed/) rather than a page; the API's page itself, /api/, is a page. The path is read as
    nginx reads it: runs of slashes are one, dot segments are resolved."""
    parts = _segments(path)
    if not parts or parts[0] not in ("api", "feed"):
        return False
    return len(parts) > 1 or (parts[0] == "feed" and path.endswith(("/", "/.")))


#: What nginx refuses in a request's target before it reads the path: a control character or a
#: space anywhere in it, and in the path a percent sign that begins no escape, or an escaped NUL.
_REFUSED_CHARACTER = re.compile(r"[\x00-\x20\x7f]")
_REFUSED_ESCAPE = re.compile(r"%(?![0-9A-Fa-f]{2})|%00")


def is_refused(target: str) -> bool:
    """Whether nginx refuses a request target (as sent, percent-encoded) before reading its path,
    and so before choosing a location: a control character in it, a bad escape or an escaped NUL
    in its path, or a path that is none (``*``) or climbs above the root."""
    path = urlsplit(target).path
    if _REFUSED_CHARACTER.search(target) or _REFUSED_ESCAPE.search(path) or not path.startswith("/"):
        return True
    return _segments(unquote(path)) is None


#: A request line (``GET /api/v1/x%00 HTTP/1.1``) whose target names a place in the interface,
#: /api/ (but the API's page) or /feed/, as it was sent: runs of slashes count as one, and a target
#: in absolute form (``http://host/api/...``) by its path. A request refused before its path is
#: read (``is_refused``, a request line or headers too long) is in no location: both servers choose
#: its error body by this (nginx matches it against ``$request``), JSON for the interface.
INTERFACE_REQUEST = r"^[^ ]+ +(?:[A-Za-z][A-Za-z0-9+.-]*://[^/ ]*)?/+(?:api/+[^/? ]|feed/)"


def is_interface_request(line: str) -> bool:
    return re.match(INTERFACE_REQUEST, line) is not None


# -- URLs, as the site links them ----------------------------------------------


def service_url(slug: str) -> str:
    return f"/{API}/services/{slug}"


def history_url(slug: str, range_name: str = DEFAULT_RANGE) -> str:
    return f"/{API}/services/{slug}/history?range={range_name}"


def service_page_url(slug: str) -> str:
    return f"/services/{slug}/"


def service_incidents_file(slug: str) -> str:
    """A service's incidents page: each of its incidents told in full. One page a service, not
    one an incident: a site keeps every incident it ever recorded, and the files of a full build
    then grow with the services, not with the site's age."""
    return f"services/{slug}/incidents/index.html"


def incidents_page_file(period: str) -> str:
    """The incidents page of a month (``2026-11``) or a day (``2026-11-22``)."""
    return f"incidents/{period}/index.html"


def incidents_page_url(period: str) -> str:
    return f"/incidents/{period}/"


def service_incidents_url(slug: str) -> str:
    return f"/services/{slug}/incidents/"


def incident_anchor(incident_id: str) -> str:
    """The id of an incident's part of its service's incidents page (and of the incidents page)."""
    return f"inc-{incident_id}"


def incident_page_url(slug: str, incident_id: str) -> str:
    """Where an incident is told: its part of its service's incidents page."""
    return f"{service_incidents_url(slug)}#{incident_anchor(incident_id)}"


def service_feed_url(slug: str) -> str:
    return f"/feed/services/{slug}.xml"


# -- resolving a request -------------------------------------------------------


@dataclass(frozen=True)
class Resolved:
    """A request's answer: a file of the tree with its status, or an error file."""

    status: int
    file: str


def _first(query: Mapping[str, Sequence[str]], name: str) -> str | None:
    values = query.get(name) or []
    return values[0] if values and values[0] != "" else None


def _valid(value: str | None, exists: Callable[[str], bool], probe: Callable[[str], str]) -> bool:
    return value is None or (bool(VALUE_RE.fullmatch(value)) and exists(probe(value)))


def _services(query: Mapping[str, Sequence[str]], exists: Callable[[str], bool]) -> Resolved:
    category, status = _first(query, "category"), _first(query, "status")
    if not _valid(category, exists, lambda c: services_file(c, None)):
        return Resolved(400, error_file("400-category"))
    if not _valid(status, exists, lambda s: services_file(None, s)):
        return Resolved(400, error_file("400-status"))
    return Resolved(200, services_file(category, status))


def _history(slug: str, query: Mapping[str, Sequence[str]], exists: Callable[[str], bool]) -> Resolved:
    if not SLUG_RE.fullmatch(slug) or not exists(service_file(slug)):
        return Resolved(404, error_file("404-service"))
    rng = _first(query, "range") or DEFAULT_RANGE
    if rng not in RANGES:
        return Resolved(400, error_file("400-range"))
    return Resolved(200, history_file(slug, rng))


def _incidents(query: Mapping[str, Sequence[str]], exists: Callable[[str], bool]) -> Resolved:
    active, service = _first(query, "active"), _first(query, "service")
    if active is not None and active not in ACTIVE_VALUES:
        return Resolved(400, error_file("400-active"))
    if service is not None and not (SLUG_RE.fullmatch(service) and exists(incidents_file(None, service))):
        return Resolved(404, error_file("404-service"))
    return Resolved(200, incidents_file(active, service))


def _service(slug: str, exists: Callable[[str], bool]) -> Resolved:
    if SLUG_RE.fullmatch(slug) and exists(service_file(slug)):
        return Resolved(200, service_file(slug))
    return Resolved(404, error_file("404-service"))


def _old_incident(slug: str, at: str, exists: Callable[[str], bool]) -> Resolved:
    if exists(service_incidents_file(slug)):
        return Resolved(301, incident_page_url(slug, f"{slug}-{at}").lstrip("/"))
    return Resolved(404, error_page_file("404"))


def _service_feed(slug: str, exists: Callable[[str], bool]) -> Resolved:
    """A service's feed; a slug that names no service is the API's unknown_service."""
    if SLUG_RE.fullmatch(slug) and exists(service_feed_file(slug)):
        return Resolved(200, service_feed_file(slug))
    return Resolved(404, error_file("404-service"))


def _report(month: str, exists: Callable[[str], bool]) -> Resolved:
    """A month's report: a month of the pattern that the build wrote (the months kept)."""
    if MONTH_RE.fullmatch(month) and exists(report_file(month)):
        return Resolved(200, report_file(month))
    return Resolved(404, error_file("404"))


def _static(path: str, exists: Callable[[str], bool]) -> Resolved:
    rel = path.lstrip("/")
    if rel == "" or rel.endswith("/"):
        rel += "index.html"
    parts = rel.split("/")
    not_found = Resolved(404, error_file("404") if is_interface(path) else error_page_file("404"))
    if any(p.startswith(".") or p == "" for p in parts) or posixpath.normpath(rel) != rel:
        return not_found
    if exists(rel):
        return Resolved(200, rel)
    if exists(rel + "/index.html"):
        return Resolved(301, rel + "/")
    return not_found


def resolve(path: str, query: Mapping[str, Sequence[str]], exists: Callable[[str], bool]) -> Resolved:
    """Map a request path and its parsed query onto a file of the tree.

    ``exists(rel)`` tells whether a file of the tree exists; it is only asked
    about names built here from validated parts.
    """
    parts = path.strip("/").split("/")
    if parts[:2] == ["api", "v1"] and len(parts) >= 3:
        name, rest = parts[2], parts[3:]
        if name in ("snapshot", "health", "reports") and not rest:
            return Resolved(200, f"{API}/{name}.json")
        if name == "reports" and len(rest) == 1:
            return _report(rest[0], exists)
        if name == "services" and not rest:
            return _services(query, exists)
        if name == "services" and len(rest) == 1:
            return _service(rest[0], exists)
        if name == "services" and len(rest) == 2 and rest[1] == "history":
            return _history(rest[0], query, exists)
        if name == "incidents" and not rest:
            return _incidents(query, exists)
    if parts[:2] == ["feed", "services"] and len(parts) == 3 and parts[2].endswith(".xml"):
        return _service_feed(parts[2].removesuffix(".xml"), exists)
    old = OLD_INCIDENT.fullmatch(path)
    if old:
        return _old_incident(old["slug"], old["at"], exists)
    return _static(path, exists)


#: A language tag as the tree's pages name their folders by (``de``, ``pt-BR``), and its folder.
LANGUAGE_RE = re.compile(r"[a-z]{2,3}(-[A-Z]{2})?")
LANGUAGE_FOLDER = "[a-z]{2,3}(-[a-z]{2})?"


def language_of(rel: str, languages: Sequence[str]) -> str:
    """The language a file of the tree speaks (its Content-Language): a page in a language's
    folder (``de/incidents/index.html``) that language; anything else (the first language's pages,
    the JSON, the feeds) the site's first."""
    head = rel.lstrip("/").split("/", 1)[0]
    return next((tag for tag in languages[1:] if head == tag.lower()), languages[0])


def error_page_in(rel: str, path: str, languages: Sequence[str]) -> str:
    """An error page for people (``_errors/404.html``) in the language of the page asked for
    (``path``): one under a language's folder gets that language's copy of it."""
    tag = language_of(path, languages)
    if tag == languages[0] or not (rel.startswith(f"{ERROR_DIR}/") and rel.endswith(".html")):
        return rel
    return f"{tag.lower()}/{rel}"

"""Every file's key, in one place: a digest of a declared tuple of the file's inputs.

A build keeps a served file when its key is the one it was written with, so an input left out
of a key is a file silently left stale. Each kind of file therefore declares its inputs as the
fields of a ``NamedTuple`` (``RECIPES``), every field must be given where the key is made, and
``key`` digests them all, with the recipe's name. A property test changes each field of each
recipe in turn and checks that the key changes.

    code      the package's modules and templates                 -> every file's (through site)
    site      code, the site's settings, categories, brand files   -> every other recipe's first input
    badge     a service's name and status                          -> its two badges
    incidents every incident record, names, the days, maintenance  -> the site-wide lists, feed, pages
    service incidents  one service's records, its name, maintenance -> its lists, feed and page
    record    a service's configuration, state, measurements...   -> its record (services/{slug}.json)
    history   a range's window, the store's tallies in it, spans   -> its history and chart fragments
    page      the page's view and its histories' keys              -> the service page
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files
from typing import Any, NamedTuple

from statusgen import __version__, jsonout
from statusgen.render.templating import templates_digest_parts
from statusgen.render.tree import digest


class SiteInputs(NamedTuple):
    """What every file is made with: the code and templates, the site's settings, its categories,
    and the operator's brand files copied into the tree (a page shows the logo's size, and a
    changed file is news to every page that names it)."""

    code: str
    settings: str  # the SiteConfig's repr: every setting, in declared order
    categories: dict[str, str]
    brand: dict[str, str]  # each brand file's path in the tree -> the digest of its bytes


class BadgeInputs(NamedTuple):
    site: str
    name: str
    status: str


class IncidentsInputs(NamedTuple):
    """The site-wide incident lists, feed and pages."""

    site: str
    records: list[str]  # every incident's record as stored
    names: dict[str, str]  # service slug -> name
    epoch: str  # the site's first run: the feed's id
    today: str  # the incidents pages list the last days
    maintenance: list[Any]  # the feed's maintenance entries


class ServiceIncidentsInputs(NamedTuple):
    """One service's incident lists, feed and incidents page."""

    site: str
    records: list[str]
    name: str
    epoch: str
    maintenance: list[Any]


class RecordInputs(NamedTuple):
    """A service's record: its configuration, state, measurements (their version moves with every
    write of its results or buckets), the results of its last day (with the same version, their
    count tells the same day: results leave it only from its old end), its vendor record and
    incidents, and the maintenance it is told of (which moves as a window begins or ends)."""

    site: str
    config: str  # the ServiceConfig's repr
    state: dict[str, Any]
    version: int
    last_day_count: int
    as_of: str | None
    vendor: dict[str, Any] | None
    incidents: list[str]
    maintenance: list[dict[str, Any]]
    month: dict[str, Any]  # its figures of the current month (``reports.current_month``)
    elsewhere: dict[str, list[Any]]  # each other location's fresh results ([[locations]] only)


class HistoryInputs(NamedTuple):
    """A history: its window, how many buckets and results the store holds in it (every result
    stored adds one to its bucket, so a late result changes it), and the service's incident spans
    (their minutes are in the points)."""

    site: str
    slug: str
    range: str
    window: tuple[int, int]
    tally: tuple[int, int]
    spans: list[tuple[int, int | None]]
    locations: list[Any] = []  # the 24h history's per-location figures ([[locations]] only)


class PageInputs(NamedTuple):
    """A service page: what it shows (its view) and the keys of the histories it draws."""

    site: str
    view: dict[str, Any]
    histories: dict[str, str]  # range -> its history's key


class ReportInputs(NamedTuple):
    """A month's report, its CSV and its pages: its document (a finished month's never changes)."""

    site: str
    report: dict[str, Any]


RECIPES: tuple[type[NamedTuple], ...] = (
    SiteInputs,
    BadgeInputs,
    IncidentsInputs,
    ServiceIncidentsInputs,
    RecordInputs,
    HistoryInputs,
    PageInputs,
    ReportInputs,
)


def key(inputs: NamedTuple) -> str:
    """The key of a file made from ``inputs``: every field, and the recipe's name."""
    return digest(jsonout.dump([type(inputs).__name__, *inputs]))


@cache
def code_key() -> str:
    """The code and templates every file is made with: a key changes when any of them does."""
    parts = [__version__.encode()]
    stack = [files("statusgen")]
    while stack:
        for p in sorted(stack.pop().iterdir(), key=lambda p: p.name):
            if p.is_dir():
                stack.append(p)
            elif p.name.endswith((".py", ".mo")):  # the code, and the compiled catalogs
                parts += [p.name.encode(), p.read_bytes()]
    return digest(b"\0".join(parts + templates_digest_parts()))

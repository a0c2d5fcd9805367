"""Render: the charts of the web pages: the front page's 90-day bars, the SVG charts
and the day-by-day table of a service page.

Every value drawn or written here is read from a history document of the
build (``api/v1/services/{slug}/history/{range}.json``); nothing is
recomputed. Only the drawing scale (positions, the round top of the latency
axis) is derived. The charts read a history's values as columns
(``history.Series``: made with the document, and kept with its closed
points between builds), so a page does not parse its points back from JSON;
a test checks that the columns are the points' values.

A build draws a bar per service and eight charts per service page, so they
are made small and fast:

- a series is one SVG ``<path>`` (p50, p95, and one per availability band),
  never an element per bucket; a bar is one cell per run of days in the same
  band, coloured by its class;
- coordinates are snapped to a tenth of a unit, and those texts are made once
  (``_TENTHS``, ``_columns``);
- what is drawn of a history's closed buckets is carried between builds with
  the closed points (at the end): the rows of the 90-day table and the front
  page bar's cells, and in every range the latency lines and availability
  rectangles through them, whole, while the range and the axis top stay where
  they were. A cycle draws little more than the bucket in progress (a cycle's
  90,000 day rows took 0.2 s; the eight charts of 1,000 pages 0.6 s);
- the numbers of each bucket are not written into the page: the site's script
  (``templates/static/site.js``) reads them from the same history JSON
  (``data-src``) on hover and keyboard focus. Without script, the words under
  each bar and the day-by-day table of the service page tell them.

Escaping: charts are f-strings of coordinates computed from numbers (a float
cannot carry markup) and of constants of this module; the few words (dates,
labels, URLs) pass through ``html.escape``. Each result becomes ``Markup``
once, whole.
"""

from __future__ import annotations

import functools
import hashlib
import html
import itertools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from markupsafe import Markup

from statusgen import routes
from statusgen.decide.history import Series, points_of, series_of
from statusgen.timeutil import parse_iso, to_epoch

Point = dict[str, Any]   # one point of a history document

RANGE_LABELS = {"24h": "24 hours", "7d": "7 days", "30d": "30 days", "90d": "90 days"}
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

#: Availability bands of the bars and charts: (css class, words for the legend).
LEGEND: tuple[tuple[str, str], ...] = (
    ("a-full", "100%"),
    ("a-high", "99% to 99.999%"),
    ("a-mid", "95% to 98.999%"),
    ("a-low", "under 95%"),
    ("a-maint", "maintenance only"),
    ("a-none", "no data"),
)


# -- words for numbers and times -----------------------------------------------

def number(value: float | None) -> str:
    """A number as the JSON gives it, without a trailing ``.0``; an em dash for null."""
    if value is None:
        return "\u2014"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def figure(value: float | None) -> str:
    """``number`` for a value written into markup unescaped: it must be a number (or null)."""
    if value is not None and not isinstance(value, int | float):
        raise TypeError(f"a number was expected, got {value!r}")
    return number(value)


def day_text(stamp: str, with_year: bool = True) -> str:
    """``2026-11-22T00:00:00Z`` as ``22 Nov 2026`` (or ``22 Nov``)."""
    moment = parse_iso(stamp)
    assert moment is not None
    return f"{moment.day} {moment:%b %Y}" if with_year else f"{moment.day} {moment:%b}"


_STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")   # RFC 3339 in UTC to the second, as the JSON writes times


def moment_text(stamp: str | None) -> str:
    """``2026-11-22T20:21:31Z`` as ``2026-11-22 20:21 UTC``."""
    if stamp and _STAMP.fullmatch(stamp):   # the common case, quickly: pages show thousands of times
        return f"{stamp[:10]} {stamp[11:16]} UTC"
    moment = parse_iso(stamp)
    return "" if moment is None else f"{moment:%Y-%m-%d %H:%M} UTC"


def bucket_text(stamp: str, resolution_s: int) -> str:
    """A bucket's start, as precise as its resolution needs."""
    moment = parse_iso(stamp)
    assert moment is not None
    return day_text(stamp) if resolution_s >= 86400 else f"{moment.day} {moment:%b %H:%M} UTC"


@functools.lru_cache(maxsize=1024)
def _day_cell(stamp: str) -> str:
    """``2026-11-22T00:00:00Z`` as ``22 Nov 2026``, quickly; only digits and a month name (safe unescaped)."""
    return f"{int(stamp[8:10])} {MONTHS[int(stamp[5:7]) - 1]} {int(stamp[:4])}"


# -- availability bands ------------------------------------------------------------

def availability_class(availability: float | None, maintenance: int = 0) -> str:
    """The css class of a bucket's availability band."""
    if availability is None:
        return "a-maint" if maintenance else "a-none"
    if availability >= 100:
        return "a-full"
    if availability >= 99:
        return "a-high"
    return "a-mid" if availability >= 95 else "a-low"


def _band(point: Point) -> str:
    return availability_class(point["availability"], point.get("maintenance") or 0)


# -- the 90-day bar of the front page ----------------------------------------------

#: The bar's cells name their band with one letter (``.bar .f`` is ``a-full``...): 3,000 cells on a front page.
BAR_CLASSES = {"a-full": "f", "a-high": "h", "a-mid": "m", "a-low": "l", "a-maint": "x", "a-none": "n"}


@dataclass(frozen=True)
class DayRun:
    """Consecutive days in the same availability band: one cell of the bar, ``days`` wide."""

    days: int
    css: str    # the band's class (``a-full``)


def day_runs(points: Sequence[Point]) -> list[DayRun]:
    """The bar's runs, oldest first, covering every point of the 90-day history."""
    return _runs(map(_band, points))


def series_runs(series: Series) -> list[DayRun]:
    """``day_runs`` of a history's chart columns (its availability and maintenance), without
    reading its points back."""
    return _runs(map(availability_class, series.availability, series.maintenance))


def _runs(bands: Iterable[str]) -> list[DayRun]:
    return [DayRun(len(list(group)), css) for css, group in itertools.groupby(bands)]


def history_cells(history: dict[str, Any]) -> Markup:
    """``bar_cells`` of a history's runs (``series_runs``). The cells of its closed days' runs but
    the last (which the day in progress may lengthen) are carried with its closed points while
    the range stays where it was."""
    series, drawn = series_of(history), _drawn(history)
    if drawn is None or not len(series):
        return bar_cells(series_runs(series))
    cells, days, css = _whole(drawn, "bar", series.first, lambda: _closed_cells(series))
    now = availability_class(series.availability[-1], series.maintenance[-1])
    if css == now:          # the day in progress lengthens the last closed run
        tail = [DayRun(days + 1, css)]
    else:
        tail = ([DayRun(days, css)] if days else []) + [DayRun(1, now)]
    return Markup(cells + str(bar_cells(tail)))


def _closed_cells(series: Series) -> list[Any]:
    """The cells of the closed days' runs but the last, and that run's length and class."""
    runs = _runs(map(availability_class, series.availability[:-1], series.maintenance[:-1]))
    last = runs.pop() if runs else DayRun(0, "")
    return [str(bar_cells(runs)), last.days, last.css]


def bar_cells(runs: Sequence[DayRun]) -> Markup:
    """The cells of a bar, one per run (``day_runs``): ``<i class=f style=--n:12></i>``, terse
    (200 services stay under 150 KB).

    A run is ``--n`` days wide and drawn as ``--n`` day cells; the script tells a day on hover or focus.
    """
    return Markup("".join(f"<i class={BAR_CLASSES[r.css]} style=--n:{r.days}></i>" if r.days > 1
                          else f"<i class={BAR_CLASSES[r.css]}></i>" for r in runs))


# -- SVG ---------------------------------------------------------------------------

W, H = 480, 170                      # viewBox
LEFT, RIGHT, TOP, BOTTOM = 62, 8, 10, 26
PLOT_W, PLOT_H = W - LEFT - RIGHT, H - TOP - BOTTOM
BASE = TOP + PLOT_H                  # the y of zero
PLOT = f"{LEFT} {TOP} {PLOT_W} {PLOT_H}"   # the plot area, for the script: x y width height
LOW = 1.5                            # the least height of a bar (0% is still seen)

#: Every coordinate from 0 to W in tenths of a unit, as text (``14.4``, ``62``): made once, looked up.
_TENTHS = tuple(f"{i / 10:.1f}".removesuffix(".0") for i in range(10 * W + 1))


def _c(value: float) -> str:
    """A coordinate, to a tenth of a unit."""
    return _TENTHS[round(value * 10)]


@dataclass(frozen=True)
class Columns:
    """Where the buckets of a range of ``count`` buckets sit: texts made once per count."""

    step: float                # the width of a bucket
    centres: tuple[str, ...]   # "x," of each bucket's centre: a point of a line, before its y
    line: str                  # "Mx,%s x,%s ...": a line through every bucket, its y to fill in
    closed: str                # the same through every bucket but the last (the one in progress)


@functools.cache
def _columns(count: int) -> Columns:
    step = PLOT_W / count
    centres = tuple(f"{_c(LEFT + (i + 0.5) * step)}," for i in range(count))
    return Columns(step, centres, "M" + " ".join(x + "%s" for x in centres),
                   "M" + " ".join(x + "%s" for x in centres[:-1]))


def nice_top(value: float) -> float:
    """The round number (1, 2 or 5 times a power of ten) at or above ``value``: the axis top."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= value)


def _axes(top: float, unit: str, history: dict[str, Any], series: Series) -> str:
    """The grid (0, half, top), its labels, and the dates of the first and last buckets."""
    return _axes_of(top, unit, series.first, series.last, history["resolution_s"])


@functools.lru_cache(maxsize=1024)
def _axes_of(top: float, unit: str, first: str, last: str, res: int) -> str:
    """``_axes``, remembered: the services of a build share their ranges' dates and most of their axis tops."""
    grid = "".join(f"M{LEFT},{_c(BASE - f * PLOT_H)}H{W - RIGHT}" for f in (0, 0.5, 1))
    labels = "".join(f'<text class="end" x="{LEFT - 4}" y="{_c(BASE - f * PLOT_H + 3.5)}">{figure(v)}{unit}</text>'
                     for f, v in ((0, 0.0), (0.5, top / 2), (1, top)))
    first, last = (html.escape(bucket_text(stamp, res), quote=False) for stamp in (first, last))
    return (f'<path class="grid" d="{grid}"></path>{labels}<text x="{LEFT}" y="{H - 6}">{first}</text>'
            f'<text class="end" x="{W - RIGHT}" y="{H - 6}">{last}</text>')


def _svg(history: dict[str, Any], tell: str, label: str, body: str) -> Markup:
    """The chart, whole. ``data-src`` and ``data-plot`` let the script tell each bucket's numbers."""
    src = html.escape(routes.history_url(history["service"], history["range"]))
    return Markup(f'<svg class="chart" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" role="img" '
                  f'aria-label="{html.escape(label)}" data-src="{src}" data-tell="{tell}" data-plot="{PLOT}">'
                  f"{body}</svg>")


def _no_data(values: Sequence[float | None], words: str) -> str:
    """Say so in the plot when no bucket of the range has a value."""
    if any(v is not None for v in values):
        return ""
    return f'<text class="mid" x="{_c(LEFT + PLOT_W / 2)}" y="{_c(TOP + PLOT_H / 2)}">{words}</text>'


# -- latency -------------------------------------------------------------------------

def _ys(values: Iterable[float], top: float) -> tuple[str, ...]:
    """The y texts of latency values under an axis top; a null raises TypeError."""
    # A y in tenths is base - v * scale, truncated: + 0.5 makes it round. float.__trunc__ is int() made
    # quicker (the bound method skips the int constructor): a build draws some two million points.
    scale, base = PLOT_H * 10 / top, BASE * 10 + 0.5
    return tuple([_TENTHS[(base - v * scale).__trunc__()] for v in values])


def _line(values: Sequence[float | None], top: float, css: str, dot: str) -> str:
    """One series: a subpath per run of measured buckets; a lone measured bucket is a dot."""
    cols = _columns(len(values))
    try:   # the common case, made quick: every bucket measured (a null raises TypeError)
        return f'<path class="{css}" d="{cols.line % _ys(values, top)}"></path>'   # type: ignore[arg-type]
    except TypeError:
        pass
    runs: list[str] = []
    dots: list[str] = []
    for known, group in itertools.groupby(enumerate(values), key=lambda iv: iv[1] is not None):
        if not known:
            continue
        measured = list(group)
        run = [cols.centres[i] + y for (i, _), y in zip(measured, _ys([v for _, v in measured], top))]  # type: ignore[misc]
        if len(run) > 1:
            runs.append("M" + " ".join(run))
        else:
            x, y = run[0].split(",")
            dots.append(f'<circle class="{dot}" cx="{x}" cy="{y}" r="2.5"></circle>')
    path = f'<path class="{css}" d="{"".join(runs)}"></path>' if runs else ""
    return path + "".join(dots)


def _lines(history: dict[str, Any], series: Series, top: float) -> str:
    """The p95 and p50 lines (``_line``). While the range and the axis top stay where they were,
    the lines through the closed buckets are carried with them (when every one of those was
    measured, as is usual) and only the bucket in progress is added: the same text."""
    drawn = _drawn(history)
    if drawn is None or len(series) < 3:
        return _line(series.p95, top, "p95", "dot95") + _line(series.p50, top, "p50", "dot50")
    p95, p50 = _whole(drawn, "lines", [series.first, top],
                      lambda: [_closed_line(v, top) for v in (series.p95, series.p50)])
    return (_line(series.p95, top, "p95", "dot95") if p95 is None else _ended(p95, series.p95, top, "p95")) + \
        (_line(series.p50, top, "p50", "dot50") if p50 is None else _ended(p50, series.p50, top, "p50"))


def _closed_line(values: Sequence[float | None], top: float) -> str | None:
    """The path of ``_line`` through every bucket but the last, when each of those has a value."""
    try:
        return _columns(len(values)).closed % _ys(values[:-1], top)   # type: ignore[arg-type]
    except TypeError:        # a closed bucket without a value: drawn whole each time
        return None


def _ended(closed: str, values: Sequence[float | None], top: float, css: str) -> str:
    """``_line`` of ``values`` from the path through their closed buckets (``_closed_line``): it
    goes on to the bucket in progress when that has a value."""
    now = values[-1]
    if now is not None:
        closed += f" {_columns(len(values)).centres[-1]}{_ys([now], top)[0]}"
    return f'<path class="{css}" d="{closed}"></path>'


def latency_chart(history: dict[str, Any], series: Series | None = None) -> Markup:
    """p50 (solid) and p95 (dashed) latency of every bucket of a history document (``series``:
    its chart columns, when at hand)."""
    series = series_of(history) if series is None else series
    p50, p95 = series.p50, series.p95
    try:   # quickly when every bucket was measured (max of a null raises TypeError)
        top = nice_top(max(max(p50, default=0.0), max(p95, default=0.0)))   # type: ignore[type-var]
    except TypeError:
        top = nice_top(max((v for v in p50 + p95 if v is not None), default=0.0))
    body = (_axes(top, " ms", history, series) + _lines(history, series, top)
            + _no_data(p50, "No latency measured in this range"))
    s = history["summary"]
    label = (f"Latency, last {RANGE_LABELS[history['range']]}: p50 {number(s['latency_p50_ms'])} ms, "
             f"p95 {number(s['latency_p95_ms'])} ms")
    return _svg(history, "latency", label, body)


# -- availability ---------------------------------------------------------------------

def _strip(maintenance: int) -> str:
    """The band of a bucket without counted checks."""
    return availability_class(None, maintenance)


def _rects(series: Series, start: int = 0, stop: int | None = None) -> Iterator[tuple[str, str]]:
    """Each rectangle of the buckets from ``start`` to ``stop``, with its band, in order. Consecutive buckets
    of the same availability are one rectangle, as tall as their availability (at least ``LOW``);
    a low strip lies under buckets without counted checks."""
    step, scale, highest = PLOT_W / len(series), PLOT_H * 10 / 100, round((BASE - LOW) * 10)
    i = start
    for avail, group in itertools.groupby(series.availability[start:stop]):
        n = len(list(group))
        if avail is None:   # a strip per band: maintenance only, or nothing at all
            first = i
            for css, run in itertools.groupby(series.maintenance[i:i + n], key=_strip):
                end = first + len(list(run))
                yield css, f"M{_c(LEFT + first * step)},{BASE}v-3H{_c(LEFT + end * step)}v3z"
                first = end
        else:
            y = _TENTHS[min(round(BASE * 10 - avail * scale), highest)]
            yield availability_class(avail), f"M{_c(LEFT + i * step)},{BASE}V{y}H{_c(LEFT + (i + n) * step)}V{BASE}z"
        i += n


def _by_band(rects: Iterable[tuple[str, str]], before: dict[str, str] | None = None) -> dict[str, str]:
    """The rectangles' paths joined per band, after those of ``before``."""
    bands: dict[str, list[str]] = {css: [d] for css, d in (before or {}).items()}
    for css, d in rects:
        bands.setdefault(css, []).append(d)
    return {css: "".join(d) for css, d in bands.items()}


def _bars(history: dict[str, Any], series: Series) -> str:
    """A path per band (``_rects``). While the range stays where it was, the rectangles of the
    closed buckets' runs but the last (which the bucket in progress may lengthen) are carried
    with them, and only the rest is drawn: the same text."""
    drawn = _drawn(history)
    if drawn is None or len(series) < 2:
        bands = _by_band(_rects(series))
    else:
        k, before = _whole(drawn, "rects", series.first, lambda: _closed_rects(series))
        bands = _by_band(_rects(series, k), before)
    return "".join(f'<path class="{css}" d="{bands[css]}"></path>' for css, _ in LEGEND if css in bands)


def _closed_rects(series: Series) -> list[Any]:
    """Where the last closed bucket's run starts, and the rectangles before it (``_by_band``)."""
    avail, last = series.availability, len(series) - 2
    k = last
    while k > 0 and avail[k - 1] == avail[last]:
        k -= 1
    return [k, _by_band(_rects(series, 0, k))]


def availability_chart(history: dict[str, Any], series: Series | None = None) -> Markup:
    """One bar per bucket, as tall as its availability and coloured by its band (``series``:
    the history's chart columns, when at hand)."""
    series = series_of(history) if series is None else series
    body = (_axes(100.0, "%", history, series) + _bars(history, series)
            + _no_data(series.availability, "No checks counted in this range"))
    s = history["summary"]
    label = (f"Availability, last {RANGE_LABELS[history['range']]}: {number(s['availability'])}%, "
             f"{number(s['incident_minutes'])} min of incidents")
    return _svg(history, "availability", label, body)


# -- the day-by-day table of a service page --------------------------------------------

_DAY_ROW = ('<tr><th scope="row">%s</th><td class="%s">%s</td><td>%s</td><td>%s</td><td>%s</td>'
            '<td>%s</td><td>%s</td></tr>')


@functools.lru_cache(maxsize=8192)
def _cell(value: float | None) -> str:
    """``figure``, remembered: the day table repeats the same numbers (100.0, 0...) on every page."""
    return figure(value)


def _day_row(p: Point) -> str:
    avail = p["availability"]
    if avail is None:
        band, words = ("a-maint", "maintenance only") if p.get("maintenance") else ("a-none", "no data")
    else:
        band, words = availability_class(avail), _cell(avail) + "%"
    return _DAY_ROW % (_day_cell(p["start"]), band, words, _cell(p["incident_minutes"]), _cell(p["checks"]),
                       _cell(p["failed"]), _cell(p["latency_p50_ms"]), _cell(p["latency_p95_ms"]))


def day_rows(points: Sequence[Point]) -> Markup:
    """A table row per day, newest first: availability, incident minutes, checks, failed, p50, p95."""
    return Markup("".join([_day_row(p) for p in reversed(points)]))


def day_table(history: dict[str, Any]) -> Markup:
    """``day_rows`` of a history document; the rows of its closed days carried between builds
    with their points (``_carried``), so that only the day in progress is written anew."""
    drawn = _drawn(history)
    if drawn is None:
        return day_rows(points_of(history))
    closed = len(history.series) - 1   # type: ignore[attr-defined]
    rows = _carried(drawn, "rows", history, closed)
    if len(rows) < closed:
        rows = rows + [_day_row(p) for p in points_of(history)[len(rows):closed]]
        _carry(drawn, "rows", history, rows)
    return Markup(_day_row(orjson.loads(history.open_point)) + "".join(reversed(rows)))   # type: ignore[attr-defined]


# -- what was drawn of closed buckets, carried between builds ---------------------------------
#
# A history made by a build (``history.HistoryDocument``) carries ``drawn``: texts drawn of its
# closed buckets by an earlier build (``history.Closed.drawn``, kept in the store), each entry
# starting with the start of the range's first bucket when it was drawn. The day table's
# (``rows``) holds a text per bucket from it; the others are whole texts good while the range
# stays where it was (the front page bar's ``bar``, the availability chart's ``rects``) and the
# axis top too (the latency chart's ``lines``), through ``_whole``. The
# closed buckets of a history never change while they are carried (a result written into one
# deletes them, and ``drawn`` with them), so a text made once is good until its bucket leaves the
# range; when the range slides, the day table's texts of the buckets that left are dropped, and
# the whole texts are drawn again. Tests draw every chart with and without what was carried and
# compare them.
#
# A text per bucket is carried only for the day table: the latency lines' y texts, carried that
# way, saved less (0.04 s a cycle) than reading thousands of short strings back cost (0.13 s).
# Whole lines are a few strings a history.

@functools.cache
def _drawing_key() -> str:
    """This module's code: texts drawn by other code are not used."""
    return hashlib.blake2b(Path(__file__).read_bytes(), digest_size=12).hexdigest()


def _drawn(history: dict[str, Any]) -> dict[str, Any] | None:
    """What was drawn of a history's closed buckets (emptied if drawn by other code); None for
    a history without (read back from JSON)."""
    drawn: dict[str, Any] | None = getattr(history, "drawn", None)
    if drawn is not None and drawn.get("code") != _drawing_key():
        drawn.clear()
        drawn["code"] = _drawing_key()
    return drawn


def _whole(drawn: dict[str, Any], name: str, key: Any, make: Callable[[], list[Any]]) -> list[Any]:
    """Entry ``name``: what ``make`` drew (a JSON list), carried while ``key`` (the range's first
    bucket, and what else it was drawn with) stays the same; drawn again, as a new entry, when not."""
    entry = drawn.get(name)
    if entry is None or entry[0] != key:
        entry = drawn[name] = [key, make()]
    return entry[1]  # type: ignore[no-any-return]


def _carried(drawn: dict[str, Any], name: str, history: dict[str, Any], closed: int) -> list[Any]:
    """The texts of entry ``name`` for the history's first closed buckets, as many as were drawn."""
    entry = drawn.get(name)
    if entry is None:
        return []
    first, texts = history.series.first, entry[1]   # type: ignore[attr-defined]
    if entry[0] != first:          # the range slid: drop the buckets that left it
        gone = (to_epoch(parse_iso(first)) - to_epoch(parse_iso(entry[0]))) // history["resolution_s"]
        texts = texts[gone:] if gone >= 0 else []
    return texts[:closed]   # type: ignore[no-any-return]


def _carry(drawn: dict[str, Any], name: str, history: dict[str, Any], texts: list[Any]) -> None:
    """Keep ``texts`` (of the history's first closed buckets on) for the next build: a new entry."""
    drawn[name] = [history.series.first, texts]   # type: ignore[attr-defined]

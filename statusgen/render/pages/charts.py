"""The geometry of the charts: where the lines, bars and cells of a history go.

Every value drawn is read from a history of the build (``decide.history.History``:
its document and the columns of its points); only the drawing scale
(positions, the round top of the latency axis) is derived here. The markup
is in ``templates/macros.html`` (``chart``) and ``templates/index.html`` (the
front page's bars); this module gives them coordinates as text.

A series is one SVG ``<path>`` (p50, p95, and one per availability band),
never an element per bucket, and a bar is one cell per run of days in the
same band: a service page holds eight charts, a front page a bar per service.
Coordinates are snapped to a tenth of a unit.

A chart has a slot after its history's buckets, at the plot's right end (``SOFAR_W`` wide,
the same in every range, so that it is seen in each): the bucket in progress, which the history
does not hold (the service's record does, as ``in_progress``). The page leaves it empty, so
that it changes only when a history does; the script draws the bucket so far there, outlined
and marked "so far".

The numbers of each bucket are not written into the page: the site's script
(``templates/static/site.js``) reads them from the same history JSON
(``data-src``) on hover and keyboard focus. Without script, the words under
each bar and the day-by-day table of the service page tell them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from typing import Any, NamedTuple

from statusgen import routes
from statusgen.decide.history import Columns, History
from statusgen.i18n import N_
from statusgen.render.words import LEGEND, RANGE_LABELS, Words, band
from statusgen.timeutil import iso_epoch, parse_time, to_epoch

Point = dict[str, Any]  # one point of a history document

SOFAR_W = 12  # the slot of the bucket in progress after the plot, as wide in every range, to be seen
W, H = 492, 170  # viewBox
LEFT, RIGHT, TOP, BOTTOM = 62, 8, 10, 26
PLOT_W, PLOT_H = W - LEFT - RIGHT - SOFAR_W, H - TOP - BOTTOM  # the closed buckets' plot
BASE = TOP + PLOT_H  # the y of zero
LOW = 1.5  # the least height of a bar (0% is still seen)

#: Every coordinate from 0 to W in tenths of a unit, as text (``14.4``, ``62``).
TENTHS = tuple(f"{i / 10:.1f}".removesuffix(".0") for i in range(10 * W + 1))


def _c(value: float) -> str:
    """A coordinate, to a tenth of a unit."""
    return TENTHS[round(value * 10)]


@dataclass(frozen=True)
class Axes:
    """The grid (0, half, top), its labels, and the times of the first and last closed buckets
    (the last's label ends where the slot of the bucket in progress begins, ``last_x``)."""

    labels: tuple[tuple[str, str], ...]  # (y, text) of each gridline's label
    first: str
    last: str
    last_x: str
    grid: str = "".join(f"M{LEFT},{_c(BASE - f * PLOT_H)}H{W - RIGHT}" for f in (0, 0.5, 1))
    label_x: int = LEFT - 4
    first_x: int = LEFT
    date_y: int = H - 6
    mid_x: str = _c(LEFT + PLOT_W / 2)
    mid_y: str = _c(TOP + PLOT_H / 2)


class Mark(NamedTuple):
    """A path (``d``), or a dot at (``x``, ``y``) for a measured bucket between two gaps."""

    css: str
    d: str = ""
    x: str = ""
    y: str = ""


@dataclass(frozen=True)
class Chart:
    tell: str  # which words the script tells of a bucket: latency or availability
    label: str  # the chart in words, for assistive technology
    src: str  # the history the script reads
    axes: Axes
    marks: tuple[Mark, ...]
    no_data: str | None  # said in the plot when no bucket of the range has a value
    count: int  # closed buckets; the script's slider has one more, the bucket in progress
    range: str  # the range's name: the script reads its bucket in progress from the record
    top: float  # the value at the plot's top, for the script's drawing of the bucket in progress
    view_box: str = f"0 0 {W} {H}"
    plot: str = f"{LEFT} {TOP} {PLOT_W} {PLOT_H}"  # the closed buckets' area, for the script: x y width height
    sofar: str = f"{LEFT + PLOT_W} {SOFAR_W}"  # the slot of the bucket in progress after it: x width


def nice_top(value: float) -> float:
    """The round number (1, 2 or 5 times a power of ten) at or above ``value``: the axis top."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return float(next(step * power for step in (1, 2, 5, 10) if step * power >= value))


def _axes(history: dict[str, Any], top: float, unit: str, w: Words) -> Axes:
    """The axes of a history's chart: gridline labels up to ``top``, and its first and last buckets."""
    res = history["resolution_s"]
    last = iso_epoch(to_epoch(parse_time(history["to"])) - res)
    said = w.percent if unit == "%" else (lambda v: w.gettext(N_("%(ms)s ms")) % {"ms": w.number(v)})
    labels = tuple((_c(BASE - f * PLOT_H + 3.5), said(v)) for f, v in ((0, 0.0), (0.5, top / 2), (1, top)))
    closed_end = _c(LEFT + history["count"] * _step(history["count"]))
    return Axes(labels, w.bucket_time(history["from"], res), w.bucket_time(last, res), closed_end)


def _step(count: int) -> float:
    """The width of a closed bucket in a chart of ``count`` of them."""
    return PLOT_W / count


@cache
def _centres(count: int) -> tuple[str, ...]:
    """The x of each closed bucket's centre in a chart of ``count`` of them (and a slot after
    them for the bucket in progress), followed by a comma."""
    step = _step(count)
    return tuple(_c(LEFT + (i + 0.5) * step) + "," for i in range(count))


def _line(values: Sequence[float | None], top: float, css: str, dot: str) -> Iterator[Mark]:
    """One series: a path with a subpath per run of measured buckets, then a dot for each
    measured bucket alone between gaps. A y is rounded half up to a tenth."""
    base, scale, xs = BASE * 10 + 0.5, PLOT_H * 10 / top, _centres(len(values))
    if None not in values:  # the common case: every bucket measured, one path
        ys = [TENTHS[int(base - v * scale)] for v in values]  # type: ignore[operator]  # no None
        yield Mark(css, d="M" + " ".join(map(str.__add__, xs, ys)))
        return
    runs: list[list[str]] = [[]]
    for x, value in zip(xs, values, strict=True):
        if value is None:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append(x + TENTHS[int(base - value * scale)])
    paths = ["M" + " ".join(run) for run in runs if len(run) > 1]
    if paths:
        yield Mark(css, d="".join(paths))
    for run in runs:
        if len(run) == 1:
            x, y = run[0].split(",")
            yield Mark(dot, x=x, y=y)


def latency(history: History, w: Words) -> Chart:
    """p50 (solid) and p95 (dashed) latency of every bucket of a history."""
    doc, cols, s = history.document, history.columns, history.document["summary"]
    top = nice_top(max((v for v in (*cols.p50, *cols.p95) if v is not None), default=0.0))
    marks = (*_line(cols.p95, top, "p95", "dot95"), *_line(cols.p50, top, "p50", "dot50"))
    label = w.gettext(N_("Latency, last %(range)s: p50 %(p50)s ms, p95 %(p95)s ms")) % {
        "range": w.word(RANGE_LABELS, doc["range"]),
        "p50": w.number(s["latency_p50_ms"]),
        "p95": w.number(s["latency_p95_ms"]),
    }
    no_data = None if any(v is not None for v in cols.p50) else w.gettext(N_("No latency measured in this range"))
    return Chart(
        "latency",
        label,
        routes.history_url(doc["service"], doc["range"]),
        _axes(doc, top, " ms", w),
        marks,
        no_data,
        doc["count"],
        doc["range"],
        top,
    )


def _rects(cols: Columns) -> Iterator[tuple[str, str]]:
    """Each rectangle, with its band, in order. Consecutive buckets of the same availability are
    one rectangle, as tall as their availability (at least ``LOW``); a low strip lies under
    buckets without counted checks, one per band (maintenance only, or nothing at all)."""
    step, scale, highest = _step(len(cols.availability)), PLOT_H * 10 / 100, round((BASE - LOW) * 10)
    i = 0
    for avail, group in itertools.groupby(cols.availability):
        n = len(list(group))
        if avail is None:
            first = i
            for css, strip in itertools.groupby(cols.maintenance[i : i + n], key=lambda m: band(None, m)):
                end = first + len(list(strip))
                yield css, f"M{_c(LEFT + first * step)},{BASE}v-3H{_c(LEFT + end * step)}v3z"
                first = end
        else:
            y = TENTHS[min(round(BASE * 10 - avail * scale), highest)]
            yield band(avail), f"M{_c(LEFT + i * step)},{BASE}V{y}H{_c(LEFT + (i + n) * step)}V{BASE}z"
        i += n


def availability(history: History, w: Words) -> Chart:
    """One bar per bucket, as tall as its availability and coloured by its band: a path per band."""
    doc, cols, s = history.document, history.columns, history.document["summary"]
    bands: dict[str, list[str]] = {}
    for css, d in _rects(cols):
        bands.setdefault(css, []).append(d)
    marks = tuple(Mark(css, d="".join(bands[css])) for css, _ in LEGEND if css in bands)
    label = w.gettext(N_("Availability, last %(range)s: %(percent)s, %(minutes)s min of incidents")) % {
        "range": w.word(RANGE_LABELS, doc["range"]),
        "percent": w.percent(s["availability"]),
        "minutes": w.number(s["incident_minutes"]),
    }
    no_data = (
        None if any(v is not None for v in cols.availability) else w.gettext(N_("No checks counted in this range"))
    )
    return Chart(
        "availability",
        label,
        routes.history_url(doc["service"], doc["range"]),
        _axes(doc, 100.0, "%", w),
        marks,
        no_data,
        doc["count"],
        doc["range"],
        100.0,
    )


#: The bar's cells name their band with one letter (``.bar .f`` is ``a-full``...): a front page has
#: a cell per run of days for every service.
BAR_LETTERS = {"a-full": "f", "a-high": "h", "a-mid": "m", "a-low": "l", "a-maint": "x", "a-none": "n"}


#: A day before the site's first result: no data yet, not no data.
NEW_LETTER = "y"
#: Where a bar is narrow it shows its last days only (site.css): a cell older than the last 60
#: days is ``o60`` (hidden under 900 px), older than the last 30 ``o30`` (hidden under 600 px).
AGES = ((60, "o60"), (30, "o30"))


def day_letter(point: Point) -> str:
    """A day's band as a bar names it: the day so far at a bar's end (``Point``: a history's)."""
    return BAR_LETTERS[band(point["availability"], point["maintenance"])]


class Cell(NamedTuple):
    """Consecutive days in the same availability band and age: one cell of a front page bar."""

    letter: str
    days: int
    age: str = ""  # "o60", "o30" or "": how old its days are (``AGES``)


def bar(cols: Columns, starts: Sequence[str] = (), since: datetime | None = None) -> list[Cell]:
    """The front page bar of a 90-day history: its cells, oldest first, covering every day; a day
    that ended before ``since`` (the site's first run; ``starts``, the days' starts) is no data yet."""
    n = len(cols.availability)

    def letter(i: int) -> str:
        if since is not None and i < len(starts) and parse_time(starts[i]).timestamp() + 86400 <= since.timestamp():
            return NEW_LETTER
        return BAR_LETTERS[band(cols.availability[i], cols.maintenance[i])]

    def age(i: int) -> str:
        return next((css for days, css in AGES if i < n - days), "")

    return [
        Cell(key[0], len(list(run)), key[1])
        for key, run in itertools.groupby(range(n), key=lambda i: (letter(i), age(i)))
    ]


class DayRow(NamedTuple):
    """A row of a service page's day-by-day table."""

    day: str
    band: str
    availability: str
    incident_minutes: str
    checks: str
    failed: str
    p50: str
    p95: str


def day_rows(points: Sequence[Point], w: Words) -> list[DayRow]:
    """A row per day of a 90-day history, newest first."""
    rows = []
    for p in reversed(points):
        avail = p["availability"]
        if avail is None:
            css = "a-maint" if p["maintenance"] else "a-none"
            words = w.gettext(dict(LEGEND)[css])
        else:
            css, words = band(avail), w.percent(avail)
        rows.append(
            DayRow(
                w.day(p["start"]),
                css,
                words,
                w.number(p["incident_minutes"]),
                w.number(p["checks"]),
                w.number(p["failed"]),
                w.number(p["latency_p50_ms"]),
                w.number(p["latency_p95_ms"]),
            )
        )
    return rows

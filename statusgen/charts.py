"""Render: the charts of the web pages, as server-side SVG and plain HTML runs.

Every value drawn or written here is read from a history document of the
build (``api/v1/services/{slug}/history/{range}.json``); nothing is
recomputed. Only the drawing scale (pixel positions, the round top of the
latency axis) is derived.

SVG is built from escaped values: attribute values and words pass through
``html.escape`` (``text_el``); tag and attribute names are constants of this
module. Fragments are plain strings while a chart is assembled (a front page
of 200 services draws some 400,000 elements) and become ``Markup`` once,
whole.
"""

from __future__ import annotations

import dataclasses
import html
import itertools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from markupsafe import Markup

from .timeutil import parse_iso

Point = dict[str, Any]   # one point of a history document

RANGE_LABELS = {"24h": "24 hours", "7d": "7 days", "30d": "30 days", "90d": "90 days"}

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


def day_text(stamp: str, with_year: bool = True) -> str:
    """``2026-11-22T00:00:00Z`` as ``22 Nov 2026`` (or ``22 Nov``)."""
    moment = parse_iso(stamp)
    assert moment is not None
    return f"{moment.day} {moment:%b %Y}" if with_year else f"{moment.day} {moment:%b}"


def moment_text(stamp: str | None) -> str:
    """``2026-11-22T20:21:31Z`` as ``2026-11-22 20:21 UTC``."""
    moment = parse_iso(stamp)
    return "" if moment is None else f"{moment:%Y-%m-%d %H:%M} UTC"


def bucket_text(stamp: str, resolution_s: int) -> str:
    """A bucket's start, as precise as its resolution needs."""
    moment = parse_iso(stamp)
    assert moment is not None
    return day_text(stamp) if resolution_s >= 86400 else f"{moment.day} {moment:%b %H:%M} UTC"


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


def _availability_words(point: Point) -> str:
    minutes = point.get("incident_minutes") or 0
    incidents = f", {minutes} min of incidents" if minutes or point["availability"] is not None else ""
    if point["availability"] is None:
        what = "maintenance only, no counted checks" if point.get("maintenance") else "no data"
        return what + incidents
    return f"{number(point['availability'])}% available{incidents}"


# -- the 90-day bar of the front page ----------------------------------------------

@dataclass(frozen=True)
class DayRun:
    """Consecutive days that read the same (same availability, same incident minutes).

    The bar draws a run as ``days`` day cells; hover or focus tells its dates
    and numbers. Runs keep the front page small: a quiet service is a few runs,
    not 90 cells.
    """

    days: int
    css: str
    label: str
    right: bool = False     # starts in the right half of the bar: its tip opens leftwards


def _run_key(point: Point) -> tuple[Any, ...]:
    return (point["availability"], point.get("incident_minutes") or 0,
            availability_class(point["availability"], point.get("maintenance") or 0))


def _dates(first: str, last: str) -> str:
    """``21 Sep`` or ``25 Aug \u2013 20 Sep``: within the last 90 days, the year goes without saying."""
    if first == last:
        return day_text(first, with_year=False)
    return f"{day_text(first, with_year=False)} \u2013 {day_text(last, with_year=False)}"


def _bar_words(point: Point, days: int) -> str:
    """What a run of the bar says, tersely: the front page carries one per run of every service."""
    minutes = point.get("incident_minutes") or 0
    if point["availability"] is None:
        what = "maintenance only" if point.get("maintenance") else "no data"
        return what + (f", {minutes} min of incidents" if minutes else "")
    return f"{number(point['availability'])}%, {minutes} min of incidents" + (" each day" if days > 1 else "")


def _run(points: Sequence[Point]) -> DayRun:
    head = points[0]
    label = f"{_dates(head['start'], points[-1]['start'])}: {_bar_words(head, len(points))}"
    return DayRun(len(points), availability_class(head["availability"], head.get("maintenance") or 0), label)


def day_runs(points: Sequence[Point]) -> list[DayRun]:
    """The bar's runs, oldest first, covering every point of the 90-day history."""
    runs, start = [], 0
    for _, group in itertools.groupby(points, key=_run_key):
        run = _run(list(group))
        runs.append(dataclasses.replace(run, right=start >= len(points) / 2))
        start += run.days
    return runs


# -- SVG ---------------------------------------------------------------------------

W, H = 480, 170                      # viewBox
LEFT, RIGHT, TOP, BOTTOM = 62, 8, 10, 26
PLOT_W, PLOT_H = W - LEFT - RIGHT, H - TOP - BOTTOM


def _coord(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0")


Fragment = str   # SVG built here: every value in it already escaped


def _attr(value: Any) -> str:
    """An attribute value: numbers as coordinates, words escaped."""
    if isinstance(value, float):
        return _coord(value)
    return str(value) if isinstance(value, int) else html.escape(str(value), quote=True)


def _attrs(attrs: dict[str, Any]) -> str:
    return "".join(f' {name}="{_attr(value)}"' for name, value in attrs.items() if value is not None)


def el(tag: str, attrs: dict[str, Any] | None = None, *children: Fragment) -> Fragment:
    """One element around fragments built by ``el`` or ``text_el`` (never raw words)."""
    return f"<{tag}{_attrs(attrs or {})}>{''.join(children)}</{tag}>"


def text_el(tag: str, attrs: dict[str, Any] | None, words: str) -> Fragment:
    """One element around words, escaped."""
    return el(tag, attrs, html.escape(words, quote=False))


def _x(index: int, count: int) -> float:
    return LEFT + (index + 0.5) * PLOT_W / count


def _y(value: float, top: float) -> float:
    return TOP + PLOT_H - (value / top) * PLOT_H if top else TOP + PLOT_H


def nice_top(value: float) -> float:
    """The round number (1, 2 or 5 times a power of ten) at or above ``value``: the axis top."""
    if value <= 0:
        return 1.0
    power = 10 ** math.floor(math.log10(value))
    return next(step * power for step in (1, 2, 5, 10) if step * power >= value)


def _grid(top: float, unit: str) -> list[Fragment]:
    out = []
    for value in (0.0, top / 2, top):
        y = _y(value, top)
        out.append(el("line", {"class": "grid", "x1": float(LEFT), "x2": float(W - RIGHT), "y1": y, "y2": y}))
        out.append(text_el("text", {"x": float(LEFT - 4), "y": y + 3.5, "text-anchor": "end"}, f"{number(value)}{unit}"))
    return out


def _x_labels(history: dict[str, Any]) -> list[Fragment]:
    res = history["resolution_s"]
    first, last = history["points"][0]["start"], history["points"][-1]["start"]
    y = float(H - 6)
    return [text_el("text", {"x": float(LEFT), "y": y}, bucket_text(first, res)),
            text_el("text", {"x": float(W - RIGHT), "y": y, "text-anchor": "end"}, bucket_text(last, res))]


def _svg(label: str, parts: Iterable[Fragment]) -> Markup:
    """The chart, whole, as markup for the template (its parts were escaped as they were built)."""
    return Markup(el("svg", {"class": "chart", "viewBox": f"0 0 {W} {H}", "role": "img", "aria-label": label,
                      "xmlns": "http://www.w3.org/2000/svg", "focusable": "false"}, *parts))


def _no_data(parts: list[Fragment], points: Sequence[Point], field: str, words: str) -> None:
    """Say so in the plot when no point of the range has ``field``."""
    if all(p[field] is None for p in points):
        parts.append(text_el("text", {"x": float(LEFT + PLOT_W / 2), "y": float(TOP + PLOT_H / 2),
                                      "text-anchor": "middle"}, words))


# -- latency -------------------------------------------------------------------------

def _segments(values: Sequence[float | None]) -> list[list[tuple[int, float]]]:
    """Runs of consecutive non-null values, with their indexes: a line breaks at a gap."""
    runs: list[list[tuple[int, float]]] = []
    for known, group in itertools.groupby(enumerate(values), key=lambda iv: iv[1] is not None):
        if known:
            runs.append([(i, v) for i, v in group if v is not None])
    return runs


def _line(values: Sequence[float | None], top: float, css: str, dot: str) -> list[Fragment]:
    out = []
    for run in _segments(values):
        pts = [(_x(i, len(values)), _y(v, top)) for i, v in run]
        if len(pts) == 1:
            out.append(el("circle", {"class": dot, "cx": pts[0][0], "cy": pts[0][1], "r": 2.5}))
        else:
            out.append(el("polyline", {"class": css, "points": " ".join(f"{_coord(x)},{_coord(y)}" for x, y in pts)}))
    return out


def _latency_targets(history: dict[str, Any]) -> list[Fragment]:
    """Invisible columns over measured buckets: hover tells the bucket's numbers."""
    points, res = history["points"], history["resolution_s"]
    width = PLOT_W / len(points)
    out = []
    for i, p in enumerate(points):
        if p["latency_p50_ms"] is None:
            continue
        words = (f"{bucket_text(p['start'], res)}: p50 {number(p['latency_p50_ms'])} ms, "
                 f"p95 {number(p['latency_p95_ms'])} ms")
        out.append(el("rect", {"class": "hit", "x": LEFT + i * width, "y": float(TOP), "width": width,
                               "height": float(PLOT_H)}, text_el("title", {}, words)))
    return out


def latency_chart(history: dict[str, Any]) -> Markup:
    """p50 (solid) and p95 (dashed) latency of every bucket of a history document."""
    points = history["points"]
    p50 = [p["latency_p50_ms"] for p in points]
    p95 = [p["latency_p95_ms"] for p in points]
    top = nice_top(max((v for v in p50 + p95 if v is not None), default=0.0))
    parts = _grid(top, " ms") + _x_labels(history)
    parts += _line(p95, top, "p95", "dot95") + _line(p50, top, "p50", "dot50") + _latency_targets(history)
    _no_data(parts, points, "latency_p50_ms", "No latency measured in this range")
    s = history["summary"]
    label = (f"Latency, last {RANGE_LABELS[history['range']]}: p50 {number(s['latency_p50_ms'])} ms, "
             f"p95 {number(s['latency_p95_ms'])} ms")
    return _svg(label, parts)


# -- availability ---------------------------------------------------------------------

def _bar(i: int, count: int, point: Point, res: int) -> Fragment:
    width = PLOT_W / count
    avail = point["availability"]
    height = max(PLOT_H * avail / 100, 1.5)
    inset = 0.15 * width if width > 3 else 0.0
    words = f"{bucket_text(point['start'], res)}: {_availability_words(point)}"
    return el("rect", {"class": availability_class(avail), "x": LEFT + i * width + inset,
                       "y": TOP + PLOT_H - height, "width": width - 2 * inset, "height": height},
              text_el("title", {}, words))


def _stub(i: int, count: int, run: Sequence[Point], res: int) -> Fragment:
    """A low strip under consecutive buckets without counted checks, told once for the run."""
    width = PLOT_W / count
    first, last = bucket_text(run[0]["start"], res), bucket_text(run[-1]["start"], res)
    when = first if len(run) == 1 else f"{first} \u2013 {last}"
    return el("rect", {"class": availability_class(None, run[0].get("maintenance") or 0), "x": LEFT + i * width,
                       "y": float(TOP + PLOT_H - 3), "width": width * len(run), "height": 3.0},
              text_el("title", {}, f"{when}: {_availability_words(run[0])}"))


def _bars(points: Sequence[Point], res: int) -> list[Fragment]:
    out, i = [], 0
    for key, group in itertools.groupby(points, key=lambda p: p["availability"] is None and _run_key(p)):
        run = list(group)
        if key:
            out.append(_stub(i, len(points), run, res))
        else:
            out += [_bar(i + j, len(points), p, res) for j, p in enumerate(run)]
        i += len(run)
    return out


def availability_chart(history: dict[str, Any]) -> Markup:
    """One bar per bucket, as tall as its availability and coloured by its band."""
    points, res = history["points"], history["resolution_s"]
    parts = _grid(100.0, "%") + _x_labels(history)
    parts += _bars(points, res)
    _no_data(parts, points, "availability", "No checks counted in this range")
    s = history["summary"]
    label = (f"Availability, last {RANGE_LABELS[history['range']]}: {number(s['availability'])}%, "
             f"{number(s['incident_minutes'])} min of incidents")
    return _svg(label, parts)

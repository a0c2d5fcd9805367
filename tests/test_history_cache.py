"""Incremental histories: points carried between builds in a real store equal histories made anew.

A service is checked every 17 minutes for three days (so every range slides, buckets
close, some stay empty); after every cycle its four histories are made the way a build
makes them (carrying the kept points forward) and compared, byte for byte, with
histories made from the buckets alone. An incident opens and ends on the way, a result
arrives late into a closed bucket, and retention runs.
"""

from __future__ import annotations

import math
import random
import zlib
from array import array
from datetime import UTC, datetime, timedelta

import orjson

from statusgen import latency
from statusgen.decide.health import RunRecord
from statusgen.decide.history import (
    COARSER,
    HistoryDocument,
    Series,
    build_history,
    incidents_key,
    points_of,
    spans_of,
    window,
)
from statusgen.decide.incidents import Incident, IncidentUpdate
from statusgen.decide.run import StoredResult
from statusgen.decide.state import ServiceState
from statusgen.model import RANGES, CheckResult, Outcome, Status
from statusgen.render import charts
from statusgen.render.gather import HistorySource
from statusgen.store import Cycle, Store
from statusgen.timeutil import iso_epoch

T0 = datetime(2026, 11, 1, 0, 3, tzinfo=UTC)


def made_anew(store: Store, slug: str, as_of: datetime, incidents: list[Incident]) -> dict[str, bytes]:
    out = {}
    for name, rng in RANGES.items():
        start, end = window(rng, as_of)
        res = rng.resolution_s
        fine = store.bucket_span(slug, res, start, end)
        coarse = store.bucket_span(slug, COARSER[res], start, end - res) if COARSER[res] else []
        spans = spans_of(incidents)
        doc, _ = build_history(slug, rng, as_of, spans, incidents_key(spans), None, fine, coarse)
        out[name] = orjson.dumps(doc)
    return out


def save(store: Store, at: datetime, outcome: Outcome, latency: float | None, incidents=(), flag=None) -> None:
    result = CheckResult("api", 0, at, outcome, latency, 200 if latency else None, False)
    store.save_cycle(Cycle(RunRecord(0, at, at + timedelta(seconds=1), 1, int(latency is None)),
                           [StoredResult(result, flag)],
                           {"api": ServiceState(Status.OPERATIONAL, at, "fine", ("checks",), observed_at=at)},
                           list(incidents)))


def test_carried_histories_equal_histories_made_anew(tmp_path):
    rnd = random.Random(7)
    store = Store(tmp_path / "s.db")
    source = HistorySource(store)
    incidents: list[Incident] = []
    carried = moved = drawn = 0
    at = T0
    for n in range(3 * 24 * 60 // 17):
        at += timedelta(minutes=17)
        down = 100 <= n < 104
        save(store, at, Outcome.HTTP_STATUS if down else Outcome.OK, None if down else rnd.uniform(20, 900),
             flag="maintenance" if 60 <= n < 64 else None)
        if n == 101:                   # an incident opens (from the first failure), then ends
            incidents = [Incident("api-1", "api", "API: major outage", "major", T0 + timedelta(minutes=17 * 101),
                                  None, (IncidentUpdate(at, "opened", "major_outage", "Opened"),))]
        if n == 104:
            incidents = [Incident(incidents[0].id, "api", incidents[0].title, "major", incidents[0].started_at,
                                  at, incidents[0].updates)]
        if n == 150:                   # a late result, into a bucket that closed an hour ago
            save(store, at - timedelta(hours=1), Outcome.OK, 5000.0)
        if n % 50 == 0:
            store.prune(at)
        before = store.history_cache("api")
        made = source.histories("api", at, spans_of(incidents))
        for name, doc in made.items():          # the charts' columns are those of the points, kept or not
            assert doc.series == Series.of_points(points_of(doc)), f"cycle {n}, {name}"
        docs = {name: orjson.dumps(doc) for name, doc in made.items()}
        drawn += "rows" in made["90d"].drawn
        for name, doc in made.items():          # drawn with what earlier builds drew, as if drawn anew
            assert drawings(doc) == drawings(orjson.loads(docs[name])), f"cycle {n}, {name}"
        source.flush()
        moved += sum(1 for res, c in before.items() if store.history_cache("api")[res].first != c.first
                      or store.history_cache("api")[res].upto != c.upto)
        carried += len(before)
        assert docs == made_anew(store, "api", at, incidents), f"cycle {n} at {at}"
    assert carried > 4 * 200 and moved > 200       # the kept points were carried, not made anew each time
    assert drawn > 200                             # and so were the 90-day table's rows


def drawings(history: dict) -> tuple[str, ...]:
    """What the pages draw of a history (the day table and front page bar of the 90-day one)."""
    days = (charts.day_table(history), charts.history_cells(history)) if history["range"] == "90d" else ()
    return charts.latency_chart(history), charts.availability_chart(history), *days


def _history(name: str, first: int, values: list[tuple], drawn: dict) -> HistoryDocument:
    """A history document of ``values`` (availability, p50, p95, maintenance) per bucket, as a build
    makes it: with its chart columns and what was drawn of its closed buckets."""
    res = RANGES[name].resolution_s
    points = [{"start": iso_epoch(first + i * res), "availability": a, "latency_p50_ms": p50, "latency_p95_ms": p95,
               "checks": 10, "failed": 0, "slow": 0, "maintenance": m, "excluded": 0, "incident_minutes": 0}
              for i, (a, p50, p95, m) in enumerate(values)]
    doc = HistoryDocument({"service": "api", "range": name, "resolution": RANGES[name].resolution,
                           "resolution_s": res, "summary": {"availability": 99.9, "latency_p50_ms": 40.0,
                                                            "latency_p95_ms": 90.0, "incident_minutes": 3},
                           "points": points})
    doc.series, doc.drawn, doc.open_point = Series.of_points(points), drawn, orjson.dumps(points[-1]).decode()
    return doc


def test_charts_drawn_with_what_was_carried_are_the_charts_drawn_anew():
    """Cycle after cycle, the bucket in progress changes (a value, none, one above the axis top,
    the availability of the run before it or another) and now and then the range slides: the
    latency lines and availability rectangles drawn with what earlier cycles carried are the
    charts drawn from the points alone, and the carried parts were used."""
    rnd = random.Random(11)

    def bucket(gaps: bool) -> tuple:
        if gaps and rnd.random() < 0.15:
            return (None, None, None, rnd.choice((0, 2)))
        p50 = rnd.choice((40.0, 41.5, 43.2, 60.0, 95.1)) if rnd.random() < 0.9 else rnd.uniform(100, 900)
        return (rnd.choice((100.0, 100.0, 100.0, 99.5, 97.0)), p50, p50 * 1.8, 0)

    for name in RANGES:
        count, res = RANGES[name].buckets, RANGES[name].resolution_s
        values, first, drawn = [bucket(False) for _ in range(count)], 1_790_000_000 // res * res, {}
        reused = 0
        for n in range(120):
            if n % 7 == 6:                     # a bucket closes: the range slides by one
                values, first = values[1:] + [bucket(n % 21 == 20)], first + res
            else:                              # the bucket in progress has one more result
                values[-1] = bucket(True) if n % 5 else (100.0, 2000.0, 5000.0, 0)   # some above the axis top
            before = {k: drawn.get(k) for k in ("lines", "rects")}
            doc = _history(name, first, values, drawn)
            got = (charts.latency_chart(doc), charts.availability_chart(doc))
            assert got == (charts.latency_chart(dict(doc)), charts.availability_chart(dict(doc))), f"{name} {n}"
            reused += sum(before[k] is not None and drawn[k] is before[k] for k in before)
        assert reused > 120, name               # most cycles drew only the bucket in progress


def test_chart_columns_are_kept_as_they_were_made():
    series = Series([100.0, None, 99.5, None], [12.5, None, 7.0, None], [30.0, None, 9.25, None], [0, 3, 0, 0])
    back = Series.unpack(series.pack())
    assert (back.availability, back.p50, back.p95, back.maintenance) == \
        (series.availability, series.p50, series.p95, series.maintenance)
    whole = Series([99.0], [1.5], [2.5], [0])
    assert Series.unpack(whole.pack()).p50 == [1.5] and Series.unpack(Series([], [], [], []).pack()).p95 == []
    signed = Series([-math.nan, 1.0], [None, None], [2.0, None], [0, 0])        # NaN with its sign bit set
    assert Series.unpack(signed.pack()).availability == [None, 1.0]
    # Two values whose bytes, read across the boundary between them, spell NaN: neither is one.
    nan = array("d", [math.nan]).tobytes()
    first, second = array("d"), array("d")
    first.frombytes(b"\x11\x22" + nan[:6])
    second.frombytes(nan[6:] + b"\x01\x02\x03\x04\x05\x06")
    straddling = Series([first[0], second[0], None], [None, first[0], second[0]], [1.0, 2.0, 3.0], [0, 0, 0])
    back = Series.unpack(straddling.pack())
    assert (back.availability, back.p50) == ([first[0], second[0], None], [None, first[0], second[0]])


def test_a_result_written_into_kept_points_deletes_them(tmp_path):
    store = Store(tmp_path / "s.db")
    source = HistorySource(store)
    for i in range(30):
        save(store, T0 + timedelta(minutes=i), Outcome.OK, 40.0)
    source.histories("api", T0 + timedelta(minutes=29), [])
    source.flush()
    kept = store.history_cache("api")
    assert set(kept) == {300, 3600, 21600, 86400} and kept[300].upto > kept[300].first
    save(store, T0 + timedelta(minutes=30), Outcome.OK, 40.0)        # into the bucket in progress: kept
    assert set(store.history_cache("api")) == {300, 3600, 21600, 86400}
    save(store, T0 + timedelta(minutes=2), Outcome.OK, 40.0)         # into a closed 5-min bucket: gone
    assert 300 not in store.history_cache("api") and 86400 in store.history_cache("api")


def test_kept_sums_that_do_not_add_up_are_made_anew(tmp_path):
    """A store whose kept points disagree with its buckets (edited by hand, restored from
    elsewhere) never yields negative counts: that history is made from the buckets again."""
    store = Store(tmp_path / "s.db")
    source = HistorySource(store)
    for i in range(20):
        save(store, T0 + timedelta(minutes=i), Outcome.OK, 40.0 + i)
    source.histories("api", T0 + timedelta(minutes=19), [])
    source.flush()
    store.db.execute("UPDATE history_cache SET hist = NULL, counts = '[0,0,0,0]'")     # sums lost
    later = T0 + timedelta(hours=24, minutes=10)     # the 24h range drops buckets that held results
    save(store, later, Outcome.OK, 40.0)
    docs = {name: orjson.dumps(doc) for name, doc in source.histories("api", later, []).items()}
    assert docs == made_anew(store, "api", later, [])


def test_kept_points_are_stored_deflated_and_a_store_holding_them_as_text_reads_them(tmp_path):
    """The points' JSON text is kept deflated (a build reads every service's); a store
    written before kept it as text, which is carried forward the same, and deflated when
    its range moves on."""
    store = Store(tmp_path / "s.db")
    source = HistorySource(store)
    for i in range(3 * 60):
        save(store, T0 + timedelta(minutes=i), Outcome.OK, 40.0 + i % 7)
    at = T0 + timedelta(minutes=3 * 60 - 1)
    source.histories("api", at, [])
    source.flush()
    kept = store.history_cache("api")
    stored = dict(store.db.execute("SELECT res, points FROM history_cache WHERE service = 'api'"))
    for res, c in kept.items():
        assert isinstance(stored[res], bytes) and zlib.decompress(stored[res]).decode() == c.points
    assert sum(map(len, stored.values())) * 5 < sum(len(c.points) for c in kept.values())
    store.db.executemany("UPDATE history_cache SET points = ? WHERE service = 'api' AND res = ?",
                         [(c.points, res) for res, c in kept.items()])          # as an older store holds them
    assert store.history_cache("api") == kept
    later = at + timedelta(minutes=10)
    save(store, later, Outcome.OK, 41.0)
    docs = {name: orjson.dumps(doc) for name, doc in source.histories("api", later, []).items()}
    source.flush()
    assert docs == made_anew(store, "api", later, [])
    stored = dict(store.db.execute("SELECT res, points FROM history_cache WHERE service = 'api'"))
    assert isinstance(stored[300], bytes) and isinstance(stored[86400], str)   # deflated as each range moves


def test_simulated_buckets_add_up_across_resolutions(tmp_path):
    """``statusgen simulate`` makes each coarser bucket the sum of the finer ones, as real
    runs do: carried histories then equal histories made anew as the ranges slide."""
    from statusgen.simulate import simulate
    now = datetime(2026, 11, 22, 20, 0, 30, tzinfo=UTC)
    simulate(2, 12, tmp_path / "sim.db", now)
    store = Store(tmp_path / "sim.db")
    source = HistorySource(store)
    for slug in ("service-0000", "service-0001"):
        incidents = [i for i in store.incidents() if i.service == slug]
        for hours in (0, 7, 31):                         # slides every range by whole buckets
            at = now + timedelta(hours=hours)
            docs = {name: orjson.dumps(doc) for name, doc in source.histories(slug, at, spans_of(incidents)).items()}
            source.flush()
            assert docs == made_anew(store, slug, at, incidents), (slug, hours)
    rows = store.db.execute("SELECT res, start, up, down, hist FROM buckets WHERE service = 'service-0000'")
    by_res: dict[int, dict[int, tuple]] = {}
    for res, start, up, down, hist in rows:
        by_res.setdefault(res, {})[start] = (up, down, latency.decode(hist))
    for fine, coarse in ((3600, 21600), (21600, 86400)):
        for start, (up, down, hist) in by_res[coarse].items():
            parts = [v for s, v in by_res[fine].items() if start <= s < start + coarse]
            if len(parts) == coarse // fine:                 # wholly within the finer buckets' retention
                merged: dict[int, int] = {}
                for p in parts:
                    latency.merge(merged, p[2])
                assert (up, down, hist) == (sum(p[0] for p in parts), sum(p[1] for p in parts), merged)

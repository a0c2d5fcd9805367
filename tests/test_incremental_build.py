"""Builds skip the work for files whose inputs did not change, and still publish exactly
what a build from scratch would, in one process or with workers. Real store, real tree."""

from __future__ import annotations

import re
import shutil
import sqlite3
from contextlib import closing
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statusgen import routes
from statusgen.config import load_config
from statusgen.decide.health import RunRecord
from statusgen.decide.run import decide_cycle
from statusgen.errors import StoreError
from statusgen.model import CheckResult, Outcome
from statusgen.render.build import build
from statusgen.render.formats.badges import badge_paths
from statusgen.render.pages import views
from statusgen.render.pages.fragments import FILE
from statusgen.render.tree import MANIFEST, current_generation, gens_dir
from statusgen.simulate import config_text, simulate
from statusgen.store import Cycle, Store
from tests.conftest import generations

NOW = datetime(2026, 11, 22, 20, 0, 30, tzinfo=UTC)


def service_files(slug: str) -> set[str]:
    return {
        f"api/v1/services/{slug}.json",
        f"services/{slug}/index.html",
        *(f"api/v1/services/{slug}/history/{r}.json" for r in ("24h", "7d", "30d", "90d")),
    }


@pytest.fixture()
def site(tmp_path: Path):
    simulate(4, 20, tmp_path / "sim.db", NOW)
    (tmp_path / "sim.toml").write_text(config_text(4, tmp_path / "sim.db", tmp_path / "site"), encoding="utf-8")
    config = load_config(tmp_path / "sim.toml")
    store = Store(config.site.store)
    build(store, config, NOW)
    return config, store


def kept_by_next_build(config, store, now: datetime, workers: int = 1) -> set[str]:
    """The next build; the files it kept without making them again."""
    return set(build(store, config, now, workers).stats.kept)


def tree_files(root: Path) -> dict[str, bytes]:
    root = current_generation(root)
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and p.suffix != ".gz" and p.name != MANIFEST
    }


def assert_tree_is_a_build_from_scratch(config, store, now: datetime) -> None:
    """Every file of the served tree has the bytes a build from a copy of the store (no history
    cache beside it) into an empty folder makes."""
    fresh = config.site.output.parent / "fresh"
    shutil.rmtree(fresh, ignore_errors=True)
    (fresh / "site").parent.mkdir(parents=True, exist_ok=True)
    copy = Store(fresh / "copy.db")
    store.db.backup(copy.db)
    build(copy, replace(config, site=replace(config.site, store=copy.path, output=fresh / "site")), now, workers=1)
    served, made = tree_files(config.site.output), tree_files(fresh / "site")
    assert served.keys() == made.keys()
    assert [p for p in made if served[p] != made[p]] == []


def one_result_for(config, store: Store, slug: str, at: datetime) -> None:
    """A cycle in which only ``slug`` was checked (the others are paused, say)."""
    results = [CheckResult(slug, 0, at, Outcome.OK, 42.0, 200, False)]
    d = decide_cycle(config, store.states(), store.open_incidents(), results, at)
    store.save_cycle(Cycle(RunRecord(0, at, at + timedelta(seconds=2), 1, 0), d.results, d.states, d.incidents))


def test_a_build_with_no_new_data_renders_no_service_again(site):
    config, store = site
    second = build(store, config, NOW, workers=1)
    for svc in config.services:
        assert service_files(svc.slug) <= second.stats.kept
    assert second.stats.written == 0
    assert_tree_is_a_build_from_scratch(config, store, NOW)


def test_only_the_services_with_new_data_are_rendered(site):
    config, store = site
    at = NOW + timedelta(days=2)  # the others stopped two days ago: their last day of results is empty
    one_result_for(config, store, "service-0002", at)
    build(store, config, at)
    at += timedelta(minutes=1)
    one_result_for(config, store, "service-0002", at)
    kept = kept_by_next_build(config, store, at)
    assert routes.service_file("service-0002") not in kept  # the record moves with every result
    assert service_files("service-0001") | service_files("service-0003") <= kept
    assert_tree_is_a_build_from_scratch(config, store, at)


def test_results_leaving_the_last_day_render_their_service_again(site):
    config, store = site
    at = NOW + timedelta(hours=12)
    one_result_for(config, store, "service-0001", at - timedelta(hours=11))  # 11 hours on, its last result
    kept_by_next_build(config, store, at - timedelta(hours=11))
    before = store.data_versions()
    one_result_for(config, store, "service-0002", at)  # a run an hour later checks another service
    assert store.data_versions()["service-0001"] == before["service-0001"]
    one_result_for(config, store, "service-0001", at + timedelta(minutes=1))  # its day moves an hour on
    kept = kept_by_next_build(config, store, at + timedelta(minutes=1))
    assert routes.service_file("service-0001") not in kept  # its results of an hour ago left its last day
    assert_tree_is_a_build_from_scratch(config, store, at + timedelta(minutes=1))


def test_retention_moves_the_version_of_a_service_whose_buckets_it_drops(site):
    config, store = site
    later = NOW + timedelta(days=2)
    one_result_for(config, store, "service-0002", later)  # the others stopped two days ago
    build(store, config, later)
    versions = store.data_versions()
    store.prune(later)
    moved = {s for s, v in store.data_versions().items() if v != versions.get(s)}
    assert {"service-0001", "service-0003"} <= moved  # their 5-minute buckets went
    assert routes.service_file("service-0001") not in kept_by_next_build(config, store, later)
    assert_tree_is_a_build_from_scratch(config, store, later)


def test_a_changed_service_setting_renders_that_service_again(site, tmp_path):
    config, store = site
    text = (tmp_path / "sim.toml").read_text(encoding="utf-8")
    (tmp_path / "sim.toml").write_text(
        text.replace('name = "Service 0003"', 'name = "Renamed 0003"', 1), encoding="utf-8"
    )
    renamed = load_config(tmp_path / "sim.toml")
    kept = kept_by_next_build(renamed, store, NOW)
    page = routes.service_page_url("service-0003").lstrip("/") + "index.html"
    assert not {routes.service_file("service-0003"), page} & kept and service_files("service-0001") <= kept
    assert_tree_is_a_build_from_scratch(renamed, store, NOW)
    assert b"Renamed 0003" in (renamed.site.output / "services/service-0003/index.html").read_bytes()


def test_services_rendered_by_worker_processes_make_the_same_tree(site):
    config, store = site
    at = NOW + timedelta(minutes=1)
    for svc in config.services:
        one_result_for(config, store, svc.slug, at)
    result = build(store, config, at, workers=2)
    assert result.stats.written > 0
    assert_tree_is_a_build_from_scratch(config, store, at)
    again = build(store, config, at, workers=2)  # and the keys of the workers' files were kept
    assert again.stats.written == 0
    assert {f for svc in config.services for f in service_files(svc.slug)} <= again.stats.kept


def test_an_error_in_a_worker_fails_the_build_as_it_would_alone_and_keeps_the_site(site):
    """A bucket whose histogram cannot be read (a damaged store): the build fails with the same
    error, the store's, naming the service, in a worker as in one process, and the served site
    stays as it was."""
    config, store = site
    served = tree_files(config.site.output)
    at = NOW + timedelta(days=1)  # every history of the service is made again, its days read
    one_result_for(config, store, "service-0003", at)
    store.db.execute("UPDATE buckets SET hist = x'05' WHERE service = 'service-0003' AND res = 86400")
    errors = []
    for workers in (1, 2):
        with pytest.raises(StoreError, match="the measurements .* of service 'service-0003'") as info:
            build(store, config, at, workers=workers)
        errors.append(str(info.value))
        assert tree_files(config.site.output) == served
    assert errors[0] == errors[1]


def test_a_tree_a_worker_cannot_write_fails_the_build_with_the_writers_words(site):
    """A worker writes its own files: a file system error there is the tree's error, named as
    such, and the served site stays as it was."""
    from statusgen.errors import RenderError

    config, store = site
    build(store, config, NOW)  # two complete generations
    served = current_generation(config.site.output)
    before = tree_files(config.site.output)
    (target,) = [g for g in generations(config.site.output) if g != served]
    shutil.rmtree(target / "services/service-0002")
    (target / "services/service-0002").write_bytes(b"not a folder")  # its page cannot go there
    at = NOW + timedelta(minutes=1)
    one_result_for(config, store, "service-0002", at)
    with pytest.raises(RenderError, match=f"^{re.escape(str(config.site.output))}: cannot write the output tree"):
        build(store, config, at, workers=2)
    assert current_generation(config.site.output) == served and tree_files(config.site.output) == before
    build(store, config, at, workers=2)  # the next build starts that folder anew
    assert_tree_is_a_build_from_scratch(config, store, at)


def test_a_kept_file_gone_from_the_tree_rebuilds_in_full_with_workers(site):
    config, store = site
    build(store, config, NOW)  # both generations hold every file, with keys
    history = "api/v1/services/service-0003/history/24h.json"
    for gen in generations(config.site.output):
        (gen / history).unlink()
    result = build(store, config, NOW, workers=2)
    assert not result.stats.kept
    assert_tree_is_a_build_from_scratch(config, store, NOW)


def test_a_process_with_other_threads_renders_alone():
    import subprocess
    import sys

    script = (
        "import threading; from statusgen.render.build import workers_for; alone = workers_for(1000); "
        "stop = threading.Event(); t = threading.Thread(target=stop.wait); t.start(); "
        "print(alone, workers_for(1000), workers_for(10)); stop.set(); t.join()"
    )
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parent.parent,
    ).stdout.split()
    assert out == ["2", "1", "1"]


def test_the_incidents_page_is_kept_until_an_incident_changes(site):
    config, store = site
    assert "incidents/index.html" in kept_by_next_build(config, store, NOW)
    at = NOW
    for _ in range(5):  # failures in a row: an incident opens
        at += timedelta(minutes=1)
        results = [CheckResult("service-0002", 0, at, Outcome.TIMEOUT, None, None, False)]
        d = decide_cycle(config, store.states(), store.open_incidents(), results, at)
        store.save_cycle(Cycle(RunRecord(0, at, at + timedelta(seconds=2), 1, 1), d.results, d.states, d.incidents))
    opened = store.open_incidents()["service-0002"]
    assert "incidents/index.html" not in kept_by_next_build(config, store, at)
    page = (current_generation(config.site.output) / "incidents/index.html").read_text(encoding="utf-8")
    assert f'href="{routes.incident_page_url(opened.service, opened.id)}"' in page
    assert_tree_is_a_build_from_scratch(config, store, at)
    assert "incidents/index.html" in kept_by_next_build(config, store, at)


def test_services_trading_names_remake_every_feed_and_incidents_page_that_names_them(site, tmp_path):
    """Two services swap names and places: the list of names in order is what it was, but each
    incident now belongs to a service of another name: the feeds' inputs say so."""
    config, store = site
    head, *blocks = (tmp_path / "sim.toml").read_text(encoding="utf-8").split("\n[[services]]\n")
    two, three = blocks[2], blocks[3]
    blocks[2] = three.replace('name = "Service 0003"', 'name = "Service 0002"')
    blocks[3] = two.replace('name = "Service 0002"', 'name = "Service 0003"')
    (tmp_path / "sim.toml").write_text("\n[[services]]\n".join([head, *blocks]), encoding="utf-8")
    traded = load_config(tmp_path / "sim.toml")
    assert [s.name for s in traded.services] == [s.name for s in config.services]
    assert [s.slug for s in traded.services] != [s.slug for s in config.services]
    assert {i.service for i in store.incidents()} >= {"service-0002", "service-0003"}
    kept = kept_by_next_build(traded, store, NOW)
    assert not {"feed/incidents.xml", "feed/services/service-0002.xml", "feed/services/service-0003.xml"} & kept
    assert_tree_is_a_build_from_scratch(traded, store, NOW)


def fragments(config) -> dict[str, str]:
    """What the one cache (``render.pages.fragments``) holds after a build."""
    with closing(sqlite3.connect(gens_dir(config.site.output) / FILE)) as db:
        return dict(db.execute("SELECT key, html FROM fragments"))


def other_format(path: Path) -> bytes:
    """A cache file of another format, holding a fragment under a key a build will look for."""
    with closing(sqlite3.connect(path)) as db:
        keys = [k for (k,) in db.execute("SELECT key FROM fragments")]
        db.execute("PRAGMA user_version = 99")
        db.executemany("UPDATE fragments SET html = '<b>stale</b>' WHERE key = ?", [(k,) for k in keys])
        db.commit()
    return path.read_bytes()


def test_as_a_5_minute_bucket_closes_a_page_draws_its_24_hour_panel_alone(site, monkeypatch):
    """The last build's other panels, day table and front page bar make the page and the front
    page; its bytes are still those of a build from scratch (no cache), and the cache, which
    holds no 24-hour panel, is left as it was."""
    config, store = site
    at = NOW + timedelta(minutes=1)  # the simulated results end before NOW's hour: it closes here
    for svc in config.services:
        one_result_for(config, store, svc.slug, at)
    build(store, config, at, workers=2)
    before = fragments(config)
    assert len(before) == 5 * len(config.services)  # three panels, a day table and a bar each
    drawn: list[tuple[str, ...]] = []  # each drawing: its function (and a panel's range)

    def spy(name: str):
        real = getattr(views, name)

        def drawing(*args):
            drawn.append((name, *args[1:2]))
            return real(*args)

        return drawing

    for name in ("service_panel", "service_days", "front_bar"):
        monkeypatch.setattr(views, name, spy(name))
    at = NOW + timedelta(minutes=5)
    for svc in config.services:
        one_result_for(config, store, svc.slug, at)
    build(store, config, at, workers=1)
    assert drawn == [("service_panel", "24h")] * len(config.services)
    assert fragments(config) == before
    assert_tree_is_a_build_from_scratch(config, store, at)


def test_a_damaged_or_missing_cache_is_drawn_anew(site):
    config, store = site
    path = gens_dir(config.site.output) / FILE
    at = NOW
    damages = (b"not a database", b"SQLite format 3\x00" + bytes(200), other_format(path), None)
    for damage in damages:
        at += timedelta(days=1)  # every history moves: every fragment is drawn...
        for svc in config.services:
            one_result_for(config, store, svc.slug, at)
        if damage is None:
            path.unlink()
        else:
            path.write_bytes(damage)
        build(store, config, at)
        build(store, config, at)  # ...and kept by a build with nothing new
        assert_tree_is_a_build_from_scratch(config, store, at)
        assert len(fragments(config)) == 5 * len(config.services)


def test_the_cache_stays_the_size_of_what_it_holds(site):
    """Every fragment drawn anew, day after day: the new take the pages the forgotten leave."""
    config, store = site
    path = gens_dir(config.site.output) / FILE
    at, sizes = NOW, [path.stat().st_size]
    for _ in range(3):
        at += timedelta(days=1)  # every history moves: every fragment is drawn anew
        for svc in config.services:
            one_result_for(config, store, svc.slug, at)
        build(store, config, at)
        sizes.append(path.stat().st_size)
    assert max(sizes) <= 1.2 * sizes[0], sizes


def test_the_cache_forgets_the_fragments_of_a_service_no_longer_configured(site):
    """...by the next build that draws any: a build that draws none neither reads nor writes it."""
    config, store = site
    fewer = replace(config, services=config.services[1:])
    written = (gens_dir(config.site.output) / FILE).stat().st_mtime_ns
    build(store, fewer, NOW)
    assert len(fragments(config)) == 5 * len(config.services)
    assert (gens_dir(config.site.output) / FILE).stat().st_mtime_ns == written
    one_result_for(fewer, store, fewer.services[0].slug, NOW + timedelta(minutes=5))
    build(store, fewer, NOW + timedelta(minutes=5))
    assert len(fragments(config)) == 5 * len(fewer.services)


def test_a_cache_of_another_format_is_not_read(site, tmp_path):
    """A service renamed: its page is made again from histories that did not change, so its
    panels are looked up in the cache, which must then be of this format."""
    config, store = site
    other_format(gens_dir(config.site.output) / FILE)
    text = (tmp_path / "sim.toml").read_text(encoding="utf-8")
    (tmp_path / "sim.toml").write_text(text.replace('name = "Service 0003"', 'name = "Renamed"', 1), encoding="utf-8")
    renamed = load_config(tmp_path / "sim.toml")
    build(store, renamed, NOW)
    page = (renamed.site.output / "services/service-0003/index.html").read_bytes()
    assert b"Renamed" in page and b"<b>stale</b>" not in page
    assert_tree_is_a_build_from_scratch(renamed, store, NOW)


def test_badges_are_kept_until_their_services_name_or_status_changes(site, tmp_path):
    config, store = site
    assert {p for svc in config.services for p in badge_paths(svc.slug)} <= kept_by_next_build(config, store, NOW)
    text = (tmp_path / "sim.toml").read_text(encoding="utf-8")
    (tmp_path / "sim.toml").write_text(text.replace('name = "Service 0003"', 'name = "Renamed"', 1), encoding="utf-8")
    renamed = load_config(tmp_path / "sim.toml")
    kept = kept_by_next_build(renamed, store, NOW)
    assert not set(badge_paths("service-0003")) & kept and set(badge_paths("service-0001")) <= kept
    assert b"Renamed" in (renamed.site.output / "badges/service-0003.svg").read_bytes()
    assert_tree_is_a_build_from_scratch(renamed, store, NOW)


def test_a_finished_months_report_is_kept_and_the_current_one_made_again(tmp_path):
    """A month over does not change: its JSON, CSV and pages are kept, not made again; the month
    in progress is made again with its new figures (40 days before NOW: the month before too)."""
    simulate(2, 40, tmp_path / "sim.db", NOW)
    (tmp_path / "sim.toml").write_text(config_text(2, tmp_path / "sim.db", tmp_path / "site"), encoding="utf-8")
    config = load_config(tmp_path / "sim.toml")
    store = Store(config.site.store)
    build(store, config, NOW)

    def files(month: str) -> set[str]:
        return {f"api/v1/reports/{month}.json", f"reports/{month}.csv", f"reports/{month}/index.html"}

    at = NOW + timedelta(minutes=1)
    results = [CheckResult("service-0001", 0, at, Outcome.TIMEOUT, None, None, False)]
    d = decide_cycle(config, store.states(), store.open_incidents(), results, at)
    store.save_cycle(Cycle(RunRecord(0, at, at + timedelta(seconds=2), 1, 1), d.results, d.states, d.incidents))
    kept = kept_by_next_build(config, store, at + timedelta(minutes=1))
    assert files("2026-10") <= kept
    assert not files("2026-11") & kept
    assert_tree_is_a_build_from_scratch(config, store, at + timedelta(minutes=1))

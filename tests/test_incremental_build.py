"""Builds skip the work for services whose data did not change, and still publish exactly
what a build from scratch would. Real store, real tree."""

from __future__ import annotations

import os
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statusgen import routes
from statusgen.config import load_config
from statusgen.decide.health import RunRecord
from statusgen.decide.run import decide_cycle
from statusgen.model import CheckResult, Outcome
from statusgen.render.build import build, render_files, render_stream
from statusgen.render.gather import gather
from statusgen.render.tree import (
    KEEP,
    MANIFEST,
    Previous,
    current_generation,
    previous_keys,
)
from statusgen.simulate import config_text, simulate
from statusgen.store import Cycle, Store

NOW = datetime(2026, 11, 22, 20, 0, 30, tzinfo=UTC)


def service_files(slug: str) -> set[str]:
    return {f"api/v1/services/{slug}.json", f"services/{slug}/index.html",
            *(f"api/v1/services/{slug}/history/{r}.json" for r in ("24h", "7d", "30d", "90d"))}


@pytest.fixture()
def site(tmp_path: Path):
    simulate(4, 20, tmp_path / "sim.db", NOW)
    (tmp_path / "sim.toml").write_text(config_text(4, tmp_path / "sim.db", tmp_path / "site"), encoding="utf-8")
    config = load_config(tmp_path / "sim.toml")
    store = Store(config.site.store)
    build(store, config, NOW)
    return config, store


def kept_by_next_build(config, store, now: datetime) -> set[str]:
    """The files the next build would give as KEEP (not rendered)."""
    out = config.site.output
    previous = Previous(current_generation(out), previous_keys(out))
    return {item[0] for item in render_stream(gather(store, config, now), previous) if item[1] is KEEP}


def assert_tree_is_a_build_from_scratch(config, store, now: datetime) -> None:
    """Every file of the served tree has the bytes a build without any kept work makes."""
    fresh = render_files(gather(store, config, now))
    root = current_generation(config.site.output)
    served = {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*")
              if p.is_file() and p.suffix != ".gz" and p.name != MANIFEST}
    assert served.keys() == fresh.keys()
    assert [p for p in fresh if served[p] != fresh[p]] == []


def one_result_for(config, store: Store, slug: str, at: datetime) -> None:
    """A cycle in which only ``slug`` was checked (the others are paused, say)."""
    results = [CheckResult(slug, 0, at, Outcome.OK, 42.0, 200, False)]
    d = decide_cycle(config, store.states(), store.open_incidents(), results, at)
    store.save_cycle(Cycle(RunRecord(0, at, at + timedelta(seconds=2), 1, 0), d.results, d.states, d.incidents))


def test_a_build_with_no_new_data_renders_no_service_again(site):
    config, store = site
    kept = kept_by_next_build(config, store, NOW)
    for svc in config.services:
        assert service_files(svc.slug) <= kept
    second = build(store, config, NOW)
    assert second.stats.written == 0 and second.stats.kept == len(kept)
    assert_tree_is_a_build_from_scratch(config, store, NOW)


def test_only_the_services_with_new_data_are_rendered(site):
    config, store = site
    at = NOW + timedelta(days=2)       # the others stopped two days ago: their last day of results is empty
    one_result_for(config, store, "service-0002", at)
    build(store, config, at)
    at += timedelta(minutes=1)
    one_result_for(config, store, "service-0002", at)
    kept = kept_by_next_build(config, store, at)
    assert not service_files("service-0002") & kept
    assert service_files("service-0001") | service_files("service-0003") <= kept
    build(store, config, at)
    assert_tree_is_a_build_from_scratch(config, store, at)


def test_results_leaving_the_last_day_render_their_service_again(site):
    config, store = site
    at = NOW + timedelta(hours=12)
    before = store.data_versions()
    one_result_for(config, store, "service-0002", at)   # a run 12 hours on: every last day starts 12 hours later
    assert store.data_versions()["service-0001"] == before["service-0001"]
    kept = kept_by_next_build(config, store, at)
    assert not service_files("service-0001") & kept       # nothing written for it, yet its last day is shorter
    build(store, config, at)
    assert_tree_is_a_build_from_scratch(config, store, at)


def test_retention_moves_the_version_of_a_service_whose_buckets_it_drops(site):
    config, store = site
    later = NOW + timedelta(days=2)
    one_result_for(config, store, "service-0002", later)          # the others stopped two days ago
    build(store, config, later)
    versions = store.data_versions()
    store.prune(later)
    moved = {s for s, v in store.data_versions().items() if v != versions.get(s)}
    assert {"service-0001", "service-0003"} <= moved                # their 5-minute buckets went
    assert not service_files("service-0001") & kept_by_next_build(config, store, later)
    build(store, config, later)
    assert_tree_is_a_build_from_scratch(config, store, later)


def test_a_changed_service_setting_renders_that_service_again(site, tmp_path):
    config, store = site
    text = (tmp_path / "sim.toml").read_text(encoding="utf-8")
    (tmp_path / "sim.toml").write_text(text.replace('name = "Service 0003"', 'name = "Renamed 0003"', 1),
                                       encoding="utf-8")
    renamed = load_config(tmp_path / "sim.toml")
    kept = kept_by_next_build(renamed, store, NOW)
    assert not service_files("service-0003") & kept and service_files("service-0001") <= kept
    build(store, renamed, NOW)
    assert_tree_is_a_build_from_scratch(renamed, store, NOW)
    assert b"Renamed 0003" in (renamed.site.output / "services/service-0003/index.html").read_bytes()


@pytest.fixture()
def two_processes(monkeypatch):
    """Builds of these small sites render a share of the services in a forked process, as large ones do
    (and do so in this test process, whose other threads are idle test servers holding no lock)."""
    from statusgen.render import forked
    monkeypatch.setattr(forked, "MIN_SERVICES", 2)
    monkeypatch.setattr(forked, "single_threaded", lambda: True)


def test_a_share_rendered_in_a_forked_process_makes_the_same_tree(site, two_processes):
    config, store = site
    at = NOW + timedelta(minutes=1)
    for svc in config.services:
        one_result_for(config, store, svc.slug, at)
    result = build(store, config, at)
    assert result.stats.written > 0
    assert_tree_is_a_build_from_scratch(config, store, at)
    again = build(store, config, at)                     # and the keys of the share's files were kept
    assert again.stats.written == 0 and again.stats.kept >= 6 * (len(config.services) - 1)


def test_a_failure_in_the_forked_process_fails_the_build_and_keeps_the_site(site, two_processes, monkeypatch):
    from statusgen.errors import RenderError
    from statusgen.render import build as render
    build = render.build
    config, store = site
    served = {p: p.read_bytes() for p in current_generation(config.site.output).rglob("*.json")}
    real, parent = render._keyed_files, os.getpid()

    def broken(b):                                       # the forked process renders the feeds first
        if os.getpid() != parent:
            raise ValueError("no such bucket")
        return real(b)
    monkeypatch.setattr(render, "_keyed_files", broken)
    at = NOW + timedelta(minutes=1)
    one_result_for(config, store, "service-0003", at)
    with pytest.raises(RenderError, match="second process failed: ValueError: no such bucket"):
        build(store, config, at)
    assert {p: p.read_bytes() for p in current_generation(config.site.output).rglob("*.json")} == served
    monkeypatch.setattr(render, "_keyed_files", real)
    build(store, config, at)
    assert_tree_is_a_build_from_scratch(config, store, at)


def test_a_tree_the_forked_process_cannot_write_fails_the_build_with_the_writers_words(site, two_processes):
    """The forked process writes its own files (the feeds among them): a file system error there
    is the tree's error, named as such, and the served site stays as it was."""
    from statusgen.errors import RenderError
    config, store = site
    build(store, config, NOW)                            # two complete generations
    served = current_generation(config.site.output)
    before = {p: p.read_bytes() for p in served.rglob("*.xml")}
    (target,) = [g for g in (config.site.output.parent / "site.gens").iterdir() if g != served]
    shutil.rmtree(target / "feed/services")
    (target / "feed/services").write_bytes(b"not a folder")      # the child's feeds cannot go there
    at = NOW + timedelta(minutes=1)
    one_result_for(config, store, "service-0003", at)
    with pytest.raises(RenderError, match=f"^{re.escape(str(config.site.output))}: cannot write the output tree"):
        build(store, config, at)
    assert current_generation(config.site.output) == served
    assert {p: p.read_bytes() for p in served.rglob("*.xml")} == before
    build(store, config, at)                             # the next build starts that folder anew
    assert_tree_is_a_build_from_scratch(config, store, at)


def test_a_kept_file_gone_from_the_tree_rebuilds_in_full_with_a_forked_share(site, two_processes):
    config, store = site
    build(store, config, NOW)                            # both generations hold every file, with keys
    history = "api/v1/services/service-0003/history/24h.json"   # in the forked process's share, kept
    for gen in (config.site.output.parent / "site.gens").iterdir():
        (gen / history).unlink()
    result = build(store, config, NOW)
    assert not result.keys_used
    assert_tree_is_a_build_from_scratch(config, store, NOW)


def test_claims_share_the_services_between_the_processes_without_overlap():
    import pickle

    from statusgen.render.forked import Claims
    claims = Claims(500)
    back, there = os.pipe()
    pid = os.fork()
    if pid == 0:                                         # the child takes what it can, and tells
        with open(there, "wb") as out:
            out.write(pickle.dumps([i for i in claims]))
        os._exit(0)
    os.close(there)
    mine = list(claims)
    with open(back, "rb") as told:
        theirs = pickle.loads(told.read())
    os.waitpid(pid, 0)
    assert sorted(mine + theirs) == list(range(500))
    assert claims.taken == mine


def test_a_process_with_other_threads_renders_alone():
    import subprocess
    import sys
    script = ("import threading; from statusgen.render.forked import MIN_SERVICES, usable; alone = usable(MIN_SERVICES); "
              "stop = threading.Event(); t = threading.Thread(target=stop.wait); t.start(); "
              "print(alone, usable(MIN_SERVICES)); stop.set(); t.join()")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).resolve().parent.parent).stdout.split()
    assert out == ["True", "False"]


def test_the_incidents_page_is_kept_until_an_incident_changes(site):
    config, store = site
    assert "incidents/index.html" in kept_by_next_build(config, store, NOW)
    at = NOW
    for _ in range(5):                 # failures in a row: an incident opens
        at += timedelta(minutes=1)
        results = [CheckResult("service-0002", 0, at, Outcome.TIMEOUT, None, None, False)]
        d = decide_cycle(config, store.states(), store.open_incidents(), results, at)
        store.save_cycle(Cycle(RunRecord(0, at, at + timedelta(seconds=2), 1, 1), d.results, d.states, d.incidents))
    opened = store.open_incidents()["service-0002"]
    assert "incidents/index.html" not in kept_by_next_build(config, store, at)
    build(store, config, at)
    page = (current_generation(config.site.output) / "incidents/index.html").read_text(encoding="utf-8")
    assert f'href="{routes.incident_page_url(opened.service, opened.id)}"' in page
    assert_tree_is_a_build_from_scratch(config, store, at)
    assert "incidents/index.html" in kept_by_next_build(config, store, at)


def test_services_trading_names_remake_every_feed_and_incidents_page_that_names_them(site, tmp_path):
    """Two services swap names and places: the list of names in order is what it was, but each
    incident now belongs to a service of another name. The site feed's inputs (which stand for
    every feed's and incidents page's: a build keeps them all when it is kept) say so."""
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
    assert "feed/incidents.xml" not in kept
    build(store, traded, NOW)
    assert_tree_is_a_build_from_scratch(traded, store, NOW)

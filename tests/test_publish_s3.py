"""statusgen publish to an S3-compatible server on loopback (moto in server mode), through a
recording proxy: five normal cycles of a simulated site, each built and published as
``statusgen run`` and ``statusgen publish`` do.

After the first publish (which compares with the bucket), a publish asks the bucket nothing: it
uploads what the build changed since the last publish, as the manifest says. The bucket then
equals the tree byte for byte, and the cycle in which one service's status changes uploads that
service's files and the site-wide files that show it, and of every other service only what its
meaning changed (its record, and the histories whose bucket closed).
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from statusgen import routes
from statusgen.config import Config, load_config
from statusgen.decide.health import RunRecord
from statusgen.decide.run import decide_cycle
from statusgen.model import RANGES, CheckResult, Outcome
from statusgen.render.build import build
from statusgen.render.tree import current_generation, read_manifest
from statusgen.simulate import config_text, simulate
from statusgen.store import Cycle, Store
from statusgen.web.publish import PublishError, publish_tree, publishable
from tests.objectstore import S3, by_kind, s3_server

NOW = datetime(2026, 11, 22, 20, 0, 30, tzinfo=UTC)
SERVICES = 12
FAILING = "service-0005"  # fails from the first cycle on: its status changes on the way


@pytest.fixture(autouse=True)
def no_custom_ca_bundle(monkeypatch: pytest.MonkeyPatch) -> None:
    # rclone 1.60's S3 client refuses to start when AWS_CA_BUNDLE is set (as on some CI hosts);
    # the server here is plain HTTP on loopback.
    monkeypatch.delenv("AWS_CA_BUNDLE", raising=False)


@dataclass
class Site:
    config: Config
    store: Store

    def cycle(self, at: datetime) -> None:
        """One normal cycle: one result for every check (FAILING's fails), then the build."""
        results = [
            CheckResult(s.slug, 0, at, Outcome.HTTP_STATUS, 3.0, 503, False)
            if s.slug == FAILING
            else CheckResult(s.slug, 0, at, Outcome.OK, 42.0, 200, False)
            for s in self.config.services
        ]
        d = decide_cycle(self.config, self.store.states(), self.store.open_incidents(), results, at)
        run = RunRecord(0, at, at + timedelta(seconds=2), len(results), 1)
        self.store.save_cycle(Cycle(run, d.results, d.states, d.incidents))
        build(self.store, self.config, at + timedelta(seconds=2), workers=1)

    def status(self, slug: str) -> str:
        snapshot = json.loads((self.config.site.output / "api/v1/snapshot.json").read_bytes())
        return str(next(s["status"] for s in snapshot["services"] if s["slug"] == slug))


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    simulate(SERVICES, 2, tmp_path / "sim.db", NOW)
    (tmp_path / "sim.toml").write_text(config_text(SERVICES, tmp_path / "sim.db", tmp_path / "site"), "utf-8")
    config = load_config(tmp_path / "sim.toml")
    store = Store(config.site.store)
    build(store, config, NOW, workers=1)
    yield Site(config, store)
    store.close()


def service_files(slug: str) -> dict[str, str]:
    return {
        "record": routes.service_file(slug),
        "page": routes.service_page_url(slug).lstrip("/") + "index.html",
        "badge": f"badges/{slug}.svg",
        "badge-json": f"badges/{slug}.json",
        "feed": routes.service_feed_file(slug),
        **{f"history-{r}": routes.history_file(slug, r) for r in RANGES},
    }


def tree_bytes(site: Path) -> dict[str, bytes]:
    gen = current_generation(site)
    assert gen is not None
    return {rel: (gen / rel).read_bytes() for rel in read_manifest(gen) if publishable(rel)}


def publish_cycles(site: Site, s3: S3, precompressed: bool = False) -> list[tuple[str, str, list[str]]]:
    """Publish, then five cycles each built and published; each cycle's status of FAILING before and
    after, and what its publish uploaded."""
    output = site.config.site.output
    publish_tree(output, s3.remote(), precompressed=precompressed)
    s3.proxy.taken()
    cycles = []
    at = NOW
    for _ in range(5):
        at += timedelta(minutes=1)
        before = site.status(FAILING)
        site.cycle(at)
        report = publish_tree(output, s3.remote(), precompressed=precompressed)
        log = s3.proxy.taken()
        asked = [r for r in log if r.method != "PUT"]
        # No listing, no GET, no HEAD of a file: the manifest says what changed. rclone looks once
        # at the remote's folder itself as it starts (a HEAD of it), once per step.
        assert {(r.method, r.path) for r in asked} <= {("HEAD", f"/{s3.proxy.prefix}")}, by_kind(asked)
        assert len(asked) <= len(report.results)
        uploaded = [r.path for r in log if r.method == "PUT"]
        assert sorted(uploaded) == sorted(report.changed("copy"))
        cycles.append((before, site.status(FAILING), uploaded))
    return cycles


def test_five_cycles_upload_what_changed_and_leave_the_bucket_equal_to_the_tree(site: Site) -> None:
    with s3_server() as s3:
        cycles = publish_cycles(site, s3)
        objects = s3.objects()
    tree = tree_bytes(site.config.site.output)
    assert {rel: body for rel, (body, _) in objects.items()} == tree
    assert all(headers["cache-control"] == "public, max-age=15" for _, headers in objects.values())

    changed = [c for c in cycles if c[0] != c[1]]
    assert len(changed) == 1, [c[:2] for c in cycles]  # FAILING's status changes once in five cycles
    _, _, uploaded = changed[0]
    mine = service_files(FAILING)
    assert {mine["record"], mine["page"], mine["badge"], mine["badge-json"]} <= set(uploaded)
    assert {"api/v1/snapshot.json", "api/v1/health.json", "index.html"} <= set(uploaded)
    others = [s.slug for s in site.config.services if s.slug != FAILING]
    histories_moved = {name for name, path in service_files(others[0]).items() if path in uploaded}
    for slug in others:
        files = service_files(slug)
        moved = {name for name, path in files.items() if path in uploaded}
        assert "record" in moved  # a new result
        assert moved == histories_moved  # and the same closed buckets as every other service's
        assert not moved & {"page", "badge", "badge-json", "feed"}

    # A record each cycle; a history and the page that draws it as a bucket closes.
    uploads = sum(1 for _, _, uploaded in cycles for path in uploaded if "service-" in path)
    assert uploads / len(cycles) / SERVICES <= 2.5


def test_precompressed_uploads_the_gzipped_bytes_with_their_encoding(site: Site) -> None:
    with s3_server() as s3:
        publish_cycles(site, s3, precompressed=True)
        objects = s3.objects()
    gen = current_generation(site.config.site.output)
    assert gen is not None
    manifest = read_manifest(gen)
    assert objects.keys() == {rel for rel in manifest if publishable(rel)}
    encoded = 0
    for rel, (body, headers) in objects.items():
        plain = (gen / rel).read_bytes()
        if manifest[rel].gz:
            encoded += 1
            assert headers["content-encoding"] == "gzip" and gzip.decompress(body) == plain
            assert body == (gen / f"{rel}.gz").read_bytes()
        else:
            assert "content-encoding" not in headers and body == plain
    assert encoded > SERVICES  # every record at least


def test_a_failed_or_skipped_publish_is_caught_up_by_the_next(site: Site) -> None:
    output = site.config.site.output
    with s3_server() as s3:
        publish_tree(output, s3.remote())
        site.cycle(NOW + timedelta(minutes=1))
        s3.proxy.fail = {routes.service_file("service-0001")}
        with pytest.raises(PublishError, match="failed: rclone copy of the services"):
            publish_tree(output, s3.remote())
        s3.proxy.fail = set()
        site.cycle(NOW + timedelta(minutes=2))  # built, not published
        site.cycle(NOW + timedelta(minutes=3))
        s3.proxy.taken()
        publish_tree(output, s3.remote())
        uploaded = {r.path for r in s3.proxy.taken() if r.method == "PUT"}
        objects = s3.objects()
    assert {rel: body for rel, (body, _) in objects.items()} == tree_bytes(output)
    assert routes.service_file("service-0001") in uploaded
    assert "static/site.css" not in uploaded  # unchanged since the first publish: not sent again

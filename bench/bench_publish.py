"""Publishing at scale: what five normal cycles of a 1,000-service site cost to publish.

    python -m bench publish          # PUBLISH_SITES="1000:1,1000:5,100:1,100:5" to change

For each site (services:minutes between cycles), a simulated site (7 days of
history) is built, published, then run through five normal cycles (one new
result per check, that many minutes apart), each built and
published with ``statusgen publish`` to an S3-compatible server on loopback
(moto in server mode) behind a proxy that counts every request by kind and
the bytes it carries; the same tree is mirrored with rsync after each build.
It is published twice over: as the tree is (the CDN in front compresses), and
``--precompressed`` (files with a .gz copy go up gzipped, with their
Content-Encoding).

Budgets (PASS/FAIL), for 1,000 services a minute apart, per normal cycle,
averaged over the five: at most 2.5 uploads and 0.1 other requests per
service; at most 40 MB uploaded; a month at one cycle a minute under $500 at
S3's list prices; an rsync mirror under 20 MB. The other sites give the
figures of docs/deploy.md. Each is printed beside the figures of the publish before the manifest
was used (issue 33's measurement of that code, on the same kind of site).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from bench.scale_cycle import add_one_result_each
from statusgen.config import load_config
from statusgen.render.build import build
from statusgen.simulate import config_text, simulate
from statusgen.store import Store
from statusgen.timeutil import utcnow
from statusgen.web.publish import publish_tree
from tests.objectstore import S3, by_kind, s3_server

SITES = [
    tuple(int(n) for n in site.split(":"))
    for site in os.environ.get("PUBLISH_SITES", "1000:1,1000:5,100:1,100:5").split(",")
]
BUDGETED = (1000, 1)  # the site the budgets are for: 1,000 services, a cycle a minute
CYCLES = 5
MONTH_MINUTES = 30 * 24 * 60
# List prices per 1,000 requests: S3 Standard (PUT, COPY, POST, LIST; GET, HEAD and the rest) and
# Cloudflare R2 (class A: writes and listings; class B: reads).
S3_WRITE, S3_READ = 0.005, 0.0004
R2_WRITE, R2_READ = 0.0045, 0.00036
WRITES = {"PUT", "POST", "LIST", "COPY"}
UPLOADS_BUDGET, OTHERS_BUDGET, MB_BUDGET, MONTH_BUDGET, RSYNC_BUDGET_MB = 2.5, 0.1, 40.0, 500.0, 20.0
# The publish before the manifest, per normal cycle of a 1,000-service site (issue 33).
BEFORE = {"PUT": 6033, "HEAD": 6046, "LIST": 4057, "MB": 238.0, "s3": 2280.0, "r2": 2050.0, "rsync_mb": "36-50"}


@dataclass
class Tally:
    """What the publishes of the normal cycles sent, one Counter and byte count per cycle."""

    kinds: list[Counter[str]] = field(default_factory=list)
    nbytes: list[int] = field(default_factory=list)

    def add(self, s3: S3) -> None:
        log = s3.proxy.taken()
        self.kinds.append(by_kind(log))
        self.nbytes.append(sum(r.size for r in log))

    def per_cycle(self, kinds: set[str] | None = None) -> float:
        """Requests of these kinds (all when None) in a cycle, on average."""
        return sum(n for k in self.kinds for kind, n in k.items() if kinds is None or kind in kinds) / len(self.kinds)

    def month(self, write: float, read: float, minutes: int) -> float:
        """A month's requests at one cycle every ``minutes``, at these prices per 1,000."""
        per_cycle = sum((write if kind in WRITES else read) * n / 1000 for k in self.kinds for kind, n in k.items())
        return per_cycle / len(self.kinds) * MONTH_MINUTES / minutes

    def mb(self) -> float:
        return sum(self.nbytes) / len(self.nbytes) / 1e6


def verdict(what: str, figure: str, budget: str, ok: bool) -> None:
    print(f"  {what}: {figure} (budget {budget}) {'PASS' if ok else 'FAIL'}", flush=True)


def rsync(source: Path, mirror: Path) -> int:
    """Mirror the served tree with rsync as a remote mirror would (block deltas, not whole files);
    the bytes it sent."""
    done = subprocess.run(
        ["rsync", "-a", "--delete", "--no-whole-file", "--stats", f"{source.resolve()}/", f"{mirror}/"],
        check=True,
        capture_output=True,
        text=True,
    )
    found = re.search(r"Total bytes sent: ([\d,.]+)", done.stdout)
    assert found, done.stdout
    return int(found.group(1).replace(",", "").replace(".", ""))


def describe(name: str, tally: Tally, services: int, minutes: int) -> None:
    kinds = sum(tally.kinds, Counter())
    s3, r2 = tally.month(S3_WRITE, S3_READ, minutes), tally.month(R2_WRITE, R2_READ, minutes)
    print(
        f"    {name}: per cycle {dict(sorted((k, round(n / CYCLES, 1)) for k, n in kinds.items()))}, "
        f"{tally.mb():.1f} MB; a month ${s3:,.0f} at S3, ${r2:,.0f} at R2"
    )
    print(f"      each cycle: {[dict(k) for k in tally.kinds]}, MB {[round(b / 1e6, 1) for b in tally.nbytes]}")


def budgets(name: str, tally: Tally, services: int) -> None:
    uploads = tally.per_cycle({"PUT"}) / services
    others = (tally.per_cycle() - tally.per_cycle({"PUT"})) / services
    s3 = tally.month(S3_WRITE, S3_READ, 1)
    verdict(
        f"{name}: uploads per service per cycle", f"{uploads:.2f}", f"<= {UPLOADS_BUDGET}", uploads <= UPLOADS_BUDGET
    )
    verdict(
        f"{name}: other requests per service per cycle", f"{others:.3f}", f"<= {OTHERS_BUDGET}", others <= OTHERS_BUDGET
    )
    verdict(f"{name}: MB uploaded per cycle", f"{tally.mb():.1f} MB", f"<= {MB_BUDGET:.0f} MB", tally.mb() <= MB_BUDGET)
    verdict(f"{name}: a month at one cycle a minute, S3", f"${s3:,.0f}", f"< ${MONTH_BUDGET:.0f}", s3 < MONTH_BUDGET)


def measure(services: int, minutes: int, work: Path) -> tuple[Tally, Tally, float]:
    """Five normal cycles of a simulated site, each built, published both ways and mirrored; what
    the publishes sent, and the rsync mirror's MB per cycle."""
    t = time.perf_counter()
    now = utcnow()
    simulate(services, 7, work / "sim.db", now)
    (work / "sim.toml").write_text(config_text(services, work / "sim.db", work / "site"), encoding="utf-8")
    config = load_config(work / "sim.toml")
    store = Store(config.site.store)
    build(store, config, now)
    plain, packed, mirrored = Tally(), Tally(), []
    with s3_server("plain") as s3, s3_server("packed") as s3z:
        publish_tree(config.site.output, s3.remote())
        publish_tree(config.site.output, s3z.remote(), precompressed=True)
        rsync(config.site.output, work / "mirror")
        s3.proxy.taken(), s3z.proxy.taken()
        print(
            f"  {services} services, a cycle every {minutes} min: simulated, built, first published in "
            f"{time.perf_counter() - t:.0f} s",
            flush=True,
        )
        for _ in range(CYCLES):
            add_one_result_each(store, config, timedelta(minutes=minutes))
            last = store.last_finished_run()
            assert last is not None and last.finished_at is not None
            build(store, config, last.finished_at + timedelta(seconds=1))
            publish_tree(config.site.output, s3.remote())
            plain.add(s3)
            publish_tree(config.site.output, s3z.remote(), precompressed=True)
            packed.add(s3z)
            mirrored.append(rsync(config.site.output, work / "mirror"))
    store.close()
    return plain, packed, sum(mirrored) / len(mirrored) / 1e6


def main() -> None:
    os.environ.pop("AWS_CA_BUNDLE", None)  # rclone 1.60's S3 client refuses to start with it set
    before = BEFORE
    print(
        f"  before the manifest (issue 33, 1,000 services, a cycle a minute): {before['PUT']} PUT, "
        f"{before['HEAD']} HEAD, {before['LIST']} LIST, {before['MB']:.0f} MB a cycle; ${before['s3']:,.0f} a "
        f"month at S3, ${before['r2']:,.0f} at R2; rsync {before['rsync_mb']} MB a cycle"
    )
    for services, minutes in SITES:
        work = Path(tempfile.mkdtemp(prefix="statusgen-bench-publish-"))
        try:
            plain, packed, rsync_mb = measure(services, minutes, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        describe("as the tree is", plain, services, minutes)
        describe("--precompressed", packed, services, minutes)
        print(f"    rsync mirror: {rsync_mb:.1f} MB a cycle")
        if (services, minutes) == BUDGETED:
            budgets("as the tree is", plain, services)
            budgets("--precompressed", packed, services)
            ok = rsync_mb < RSYNC_BUDGET_MB
            verdict("rsync mirror per cycle", f"{rsync_mb:.1f} MB", f"< {RSYNC_BUDGET_MB:.0f} MB", ok)


if __name__ == "__main__":
    main()

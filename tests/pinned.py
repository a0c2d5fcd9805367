"""The pinned site: a simulated 7-day store, three real cycles on top, built at a fixed time.

``tests/test_pinned_output.py`` builds it and compares every file with the
tree in ``tests/fixtures/pinned/site-7d.tar.xz``, which was first made by the
code before the renderer was rebuilt. It is a change detector: when it fails,
it prints how the built tree differs from the pin (the files added, those
removed, and those changed with their old and new sizes). When an output
change is intended (a new field, a new page), pin the tree again from the new
code::

    .venv/bin/python -m tests.pinned write

which prints the same difference against the pin it replaces. A re-pin's
commit message must list what changed in the tree and why: each file added,
removed or changed (that printout), and the change of code or templates that
made it so. A re-pin is then read as a change, not waved through: a bug that
lands with its own re-pin shows in its commit.

Six services cover what the pages show: one operational with an untrusted
description and home page, one in a major outage (an open incident, a check
URL with a query and a keyword), one slow (degraded, an open incident), one
with a vendor source (a real Statuspage capture), one paused, one in a
maintenance window.
"""

from __future__ import annotations

import io
import re
import sys
import tarfile
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from statusgen.config import load_config
from statusgen.decide.health import RunRecord
from statusgen.decide.reports import run_credits
from statusgen.decide.run import decide_cycle
from statusgen.model import CheckResult, Outcome
from statusgen.render.build import build
from statusgen.simulate import config_text, simulate
from statusgen.store import Cycle, Store
from statusgen.vendors.fetch import FetchResult
from statusgen.vendors.model import VendorRow
from statusgen.vendors.stage import settle

HERE = Path(__file__).resolve().parent
ARCHIVE = HERE / "fixtures" / "pinned" / "site-7d.tar.xz"
SAMPLE = HERE / "fixtures" / "vendors" / "statuspage" / "sendgrid_summary_active_incident_groups.json"
START = datetime(2026, 11, 20, 12, 30, tzinfo=UTC)  # where the simulated history ends
NOW = START + timedelta(minutes=4, seconds=30)  # the build's clock
VENDOR_URL = "https://status.example.com/api/v2/summary.json"
#: What a build writes that is not part of the pinned tree: the manifest and the .gz copies.
UNPINNED = re.compile(r"(^|/)\.manifest\.json$|\.gz$")


def _config_text(db: Path, out: Path) -> str:
    text = config_text(6, db, out)
    text = text.replace(
        'slug = "service-0000"',
        'slug = "service-0000"\ndescription = "Payments <b>&</b> '
        '\\"billing\\""\nurl = "https://example.com/?a=1&b=<2>"',
    )
    text = text.replace('slug = "service-0004"', 'slug = "service-0004"\npaused = true')
    text = re.sub(
        r'(url = "http://127.0.0.1:9/service-0003"\ntimeout = 10)',
        rf'\1\n[services.vendor]\nurl = "{VENDOR_URL}"\ncomponents = ["Partners"]',
        text,
    )
    text = re.sub(
        r'(url = "http://127.0.0.1:9/service-0005"\ntimeout = 10)',
        r"\1\n[[services.maintenance]]\nstart = 2026-11-20T12:00:00Z\nend = 2026-11-20T14:00:00Z\n"
        r'title = "Database <upgrade>"',
        text,
    )
    return text.replace(
        'url = "http://127.0.0.1:9/service-0001"',
        'url = "http://127.0.0.1:9/service-0001?token=x&y=1"\nkeyword = "<ok>"',
    )


def _results(slug: str, at: datetime, n: int) -> CheckResult:
    if slug == "service-0001":
        return CheckResult(slug, 0, at, Outcome.TIMEOUT, None, None, False)
    if slug == "service-0002":
        return CheckResult(slug, 0, at, Outcome.OK, 2500.0 + n, 200, True)
    return CheckResult(slug, 0, at, Outcome.OK, 40.0 + n, 200, False)


def build_pinned_site(work: Path) -> Path:
    """Make the store, run three cycles of decisions on it, build; the output tree."""
    db, out, cfg = work / "sim.db", work / "site", work / "sim.toml"
    cfg.write_text(_config_text(db, out), encoding="utf-8")
    simulate(6, 7, db, START, seed=7)
    config = load_config(cfg)
    store = Store(db)
    try:
        body = SAMPLE.read_bytes()
        for n in range(3):
            at = START + timedelta(minutes=n + 1, seconds=5)
            results = [_results(s.slug, at, n) for s in config.services if not s.paused]
            vendor = config.by_slug["service-0003"].vendor
            assert vendor is not None
            prev = store.vendor_rows().get("service-0003") or VendorRow("service-0003", VENDOR_URL)
            row, obs = settle(prev, vendor, FetchResult(Outcome.OK, 200, body, '"v1"', None, False, 12.0), at)
            d = decide_cycle(config, store.states(), store.open_incidents(), results, at, {"service-0003": obs})
            failed = sum(1 for r in results if not r.up)
            run = RunRecord(0, at, at + timedelta(seconds=2), len(results), failed, 1, 0, 2000.0)
            months = run_credits(d.states, d.results, store.last_finished_run(), at, config.site.interval)
            store.save_cycle(Cycle(run, d.results, d.states, d.incidents, [row], months=months))
        build(store, config, NOW)
    finally:
        store.close()
    return out


def tree_files(root: Path) -> dict[str, bytes]:
    """Every pinned file of a built tree, by path."""
    real = root.resolve()
    found = {p.relative_to(real).as_posix(): p for p in sorted(real.rglob("*")) if p.is_file()}
    return {rel: p.read_bytes() for rel, p in found.items() if not UNPINNED.search(rel)}


def pinned_files() -> dict[str, bytes]:
    """The pinned tree, by path."""
    with tarfile.open(ARCHIVE) as tar:
        return {
            m.name.removeprefix("./"): tar.extractfile(m).read()  # type: ignore[union-attr]
            for m in tar.getmembers()
            if m.isfile()
        }


def difference(pinned: dict[str, bytes], built: dict[str, bytes], changed: Iterable[str]) -> str:
    """How ``built`` differs from ``pinned``: the files added and removed, and ``changed`` (files in
    both whose content differs) with their old and new sizes; one line each, sorted."""
    added, removed = sorted(built.keys() - pinned.keys()), sorted(pinned.keys() - built.keys())
    changes = sorted(changed)
    head = f"the tree against the pin: {len(added)} added, {len(removed)} removed, {len(changes)} changed"
    lines = [f"added    {name} ({len(built[name])} bytes)" for name in added]
    lines += [f"removed  {name} ({len(pinned[name])} bytes)" for name in removed]
    lines += [f"changed  {name} ({len(pinned[name])} -> {len(built[name])} bytes)" for name in changes]
    return "\n".join([head, *lines])


def write(work: Path) -> None:
    """Pin the tree the code on sys.path builds; print how it differs from the pin it replaces
    (every file whose bytes differ), for the re-pin's commit message."""
    files = tree_files(build_pinned_site(work))
    if ARCHIVE.exists():
        old = pinned_files()
        print(difference(old, files, (name for name in old.keys() & files.keys() if old[name] != files[name])))
    ARCHIVE.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(ARCHIVE, "w:xz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime, info.mode = len(data), 0, 0o644
            tar.addfile(info, io.BytesIO(data))
    print(f"pinned {len(files)} files into {ARCHIVE}")


if __name__ == "__main__":
    import tempfile

    if sys.argv[1:] != ["write"]:
        sys.exit("usage: python -m tests.pinned write")
    with tempfile.TemporaryDirectory() as tmp:
        write(Path(tmp))

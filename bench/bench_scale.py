"""History that scales (issue 5): store size, full and cycle builds, memory, the floor.

    python -m bench scale            # 1,000 services (SCALE_SERVICES to change)

Each figure is printed next to its goal. Builds run in a child process, as
`statusgen build` runs them (streamed), so that their peak memory is measured alone.
Beside each build's parts, the CPU time of both its processes (user and system)
is printed: on this shared, noisy machine it moves less than the wall time, so it
tells whether a change made a build cheaper when the times alone cannot.

Full builds write into folders of their own, and nothing is deleted until the end.
On this machine's ext4, creating files in the minute after tens of thousands were
deleted is several times slower (the inode allocator skips recently freed inodes,
``recently_deleted`` in a kernel profile); a build never follows such a deletion,
so the bench keeps it out of the figures and measures it once, on its own line.

Cycle builds are paced as ``statusgen run`` paces them: each starts one run
interval (60 s) after the one before. This VM pages out what nobody touched for
about a minute (DAMON's ``pageout`` scheme: /sys/kernel/mm/damon/admin), so a
cycle reads its store and the previous trees largely from the disk; cycles run
back to back would find them all in memory and measure a machine nobody runs.
Both are printed.

Every timed run (build or floor) starts with the disk flushed (``os.sync``, not
timed), so that it does not pay for writing back what the runs before it left
in the page cache: a full build leaves some 400 MB and 40,000 new files and
folders dirty, and ext4 allocates their blocks (delayed allocation) when it
writes them back, some 30 s later, on the same two cores, while a later build
runs. No build in production follows another that closely: full builds are
rare, and cycles are a minute apart. Here the effect is below the noise: a
``sync`` after a full build takes 0.3-0.5 s, and three rounds of 90- and 7-day
builds with and without it gave the same times (6.3-9.0 s and 3.4-5.9 s).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SERVICES = int(os.environ.get("SCALE_SERVICES", "1000"))
CYCLES = 5
INTERVAL = 60.0          # the simulated site's run interval: cycles start this far apart
REPEATS = 3
PY = sys.executable


def sh(*args: str) -> str:
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def simulate(work: Path, days: int) -> tuple[Path, float]:
    cfg, db = work / f"sim{days}.toml", work / f"sim{days}.db"
    start = time.perf_counter()
    sh(PY, "-m", "statusgen.cli", "simulate", "--services", str(SERVICES), "--days", str(days),
       "--config-out", str(cfg), "--db", str(db), "--output", str(work / f"site{days}"))
    return cfg, time.perf_counter() - start


CHILD = r"""
import dataclasses, json, resource, sys
from pathlib import Path
from statusgen.config import load_config
from statusgen.render.build import build
from statusgen.store import Store
from statusgen.timeutil import utcnow
cfg = load_config(sys.argv[1]); mode = sys.argv[2]
if len(sys.argv) > 3:                      # another output folder
    cfg = dataclasses.replace(cfg, site=dataclasses.replace(cfg.site, output=Path(sys.argv[3])))
store = Store(cfg.site.store)
if mode == "cycle":
    from bench.scale_cycle import add_one_result_each
    add_one_result_each(store, cfg)
start = [resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
r = build(store, cfg, utcnow())
cpu = sum(u.ru_utime + u.ru_stime - (b.ru_utime + b.ru_stime)
          for u, b in zip((resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)), start))
print(json.dumps({"gather": r.gather_ms / 1000, "cpu": cpu, "render": r.render_ms / 1000, "write": r.write_ms / 1000,
                  "build": (r.gather_ms + r.render_ms + r.write_ms) / 1000,
                  "files": r.stats.files, "written": r.stats.written,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "child_maxrss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""

FLOOR = r"""
import json, sys, time
from pathlib import Path
src = Path(sys.argv[1]).resolve(); dst = Path(sys.argv[2])
files = [(p.relative_to(src), p.read_bytes()) for p in src.rglob("*") if p.is_file() and not p.name.endswith(".gz")
         and p.name != ".manifest.json"]
t = time.perf_counter()
for rel, blob in files:
    out = dst / rel; out.parent.mkdir(parents=True, exist_ok=True); out.write_bytes(blob)
print(json.dumps({"floor": time.perf_counter() - t, "bytes": sum(len(b) for _, b in files)}))
"""


def flushed() -> None:
    """Write back what earlier runs left dirty, so that the next timed run does not pay for it."""
    os.sync()


def floor(site: Path, work: Path) -> dict[str, float]:
    """Writing the same bytes with no computation (no rendering, comparing or gzip); best of 2."""
    runs = []
    for n in range(2):
        flushed()
        runs.append(json.loads(sh(PY, "-c", FLOOR, str(site), str(work / f"floor{n}")).strip().splitlines()[-1]))
    return min(runs, key=lambda r: r["floor"])


def build(cfg: Path, mode: str, output: Path | None = None) -> dict[str, float]:
    """One build in a child process, the disk flushed first; ``output``: another (new) folder, so
    that every file is written."""
    flushed()
    out = sh(PY, "-c", CHILD, str(cfg), mode, *([str(output)] if output else []))
    return json.loads(out.strip().splitlines()[-1])


def drop_output(output: Path) -> None:
    """Remove a built tree (its link and its generations)."""
    shutil.rmtree(output, ignore_errors=True)
    output.unlink(missing_ok=True)
    shutil.rmtree(output.parent / f"{output.name}.gens", ignore_errors=True)


def paced(cfg: Path, count: int) -> list[dict[str, float]]:
    """``count`` cycle builds, each starting one run interval after the one before."""
    runs: list[dict[str, float]] = []
    start = time.monotonic()
    for n in range(count):
        time.sleep(max(0.0, start + n * INTERVAL - time.monotonic()))
        runs.append(build(cfg, "cycle"))
    return runs


def parts(r: dict[str, float]) -> str:
    return (f"store {r['gather']:.2f} s, render {r['render']:.2f} s, writing {r['write']:.2f} s; "
            f"{r['written']} of {r['files']} files written; {r['cpu']:.2f} CPU-s in both processes")


def line(name: str, value: str, goal: str, ok: bool) -> None:
    print(f"  {name:<44} {value:>22}   goal {goal:<16} {'met' if ok else 'NOT MET'}", flush=True)


def on_tmpfs(work: Path, cfg90: Path, cfg7: Path) -> None:
    """The same builds with the output tree in memory (/dev/shm): what the computation costs
    without this disk's cost of creating files (the store stays where it was)."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        print("  (no writable /dev/shm: the builds with the tree in memory are left out)")
        return
    mem = Path(tempfile.mkdtemp(prefix="statusgen-scale-", dir=shm))
    try:
        cfg, cfg7m = work / "sim90-tmpfs.toml", work / "sim7-tmpfs.toml"
        for src, dst, days in ((cfg90, cfg, 90), (cfg7, cfg7m, 7)):
            dst.write_text(src.read_text(encoding="utf-8").replace(str(work / f"site{days}"), str(mem / f"site{days}")),
                           encoding="utf-8")
        full = build(cfg, "full")
        full7 = build(cfg7m, "full")
        build(cfg, "cycle")
        cycles = sorted((build(cfg, "cycle") for _ in range(CYCLES)), key=lambda c: c["build"])
        fl = floor(mem / "site90", mem)
        print(f"  with the output tree on tmpfs: full build {full['build']:.2f} s (floor {fl['floor']:.2f} s, "
              f"{full['build'] / fl['floor']:.1f}x); cycle build worst {cycles[-1]['build']:.2f} s, "
              f"median {cycles[len(cycles) // 2]['build']:.2f} s; full build 90 days / 7 days "
              f"{full['build'] / full7['build']:.2f}x ({full7['build']:.2f} s)\n    (full: {parts(full)}; "
              f"worst cycle: {parts(cycles[-1])})")
    finally:
        shutil.rmtree(mem, ignore_errors=True)


def store_mb(db: Path) -> float:
    """The store's size on disk: the database and its write-ahead log."""
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists()) / 1e6


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="statusgen-scale-"))
    try:
        print(f"{SERVICES} services, one check a minute; work dir {work}", flush=True)
        cfg90, sim90 = simulate(work, 90)
        cfg7, sim7 = simulate(work, 7)
        simulated = store_mb(work / "sim90.db")
        print(f"  simulate: 90 days in {sim90:.1f} s, 7 days in {sim7:.1f} s")
        cold = build(cfg90, "full")
        cold7 = build(cfg7, "full")
        fulls: dict[int, list[dict[str, float]]] = {90: [], 7: []}
        for n in range(REPEATS):                   # interleaved, best of each: this machine is shared
            for days, cfg in ((90, cfg90), (7, cfg7)):
                fulls[days].append(build(cfg, "full", work / f"full{days}-{n}"))
        full, full7 = (min(fulls[d], key=lambda r: r["build"]) for d in (90, 7))
        first_cycle = build(cfg90, "cycle")        # fills the second generation: every file written
        warm = sorted(build(cfg90, "cycle")["build"] for _ in range(CYCLES))
        time.sleep(INTERVAL)
        cycles = paced(cfg90, CYCLES)
        size = store_mb(work / "sim90.db")        # with the history points builds keep, and the cycles' results
        fl = floor(work / "site90", work)
        drop_output(work / "full90-0")             # last: a full build right after deleting a tree
        after_delete = build(cfg90, "full", work / "full90-0")
        line("store size, 90 days, after the builds and cycles", f"{size:.0f} MB", "< 1000 MB", size < 1000)
        print(f"    (as simulate left it, before any build kept history points: {simulated:.0f} MB)")
        print(f"  first build of a store (no kept history points yet; every file written): {cold['build']:.2f} s"
              f"\n    ({parts(cold)})")
        line(f"full build, 90 days (every file written; best of {REPEATS})", f"{full['build']:.2f} s", "< 10 s",
             full["build"] < 10)
        print(f"    ({parts(full)}; {fl['bytes'] / 1e6:.0f} MB without the .gz copies)")
        print(f"    (the same build right after deleting a tree of that size: {after_delete['build']:.2f} s; "
              f"{parts(after_delete)})")
        times = sorted(c["build"] for c in cycles)
        worst = max(cycles, key=lambda c: c["build"])
        line(f"cycle build, worst of {CYCLES} cycles {INTERVAL:.0f} s apart", f"{times[-1]:.2f} s", "< 2 s",
             times[-1] < 2)
        print(f"    (median {times[len(times) // 2]:.2f} s; worst: {parts(worst)})")
        print(f"    (the same cycles back to back, everything still in memory: worst {warm[-1]:.2f} s, "
              f"median {warm[len(warm) // 2]:.2f} s)")
        print(f"    (the first cycle after a full build fills the second generation: {first_cycle['build']:.2f} s)")
        runs = [cold, cold7, *fulls[90], *fulls[7], after_delete, first_cycle, *cycles]
        peak = max(max(r["maxrss_mb"], r["child_maxrss_mb"]) for r in runs)   # the forked renderer
        line("peak memory of a build (either process)", f"{peak:.0f} MB", "< 500 MB", peak < 500)
        ratio = full["build"] / full7["build"]
        line(f"full build 90 days / 7 days (best of {REPEATS} each)", f"{ratio:.2f}x ({full7['build']:.2f} s)",
             "<= 1.3x", ratio <= 1.3)
        print(f"    (CPU of those builds, both processes: 90 days {full['cpu']:.2f} s / 7 days {full7['cpu']:.2f} s = "
              f"{full['cpu'] / full7['cpu']:.2f}x)")
        print(f"    (first builds: 90 days {cold['build']:.2f} s / 7 days {cold7['build']:.2f} s = "
              f"{cold['build'] / cold7['build']:.2f}x)")
        print(f"  full build / floor (same bytes written, no computation): {full['build'] / fl['floor']:.1f}x "
              f"(floor {fl['floor']:.2f} s)")
        on_tmpfs(work, cfg90, cfg7)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"  bench peak RSS of children: {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()

"""History that scales (issue 5): store size, full and cycle builds, memory, the floor.

    python -m bench scale            # 1,000 services (SCALE_SERVICES to change)

Each figure is printed next to its goal. Builds run in a child process, as
`statusgen build` runs them (streamed), so that their peak memory is measured alone.
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
import json, resource, sys, time
from statusgen.config import load_config
from statusgen.render import Timed, render_stream
from statusgen.sitedata import gather
from statusgen.store import Store
from statusgen.timeutil import utcnow
from statusgen.tree import write_tree
cfg = load_config(sys.argv[1]); mode = sys.argv[2]
store = Store(cfg.site.store)
if mode == "cycle":
    from bench.scale_cycle import add_one_result_each
    add_one_result_each(store, cfg)
t0 = time.perf_counter(); data = gather(store, cfg, utcnow()); t1 = time.perf_counter()
stream = Timed(render_stream(data))
stats = write_tree(cfg.site.output, stream); t3 = time.perf_counter()
print(json.dumps({"gather": t1 - t0, "render": stream.seconds, "write": t3 - t1 - stream.seconds, "build": t3 - t0,
                  "files": stats.files, "written": stats.written,
                  "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
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


def floor(site: Path, work: Path) -> dict[str, float]:
    """Writing the same bytes with no computation (no rendering, hashing or gzip)."""
    return json.loads(sh(PY, "-c", FLOOR, str(site), str(work / "floor")).strip().splitlines()[-1])


def build(cfg: Path, mode: str) -> dict[str, float]:
    out = sh(PY, "-c", CHILD, str(cfg), mode)
    return json.loads(out.strip().splitlines()[-1])


def line(name: str, value: str, goal: str, ok: bool) -> None:
    print(f"  {name:<44} {value:>22}   goal {goal:<16} {'met' if ok else 'NOT MET'}", flush=True)


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="statusgen-scale-"))
    try:
        print(f"{SERVICES} services, one check a minute; work dir {work}", flush=True)
        cfg90, sim90 = simulate(work, 90)
        cfg7, sim7 = simulate(work, 7)
        size = (work / "sim90.db").stat().st_size / 1e6
        print(f"  simulate: 90 days in {sim90:.1f} s, 7 days in {sim7:.1f} s")
        line("store size, 90 days", f"{size:.0f} MB", "< 1000 MB", size < 1000)
        full = build(cfg90, "full")
        full7 = build(cfg7, "full")
        cycle = build(cfg90, "cycle")
        line("full build, 90 days", f"{full['build']:.2f} s", "< 10 s", full["build"] < 10)
        fl = floor(work / "site90", work)
        print(f"    (gather {full['gather']:.2f} s, render {full['render']:.2f} s, write {full['write']:.2f} s; "
              f"{full['files']} files, {fl['bytes'] / 1e6:.0f} MB without the .gz copies)")
        line("cycle build (one new result per check)", f"{cycle['build']:.2f} s", "< 2 s", cycle["build"] < 2)
        print(f"    (gather {cycle['gather']:.2f} s, render {cycle['render']:.2f} s, write {cycle['write']:.2f} s; "
              f"{cycle['written']} of {cycle['files']} files written)")
        peak = max(full["maxrss_mb"], cycle["maxrss_mb"])
        line("peak memory of a build", f"{peak:.0f} MB", "< 500 MB", peak < 500)
        ratio = full["build"] / full7["build"]
        line("full build 90 days / 7 days", f"{ratio:.2f}x ({full7['build']:.2f} s)", "<= 1.3x", ratio <= 1.3)
        print(f"  full build / floor (same bytes written, no computation): {full['build'] / fl['floor']:.1f}x "
              f"(floor {fl['floor']:.2f} s)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"  bench peak RSS of children: {resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024:.0f} MB")


if __name__ == "__main__":
    main()

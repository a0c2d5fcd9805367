"""Growth: a whole ``statusgen run`` of 10,000 services with 7 days of history, checked every 5 minutes.

    python -m bench growth           # 10,000 services (GROWTH_SERVICES to change)

The store is simulated (``statusgen simulate --interval 300``), its tree built once (as a site
that has run before has it), and then one ``statusgen run`` is timed as cron or a timer starts
it: it probes 10,000 checks against a loopback target that answers at once, their starts spread
over 60 s (``site.spread = 60``), decides, and builds. Budgets (PASS/FAIL): the run <= 120 s, its
peak memory (the process or a render worker) <= 1 GB; the store's size is printed.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from multiprocessing.connection import Connection
from multiprocessing.synchronize import Event
from pathlib import Path

SERVICES = int(os.environ.get("GROWTH_SERVICES", "10000"))
DAYS = 7
INTERVAL = 300
SPREAD_S = 60
RUN_BUDGET_S, MEMORY_BUDGET_MB = 120.0, 1000
PY = sys.executable

#: Runs a command and prints its wall time and the peak memory of it and its descendants.
MEASURED = r"""
import json, resource, subprocess, sys, time
t = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
print(json.dumps({"seconds": time.perf_counter() - t, "code": done.returncode, "stderr": done.stderr[-2000:],
                  "rss_mb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""

ANSWER = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(ANSWER)
        await writer.drain()
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
        pass
    finally:
        writer.close()


async def _serve(ready: Connection, stop: Event) -> None:
    server = await asyncio.start_server(_answer, "127.0.0.1", 0, backlog=4096)
    ready.send(server.sockets[0].getsockname()[1])
    while not stop.is_set():
        await asyncio.sleep(0.2)
    server.close()


def serve_target(ready: Connection, stop: Event) -> None:
    """The targets, in a process of their own: every path answers 200 at once."""
    asyncio.run(_serve(ready, stop))


def measured(*command: str) -> dict[str, float | int | str]:
    out = subprocess.run([PY, "-c", MEASURED, *command], check=True, capture_output=True, text=True).stdout
    result: dict[str, float | int | str] = json.loads(out.strip().splitlines()[-1])
    if result["code"] != 0:
        raise SystemExit(f"{' '.join(command)} exited {result['code']}: {result['stderr']}")
    return result


def verdict(name: str, value: str, budget: str, ok: bool) -> None:
    print(f"  {name:<56} {value:>10}   budget {budget:<9} {'PASS' if ok else 'FAIL'}", flush=True)


def store_mb(db: Path) -> float:
    return sum(p.stat().st_size for p in (db, db.with_name(db.name + "-wal")) if p.exists()) / 1e6


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="statusgen-growth-"))
    ready, told = multiprocessing.Pipe(duplex=False)
    stop = multiprocessing.Event()
    target = multiprocessing.Process(target=serve_target, args=(told, stop), daemon=True)
    target.start()
    try:
        port = ready.recv()
        cfg, db = work / "growth.toml", work / "growth.db"
        print(f"{SERVICES} services x {DAYS} days, one check every {INTERVAL} s; {os.cpu_count()} cores; {work}")
        t = time.perf_counter()
        subprocess.run(
            [PY, "-m", "statusgen.cli", "simulate", "--services", str(SERVICES), "--days", str(DAYS)]
            + ["--interval", str(INTERVAL), "--config-out", str(cfg), "--db", str(db), "--output", str(work / "site")],
            check=True,
            capture_output=True,
        )
        text = cfg.read_text().replace("http://127.0.0.1:9/", f"http://127.0.0.1:{port}/")
        cfg.write_text(re.sub(r"(?m)^interval = .*$", f"\\g<0>\nspread = {SPREAD_S}", text, count=1))
        print(f"  simulate: {time.perf_counter() - t:.0f} s; store {store_mb(db):.0f} MB", flush=True)
        first = measured(PY, "-m", "statusgen.cli", "build", "--config", str(cfg))
        seconds, mb = first["seconds"], first["rss_mb"]
        print(f"  the tree built once, as a site that ran before has it: {seconds:.1f} s, {mb:.0f} MB")
        os.sync()
        run = measured(PY, "-m", "statusgen.cli", "run", "--config", str(cfg))
        verdict(
            f"statusgen run: {SERVICES:,} checks spread over {SPREAD_S} s, decide, build",
            f"{run['seconds']:.1f} s",
            f"<= {RUN_BUDGET_S:.0f} s",
            float(run["seconds"]) <= RUN_BUDGET_S,
        )
        verdict(
            "peak memory of the run (its process or a render worker)",
            f"{run['rss_mb']:.0f} MB",
            f"<= {MEMORY_BUDGET_MB} MB",
            float(run["rss_mb"]) <= MEMORY_BUDGET_MB,
        )
        last = [line for line in str(run["stderr"]).splitlines() if line.strip()][-3:]
        print("  the run said, last: " + " | ".join(last))
        print(f"  store after the run: {store_mb(db):.0f} MB")
    finally:
        stop.set()
        target.join(timeout=5)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

"""Run every benchmark module (bench/bench_*.py), or those named: python -m bench [NAME ...]."""

from __future__ import annotations

import importlib
import pkgutil
import sys
import time
from pathlib import Path


def main(argv: list[str]) -> int:
    names = sorted(m.name for m in pkgutil.iter_modules([str(Path(__file__).parent)]) if m.name.startswith("bench_"))
    chosen = [n for n in names if not argv or n in argv or n.removeprefix("bench_") in argv]
    for name in chosen:
        print(f"\n=== {name} ===", flush=True)
        start = time.perf_counter()
        importlib.import_module(f"bench.{name}").main()
        print(f"({name} took {time.perf_counter() - start:.1f} s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

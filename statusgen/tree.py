"""Write: the output tree, swapped into place atomically.

The output path (``site/`` by default) is a symbolic link to a generation
directory in ``<output>.gens/``. A build writes a new generation, then points
the link at it with one rename, so a reader (nginx, the preview server, a
mirror) never sees a half-written tree.

Files whose bytes did not change are hard-linked from the previous generation:
same inode, same mtime, so nginx keeps its ETag (mtime + size). A changed
file gets an mtime in a later second than its previous version, so a change
of the same size within one second still changes nginx's ETag. Compressible
files get a ``.gz`` copy (for gzip_static) written and dated with them.
The previous generation is kept for readers still using it; older ones go.
"""

from __future__ import annotations

import gzip
import hashlib
import os
import shutil
import threading
import time
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import orjson

from .errors import RenderError

MANIFEST = ".manifest.json"
GZIP_SUFFIXES = (".json", ".xml", ".html", ".css", ".js", ".svg", ".txt")
GZIP_MIN_BYTES = 256
GZIP_LEVEL = 4        # 1.6x faster than 6 for 3% more bytes on our JSON and pages
WORKERS = 4


@dataclass(frozen=True)
class WriteStats:
    files: int
    written: int
    unchanged: int
    bytes_written: int
    generation: str


def digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def gens_dir(output: Path) -> Path:
    return output.parent / (output.name + ".gens")


def current_generation(output: Path) -> Path | None:
    if output.is_symlink():
        target = output.resolve()
        return target if target.is_dir() else None
    return output if output.is_dir() else None


def _read_manifest(gen: Path | None) -> dict[str, list]:  # type: ignore[type-arg]
    if gen is None:
        return {}
    try:
        return orjson.loads((gen / MANIFEST).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}


def _mtime_after(previous: list | None) -> int:  # type: ignore[type-arg]
    """A whole-second mtime later than the previous version's, and not before now."""
    now = int(time.time())
    return max(now, previous[2] + 1) if previous else now


def _write_one(new: Path, rel: str, data: bytes, mtime: int) -> int:
    path = new / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (mtime, mtime))
    written = len(data)
    if rel.endswith(GZIP_SUFFIXES) and len(data) >= GZIP_MIN_BYTES:
        gz = path.with_name(path.name + ".gz")
        gz.write_bytes(gzip.compress(data, compresslevel=GZIP_LEVEL, mtime=0))
        os.utime(gz, (mtime, mtime))
    return written


def _link_one(prev: Path, new: Path, rel: str) -> None:
    dest = new / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    os.link(prev / rel, dest)
    gz = prev / (rel + ".gz")
    if gz.exists():
        os.link(gz, new / (rel + ".gz"))


def _place(new: Path, prev: Path | None, old: dict[str, list], rel: str, data: bytes) -> tuple[list, bool]:  # type: ignore[type-arg]
    """Link ``rel`` from the previous generation when its bytes are the same, else write it."""
    h, before = digest(data), old.get(rel)
    if prev is not None and before and before[1] == h and (prev / rel).exists():
        _link_one(prev, new, rel)
        return before, False
    mtime = _mtime_after(before)
    _write_one(new, rel, data, mtime)
    return [len(data), h, mtime], True


def _populate(new: Path, prev: Path | None, files: Iterable[tuple[str, bytes]]
              ) -> tuple[dict[str, list], int, int]:  # type: ignore[type-arg]
    """Place every file, on a few threads (hashing, gzip and file I/O release the GIL).

    ``files`` may be a generator: at most WORKERS * 8 files are held at once.
    """
    old = _read_manifest(prev)
    manifest: dict[str, list] = {}  # type: ignore[type-arg]
    written = nbytes = 0
    slots = threading.BoundedSemaphore(WORKERS * 8)
    with ThreadPoolExecutor(WORKERS) as pool:
        pending = []
        for rel, data in files:
            slots.acquire()
            job = pool.submit(_place, new, prev, old, rel, data)
            job.add_done_callback(lambda _: slots.release())
            pending.append((rel, job))
        for rel, job in pending:
            entry, changed = job.result()
            manifest[rel] = entry
            written += changed
            nbytes += entry[0] if changed else 0
    return manifest, written, nbytes


def _swap(output: Path, new: Path) -> None:
    """Point ``output`` at ``new`` with one rename (migrating a plain directory once)."""
    if output.exists() and not output.is_symlink():
        legacy = gens_dir(output) / f"legacy-{time.time_ns()}"
        os.replace(output, legacy)
    tmp = output.parent / f".{output.name}.swap-{os.getpid()}"
    if tmp.is_symlink():
        tmp.unlink()
    os.symlink(os.path.relpath(new, output.parent), tmp)
    os.replace(tmp, output)


def _prune(output: Path, keep: set[Path]) -> None:
    """Remove old generations, and what a killed run left behind (partial generations, swap links)."""
    for gen in gens_dir(output).iterdir():
        if gen.resolve() not in keep:
            shutil.rmtree(gen, ignore_errors=True)
    for link in output.parent.glob(f".{output.name}.swap-*"):
        if link.is_symlink():
            link.unlink(missing_ok=True)


def write_tree(output: Path, files: dict[str, bytes] | Iterable[tuple[str, bytes]]) -> WriteStats:
    """Write ``files`` (tree path -> bytes, or a stream of such pairs) as a new generation and swap it in."""
    prev = current_generation(output)
    new = gens_dir(output) / f"g{time.time_ns()}"
    try:
        new.mkdir(parents=True)
        manifest, written, nbytes = _populate(new, prev, files.items() if isinstance(files, dict) else files)
        (new / MANIFEST).write_bytes(orjson.dumps(manifest))
        _swap(output, new)
    except OSError as exc:
        shutil.rmtree(new, ignore_errors=True)
        raise RenderError(f"{output}: cannot write the output tree ({exc.strerror or exc}); "
                          f"the last complete site is left in place. Free space or fix permissions "
                          f"on {output.parent}.") from None
    _prune(output, {new.resolve()} | ({prev.resolve()} if prev else set()))
    return WriteStats(len(manifest), written, len(manifest) - written, nbytes, new.name)

"""Write: the output tree, swapped into place atomically.

The output path (``site/`` by default) is a symbolic link to a generation
directory in ``<output>.gens/``. A build writes a new generation, then points
the link at it with one rename, so a reader (nginx, the preview server, a
mirror) never sees a half-written tree.

A new generation starts as hard links to every file of the previous one,
made on a thread of its own while the build renders (kernel work, overlapped
with the Python work). A file whose bytes changed is written beside its link
and renamed over it, so the previous generation's inode is never touched.
Unchanged files therefore keep their inode and mtime, and nginx its ETag
(mtime + size). A changed file gets an mtime in a later second than its
previous version, so a change of the same size within one second still
changes nginx's ETag. Compressible files get a ``.gz`` copy (for
gzip_static) written and dated with them.

A file can be given without bytes, as ``KEEP`` with the key of its inputs:
the renderer saw that the inputs are those of the previous generation's file
(its key is in the manifest) and skipped rendering it. Should that file be
missing from the previous generation, ``StaleTree`` asks for a build without
keys. The previous generation is kept for readers still using it; older
ones go.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import struct
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Union

import orjson

from .errors import RenderError

MANIFEST = ".manifest.json"
GZIP_SUFFIXES = (".json", ".xml", ".html", ".css", ".js", ".svg", ".txt")
GZIP_MIN_BYTES = 256
GZIP_LEVEL = 2        # 1.4x faster than 4 (286 against 198 MB/s on our JSON) for 11% more bytes
KEEP = None           # a file's bytes, when the previous generation's file is kept unchanged

# A file of the tree: (path, bytes) or (path, bytes or KEEP, key of its inputs).
Item = Union[tuple[str, bytes], tuple[str, Union[bytes, None], Union[str, None]]]


class StaleTree(Exception):
    """A file to keep is missing from the previous generation: build again without keys."""


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


def _gzip(data: bytes) -> bytes:
    """A gzip member with no name and mtime 0 (the same bytes for the same input)."""
    z = zlib.compressobj(GZIP_LEVEL, zlib.DEFLATED, 31)
    return z.compress(data) + z.flush()


def _mkdirs(path: str, made: set[str]) -> None:
    if path not in made:
        os.makedirs(path, exist_ok=True)
        made.add(path)


class _Linker(threading.Thread):
    """Hard-links every file of the previous generation into the new one (not the manifest)."""

    def __init__(self, prev: Path | None, new: Path):
        super().__init__(name="statusgen-linker", daemon=True)
        self.prev, self.new = prev, new
        self.linked: set[str] = set()
        self.error: OSError | None = None

    def run(self) -> None:
        if self.prev is None:
            return
        src, dst = str(self.prev), str(self.new)
        made: set[str] = set()
        try:
            for root, _dirs, names in os.walk(src):
                rel_root = root[len(src) + 1:]
                target = os.path.join(dst, rel_root) if rel_root else dst
                _mkdirs(target, made)
                for name in names:
                    rel = f"{rel_root}/{name}" if rel_root else name
                    if rel == MANIFEST:
                        continue
                    try:
                        os.link(f"{root}/{name}", f"{target}/{name}")
                    except FileExistsError:     # already written anew by the build
                        continue
                    self.linked.add(rel)
        except OSError as exc:
            self.error = exc


class _Placer:
    """In the writer process: links the previous generation and places each file it is sent."""

    def __init__(self, prev: Path | None, new: Path, old: dict[str, list]):  # type: ignore[type-arg]
        self.prev, self.new, self.old = str(prev), new, old
        self.manifest: dict[str, list] = {}  # type: ignore[type-arg]
        self._made: set[str] = set()
        self._kept: list[str] = []
        self.written = self.nbytes = 0
        self._linker = _Linker(prev, new)
        self._linker.start()

    def keep(self, rel: str, key: str | None) -> None:
        before = self.old.get(rel)
        if before is None:
            raise StaleTree(f"{rel}: nothing to keep in the previous generation")
        self.manifest[rel] = [*before[:4], key] if len(before) > 3 else [*before, _had_gz(rel, before), key]
        self._kept.append(rel)

    def place(self, rel: str, data: bytes, key: str | None) -> None:
        """Keep ``rel`` as linked from the previous generation when its bytes are the same, else write it."""
        h, before = digest(data), self.old.get(rel)
        gz = rel.endswith(GZIP_SUFFIXES) and len(data) >= GZIP_MIN_BYTES
        if before and before[1] == h and (len(before) < 4 or before[3] == int(gz)) \
                and os.path.exists(os.path.join(self.prev, rel)):       # the linker links it
            self.manifest[rel] = [before[0], h, before[2], int(gz), key]
            self._kept.append(rel)
            return
        mtime = max(int(time.time()), before[2] + 1) if before else int(time.time())
        path = os.path.join(self.new, rel)
        _mkdirs(os.path.dirname(path), self._made)
        _replace(path, data, mtime)
        if gz:
            _replace(path + ".gz", _gzip(data), mtime)
        self.manifest[rel] = [len(data), h, mtime, int(gz), key]
        self.written += 1
        self.nbytes += len(data)

    def finish(self) -> tuple[int, int, int]:
        """Check what was kept, drop what is no longer rendered, write the manifest: (files, written, bytes)."""
        linker = self._linker
        linker.join()
        if linker.error is not None:
            raise linker.error
        missing = [rel for rel in self._kept if rel not in linker.linked]
        if missing:
            raise StaleTree(f"{len(missing)} files to keep are missing from the previous generation, "
                            f"for example {missing[0]}")
        wanted = set(self.manifest) | {rel + ".gz" for rel, e in self.manifest.items() if e[3]}
        for rel in linker.linked - wanted:          # no longer rendered, or no longer compressed
            os.unlink(os.path.join(self.new, rel))
        (self.new / MANIFEST).write_bytes(orjson.dumps(self.manifest))
        return len(self.manifest), self.written, self.nbytes

    def abandon(self) -> None:
        self._linker.join()


def _read_exact(stream: BinaryIO, n: int) -> bytes:
    data = stream.read(n)
    if len(data) != n:
        raise EOFError
    return data


def _writer_main(prev: str, new: str) -> int:
    """The writer process (``python -m statusgen.tree PREV NEW``): reads the files on stdin,
    places them, and reports on stdout as one JSON line.

    Rendering is Python work that holds the GIL; hashing, gzip and file I/O here run
    on the other core, with no GIL to wait for between system calls. A message is a
    header (8 bytes: header and body lengths), then [path, key, keep] as JSON, then the
    body; a header of lengths 0 ends the stream.
    """
    stdin, out = sys.stdin.buffer, sys.stdout
    placer = None
    try:
        old = _read_manifest(Path(prev) if prev else None)
        placer = _Placer(Path(prev) if prev else None, Path(new), old)
        while True:
            hlen, blen = _FRAME.unpack(_read_exact(stdin, _FRAME.size))
            if hlen == 0:
                break
            rel, key, keep = orjson.loads(_read_exact(stdin, hlen))
            if keep:
                placer.keep(rel, key)
            else:
                placer.place(rel, _read_exact(stdin, blen), key)
        report: list[object] = ["ok", *placer.finish()]
    except StaleTree as exc:
        report = ["stale", str(exc)]
    except OSError as exc:
        report = ["oserror", exc.strerror or str(exc)]
    except EOFError:          # the build stopped: the next run prunes the partial generation
        return 1
    finally:
        if placer is not None:
            placer.abandon()
    out.write(orjson.dumps(report).decode() + "\n")
    out.flush()
    return 0


_FRAME = struct.Struct("<II")


def _child_env() -> dict[str, str]:
    """The environment of the writer process: ours, with this package importable."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


class TreeWriter:
    """One new generation, written by a process of its own, then swapped in.

        with TreeWriter(output) as w:      # the writer process starts linking at once
            w.write(stream)                # a stream of Items; w.previous_keys for the renderer
        stats = w.stats                    # swapped in when the block ends without error
    """

    def __init__(self, output: Path):
        self.output = output
        self.prev = current_generation(output)
        self.old = _read_manifest(self.prev)
        self.new = gens_dir(output) / f"g{time.time_ns()}"
        self.stats: WriteStats | None = None
        try:
            self.new.mkdir(parents=True)
        except OSError as exc:
            raise self._failure(exc.strerror or str(exc)) from None
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "statusgen.tree", str(self.prev.resolve()) if self.prev else "",
             str(self.new.resolve())], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_child_env())
        self._pipe = self._proc.stdin
        assert self._pipe is not None

    @property
    def previous_keys(self) -> Mapping[str, str]:
        """Path -> key of the inputs the previous generation's file was made from."""
        return {rel: e[4] for rel, e in self.old.items() if len(e) > 4 and e[4]}

    def __enter__(self) -> TreeWriter:
        return self

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if exc is not None:
            self._proc.kill()
            self._proc.communicate()
            shutil.rmtree(self.new, ignore_errors=True)
            return
        try:
            self._pipe.write(_FRAME.pack(0, 0))
            self._pipe.flush()
        except OSError:
            pass          # the writer already stopped on an error: its report is waiting
        out, _ = self._proc.communicate()
        try:
            report = orjson.loads(out.splitlines()[-1])
        except (IndexError, orjson.JSONDecodeError):
            report = ["oserror", f"the writer process ended with status {self._proc.returncode}"]
        if report[0] != "ok":
            shutil.rmtree(self.new, ignore_errors=True)
            if report[0] == "stale":
                raise StaleTree(report[1])
            raise self._failure(report[1])
        files, written, nbytes = report[1:]
        try:
            _swap(self.output, self.new)
        except OSError as exc:
            shutil.rmtree(self.new, ignore_errors=True)
            raise self._failure(exc.strerror or str(exc)) from None
        _prune(self.output, {self.new.resolve()} | ({self.prev.resolve()} if self.prev else set()))
        self.stats = WriteStats(files, written, files - written, nbytes, self.new.name)

    def _failure(self, why: str) -> RenderError:
        return RenderError(f"{self.output}: cannot write the output tree ({why}); "
                           f"the last complete site is left in place. Free space or fix permissions "
                           f"on {self.output.parent}.")

    def write(self, files: Mapping[str, bytes] | Iterable[Item]) -> None:
        """Send every file to the writer process (the pipe holds a few; the writer keeps none)."""
        items = files.items() if isinstance(files, Mapping) else files
        write = self._pipe.write
        try:
            for item in items:
                rel, data, key = item if len(item) == 3 else (item[0], item[1], None)  # type: ignore[misc]
                header = orjson.dumps([rel, key, data is KEEP])
                write(_FRAME.pack(len(header), 0 if data is KEEP else len(data)))
                write(header)
                if data is not KEEP:
                    write(data)
        except BrokenPipeError:
            pass          # the writer stopped on an error: __exit__ reports it


def _had_gz(rel: str, entry: list) -> int:  # type: ignore[type-arg]
    """Whether a file of an older manifest (without the gzip flag) has a .gz copy."""
    return int(rel.endswith(GZIP_SUFFIXES) and entry[0] >= GZIP_MIN_BYTES)


def _replace(path: str, data: bytes, mtime: int) -> None:
    """Write ``path`` beside itself and rename it into place (never into a linked inode)."""
    tmp = path + ".~new"
    with open(tmp, "wb") as f:
        f.write(data)
    os.utime(tmp, (mtime, mtime))
    os.replace(tmp, path)


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


def write_tree(output: Path, files: Mapping[str, bytes] | Iterable[Item]) -> WriteStats:
    """Write ``files`` (tree path -> bytes, or a stream of Items) as a new generation and swap it in."""
    with TreeWriter(output) as writer:
        writer.write(files)
    assert writer.stats is not None
    return writer.stats


if __name__ == "__main__":
    sys.exit(_writer_main(sys.argv[1], sys.argv[2]))

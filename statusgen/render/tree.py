"""Write: the output tree, swapped into place atomically.

The output path (``site/`` by default) is a symbolic link to a generation
directory in ``<output>.gens/``. There are two generations: the one served,
and the one before it. A build rewrites the one before, then points the link
at it with one rename, so a reader (nginx, the preview server, a mirror)
never sees a half-written tree; the generation it leaves stays complete for
readers still using it, until the next build rewrites it in turn.

The files are placed as they are rendered, by the process rendering them
(``TreeWriter.write``); a forked process rendering a share of the services
places its own into the same generation and hands back what it placed
(``TreeWriter.place_share``, ``absorb``). Both cores then share the file
system's work (the kernel's cost of new files and pages, most of a full
build's writing), and no file's bytes cross a pipe. (A writer process of its
own, fed on pipes, was the first design: the 230 MB a cycle sends cost both
ends copies and framing, and one process did every build's writing.)

Rewriting in place is what keeps a build cheap on disk: a file the
generation already holds as wanted (same size, mtime, .gz copy) is not
touched, and a changed one is written over its old bytes (creating a new
inode for each changed file, and hard-linking the rest, cost several times
more on ext4). A changed file gets an mtime in a later second than its
previous version; an unchanged one keeps its mtime in both generations; so
nginx's ETag (mtime + size) changes exactly when the bytes do, even for a
change of the same size within one second. Compressible files of a disk
block or more (``GZIP_MIN_BYTES``) get a ``.gz`` copy (for gzip_static)
written and dated with them. Each generation's
``.manifest.json`` says what it holds (with each file's CRC-32, so that a
changed file is told from the served one without reading it: see
``_Placer._served_bytes``); it is removed while the generation is being
rewritten, so after a killed build the next one starts that folder anew.

A file can be given without bytes, as ``KEEP`` with the key of its inputs:
the renderer saw that the inputs are those of the previous build's file (its
key is in the manifest) and skipped rendering it. Should that file be missing
from the served generation when it has to be copied, ``StaleTree`` asks for a
build without keys.
"""

from __future__ import annotations

import copy
import hashlib
import mmap
import os
import shutil
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import orjson
from isal import isal_zlib

from statusgen.errors import RenderError

MANIFEST = ".manifest.json"
GZIP_SUFFIXES = (".json", ".xml", ".html", ".css", ".js", ".svg", ".txt")
#: Files smaller than a disk block get no .gz copy: the copy would cost an inode and a block of
#: its own to save a client under 4 KiB, well inside TCP's first flight (some 14 KB), so no
#: round trip (badges, error bodies, the feeds and incidents pages of most services).
GZIP_MIN_BYTES = 4096
GZIP_LEVEL = 1        # ISA-L's level 1: smaller than zlib-ng's 2, 2.3x faster (1,041 against 454 MB/s here)
_PAGE = mmap.PAGESIZE
_ZEROS = memoryview(bytes(_PAGE))
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
    kept: int = 0          # of the unchanged: given as KEEP (not rendered: their inputs were the same)


def digest(data: bytes) -> str:
    """A short hash (the keys of files' inputs)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def gens_dir(output: Path) -> Path:
    return output.parent / (output.name + ".gens")


def current_generation(output: Path) -> Path | None:
    if output.is_symlink():
        target = output.resolve()
        return target if target.is_dir() else None
    return output if output.is_dir() else None


# A file as a manifest lists it: [size, mtime, has a .gz copy (0/1), key of its inputs or None,
# CRC-32 of its bytes, their ``digest`` once a build found them unchanged (else None)].
Entry = list  # type: ignore[type-arg]
MANIFEST_FORMAT = 4


def _read_manifest(gen: Path | None) -> dict[str, Entry]:
    """What a generation holds, by path; {} for none, a damaged manifest or an older format."""
    if gen is None:
        return {}
    try:
        doc = orjson.loads((gen / MANIFEST).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    ok = isinstance(doc, dict) and doc.get("format") == MANIFEST_FORMAT and isinstance(doc.get("files"), dict)
    return doc["files"] if ok else {}


def _write_manifest(gen: Path, files: dict[str, Entry]) -> None:
    (gen / MANIFEST).write_bytes(orjson.dumps({"format": MANIFEST_FORMAT, "files": files}))


def _gzip(data: bytes) -> bytes:
    """A gzip member with no name and mtime 0 (the same bytes for the same input)."""
    return isal_zlib.compress(data, GZIP_LEVEL, 31)


def _read_file(gen: Path | None, rel: str) -> bytes | None:
    """The bytes of ``rel`` in generation ``gen``; None when there is none or it cannot be read."""
    if gen is None:
        return None
    try:
        return (gen / rel).read_bytes()
    except OSError:
        return None


def _mkdirs(path: str, made: set[str]) -> None:
    if path not in made:
        os.makedirs(path, exist_ok=True)
        made.add(path)


def _with_gz(files: dict[str, Entry]) -> set[str]:
    """The paths of a manifest's files and of their .gz copies."""
    return set(files) | {rel + ".gz" for rel, e in files.items() if e[2]}


def _same(entry: Entry | None, wanted: Entry) -> bool:
    """Whether a manifest entry describes the same version of a file: size, mtime and .gz copy
    (a path's mtime moves on with every change this writer makes)."""
    return entry is not None and entry[:3] == wanted[:3]


class _Placer:
    """Brings the generation being rewritten up to date, file by file (one per process placing files).

    ``served``/``old``: the generation readers see now and its manifest (the previous
    build). ``target``/``mine``: the generation being rewritten and what it holds (the
    build before; empty when it is new). A file is written into ``target`` only when
    ``target`` does not hold it already as wanted; kept files whose bytes are not in hand
    are copied from ``served``.
    """

    def __init__(self, served: Path | None, old: dict[str, Entry], target: Path, mine: dict[str, Entry]):
        self.served, self.old, self.target, self.mine = served, old, target, mine
        self._root = f"{target}{os.sep}"     # a file's path is this and its tree path (no join per file)
        with os.scandir(target) as entries:
            self.empty = next(entries, None) is None     # a new folder: all it will hold is written here
        self._start()

    def _start(self) -> None:
        """Nothing placed yet."""
        self.manifest: dict[str, Entry] = {}
        self._made: set[str] = set()
        self.written = self.nbytes = self.kept = 0

    def keep(self, rel: str, key: str | None) -> None:
        """The previous build's file, unchanged (its inputs are the same)."""
        before = self.old.get(rel)
        if before is None:
            raise StaleTree(f"{rel}: nothing to keep in the previous generation")
        wanted = [*before[:3], key, *before[4:]]
        if not self._holds(rel, wanted):
            self._copy(rel, wanted)
        self.manifest[rel] = wanted
        self.kept += 1

    def place(self, rel: str, data: bytes, key: str | None) -> None:
        """``rel`` with these bytes: the previous build's file when they are the same, else a changed one."""
        before = self.old.get(rel)
        gz = int(rel.endswith(GZIP_SUFFIXES) and len(data) >= GZIP_MIN_BYTES)
        crc = isal_zlib.crc32(data)
        same, sure = False, None
        if before is not None and before[0] == len(data) and before[2] == gz and before[4] == crc:
            sure = digest(data)                     # the same size and CRC: compare the bytes themselves
            same = sure == before[5] if before[5] else self._served_bytes(rel) == data
        if same:
            wanted = [*before[:3], key, crc, sure]
        else:
            wanted = [len(data), max(int(time.time()), before[1] + 1) if before else int(time.time()), gz, key,
                      crc, None]
            self.written += 1
            self.nbytes += len(data)
        if not self._holds(rel, wanted):
            self._put(rel, data, _gzip(data) if gz else None, wanted[1])
        self.manifest[rel] = wanted

    def _served_bytes(self, rel: str) -> bytes | None:
        """The previous build's bytes of ``rel``, to compare with new ones of the same size and
        CRC-32 (the first time they are the same; the manifest then keeps their digest, so the
        next build compares digests).

        The CRC (60 GB/s here) spares a read for nearly every changed file, and the digest
        spares it for files that stay the same build after build: a host may page out files
        nobody read for a minute (this VM's DAMON does), and each read then waits on the
        disk. A digest of every file written would cost more than the reads it saves."""
        return _read_file(self.served, rel)

    def _holds(self, rel: str, wanted: Entry) -> bool:
        """Whether the target holds ``rel`` as wanted: by its manifest, and on disk (size and mtime)."""
        if not _same(self.mine.get(rel), wanted):
            return False
        try:
            st = os.stat(self._root + rel)
        except FileNotFoundError:
            return False
        return st.st_size == wanted[0] and int(st.st_mtime) == wanted[1]

    def _copy(self, rel: str, wanted: Entry) -> None:
        if self.served is None:
            raise StaleTree(f"{rel}: nothing to keep in the previous generation")
        try:
            data = (self.served / rel).read_bytes()
            packed = (self.served / (rel + ".gz")).read_bytes() if wanted[2] else None
        except FileNotFoundError:
            raise StaleTree(f"{rel}: missing from the previous generation") from None
        if len(data) != wanted[0]:
            raise StaleTree(f"{rel}: changed in the previous generation since it was written")
        self._put(rel, data, packed, wanted[1])

    def _put(self, rel: str, data: bytes, packed: bytes | None, mtime: int) -> None:
        path = self._root + rel
        _mkdirs(os.path.dirname(path), self._made)
        held = self.mine.get(rel)       # the target holds a version of it (and of its .gz, when it had one)
        _write_in_place(path, data, mtime, held is not None)
        if packed is not None:
            _write_in_place(path + ".gz", packed, mtime, held is not None and bool(held[2]))

    def fork(self) -> _Placer:
        """A placer for a forked process: the same generations, nothing placed yet."""
        other = copy.copy(self)
        other._start()
        return other

    def absorb(self, part: Part) -> None:
        """What a forked process's placer placed (``fork``), as if placed here."""
        self.manifest.update(part.manifest)
        self.written += part.written
        self.nbytes += part.nbytes
        self.kept += part.kept

    def finish(self) -> tuple[int, int, int, int]:
        """Remove what is no longer rendered (or compressed), write the manifest: (files, written, bytes, kept).

        When the target was complete (it had its manifest), what it held is known: only those
        files go. A folder that was empty holds only what was written here, all wanted. Otherwise
        (what a killed build left) the folder is walked.
        """
        wanted = _with_gz(self.manifest)
        if self.mine:
            for rel in sorted(_with_gz(self.mine) - wanted):
                self._remove(rel)
        elif not self.empty:
            self._sweep(wanted)
        _write_manifest(self.target, self.manifest)
        return len(self.manifest), self.written, self.nbytes, self.kept

    def _remove(self, rel: str) -> None:
        """Remove ``rel`` from the target, and the folders it leaves empty."""
        path = os.path.join(self.target, rel)
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
        folder = os.path.dirname(path)
        while folder != str(self.target):
            try:
                os.rmdir(folder)
            except OSError:       # not empty (or gone): its parents are not empty either
                return
            folder = os.path.dirname(folder)

    def _sweep(self, wanted: set[str]) -> None:
        """Walk the target: remove every file not wanted, and the folders left empty."""
        root = str(self.target)
        emptied: set[str] = set()      # folders removed, bottom up: a folder with only those in it goes too
        for dirpath, dirs, names in os.walk(root, topdown=False):
            rel_dir = dirpath[len(root) + 1:]
            left = len(names) + sum(1 for d in dirs if os.path.join(dirpath, d) not in emptied)
            for name in names:
                rel = f"{rel_dir}/{name}" if rel_dir else name
                if rel not in wanted:
                    os.unlink(os.path.join(dirpath, name))
                    left -= 1
            if rel_dir and not left:
                os.rmdir(dirpath)
                emptied.add(dirpath)


@dataclass(frozen=True)
class Part:
    """What a forked process placed into the target (``TreeWriter.place_share``): its manifest
    entries and counts, merged into the build's by ``TreeWriter.absorb``."""

    manifest: dict[str, Entry]
    written: int
    nbytes: int
    kept: int


class TreeWriter:
    """One new generation, written as the files are rendered, then swapped in.

        with TreeWriter(output) as w:      # picks the generation to rewrite
            w.write(stream)                # a stream of Items; w.previous for the renderer
        stats = w.stats                    # swapped in when the block ends without error

    A forked process rendering a share of the site places its own files into the same
    generation (``place_share``, with the copy of this writer the fork gave it) and hands
    back what it placed, which the building process merges (``absorb``) before the
    manifest is written. Each file is placed by exactly one process.
    """

    def __init__(self, output: Path):
        self.output = output
        self.prev = current_generation(output)
        self.old = _read_manifest(self.prev)
        self.stats: WriteStats | None = None
        try:
            self.new = _target(output, self.prev)
            mine = _read_manifest(self.new)
            (self.new / MANIFEST).unlink(missing_ok=True)      # from here on, it is being rewritten
            self._placer = _Placer(self.prev.resolve() if self.prev else None, self.old, self.new.resolve(), mine)
        except OSError as exc:
            raise self._failure(exc) from None

    @property
    def previous(self) -> Previous:
        """The previous build's files: the keys of their inputs, and their bytes."""
        return Previous(self.prev, _keys(self.old))

    def __enter__(self) -> TreeWriter:
        return self

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if exc is not None:          # the target has no manifest now: the next build starts it anew
            return
        try:
            files, written, nbytes, kept = self._placer.finish()
            _swap(self.output, self.new)
        except OSError as exc:
            raise self._failure(exc) from None
        _prune(self.output, {self.new.resolve()} | ({self.prev.resolve()} if self.prev else set()))
        self.stats = WriteStats(files, written, files - written, nbytes, self.new.name, kept)

    def _failure(self, exc: OSError) -> RenderError:
        why = exc.strerror or str(exc)
        return RenderError(f"{self.output}: cannot write the output tree ({why}); "
                           f"the last complete site is left in place. Free space or fix permissions "
                           f"on {self.output.parent}.")

    def write(self, files: Mapping[str, bytes] | Iterable[Item]) -> None:
        """Place every file as it comes (a stream holds one service's files at a time)."""
        _place_all(self._placer, files.items() if isinstance(files, Mapping) else files, self._failure)

    def place_share(self, files: Iterable[Item]) -> Part:
        """In a forked process: place ``files`` with a placer of its own (this writer is the
        fork's copy), and say what it placed."""
        placer = self._placer.fork()
        _place_all(placer, files, self._failure)
        return Part(placer.manifest, placer.written, placer.nbytes, placer.kept)

    def absorb(self, part: Part) -> None:
        """What a forked process placed (``place_share``): part of this generation."""
        self._placer.absorb(part)


def _place_all(placer: _Placer, files: Iterable[Item], failure: Callable[[OSError], RenderError]) -> None:
    """Place each file; an error of the file system (a full disk, a permission) is the tree's."""
    for item in files:
        rel, data, key = item if len(item) == 3 else (item[0], item[1], None)  # type: ignore[misc]
        try:
            if data is KEEP:
                placer.keep(rel, key)
            else:
                placer.place(rel, data, key)
        except OSError as exc:
            raise failure(exc) from None


def _write_in_place(path: str, data: bytes, mtime: int, exists: bool) -> None:
    """Write ``path`` over its old bytes, truncated after them (never to zero first: ext4
    then writes the data back at close, which made a build wait on the disk), dated ``mtime``.

    ``exists``: the file is probably there already. A file this call creates needs no
    truncating. An existing file is written in whole pages, zeros after the data, then cut
    to its length: a write that covers only part of a page the page cache does not hold
    makes ext4 read that page from the disk first, and a host may page out files nobody
    read for a minute (this VM's DAMON does). Plain system calls on the descriptor (a
    Python file object adds an fstat, an ioctl and seeks): a full build writes some 33,000
    files.
    """
    fd = -1
    if not exists:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            exists = True
    if fd < 0:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        parts = [memoryview(data), _ZEROS[:-len(data) % _PAGE]] if exists else [memoryview(data)]
        while parts:                    # a short write (rare on a local file) goes on where it stopped
            done = os.writev(fd, parts)
            while parts and done >= len(parts[0]):
                done -= len(parts.pop(0))
            if parts:
                parts[0] = parts[0][done:]
        if exists:
            os.ftruncate(fd, len(data))
        os.utime(fd, (mtime, mtime))
    finally:
        os.close(fd)


def _keys(manifest: dict[str, Entry]) -> dict[str, str]:
    return {rel: e[3] for rel, e in manifest.items() if e[3]}


class Previous:
    """The served generation as the next build sees it: the key of each file's inputs (from
    its manifest), and the bytes of a file (a kept file's documents, read back)."""

    def __init__(self, gen: Path | None, keys: Mapping[str, str]):
        self.gen, self.keys = gen, keys

    def get(self, rel: str) -> str | None:
        return self.keys.get(rel)

    def read(self, rel: str) -> bytes | None:
        return _read_file(self.gen, rel)


NO_PREVIOUS = Previous(None, {})


def previous_keys(output: Path) -> dict[str, str]:
    """The keys of the served generation's files (what ``TreeWriter.previous`` gives a build)."""
    return _keys(_read_manifest(current_generation(output)))


def _target(output: Path, served: Path | None) -> Path:
    """The generation to rewrite: the one before the served one, when it is complete (it has
    its manifest); else a new folder. Any other folder (what a killed run left) goes."""
    gens = gens_dir(output)
    gens.mkdir(parents=True, exist_ok=True)
    keep = served.resolve() if served else None
    others = sorted((g for g in gens.iterdir() if g.resolve() != keep and g.is_dir()),
                    key=lambda g: g.stat().st_mtime, reverse=True)
    chosen = next((g for g in others if (g / MANIFEST).is_file() and g.name.startswith("g")), None)
    for g in others:
        if g != chosen:
            shutil.rmtree(g, ignore_errors=True)
    if chosen is not None:
        return chosen
    new = gens / f"g{time.time_ns()}"
    new.mkdir()
    return new


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


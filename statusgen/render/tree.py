"""Write: the output tree, a generation at a time, swapped into place atomically.

The output path (``site/`` by default) is a symbolic link to a generation
folder in ``<output>.gens/``. There are two generations: the one served, and
the one before it. A build rewrites the one before, then points the link at
it with one rename, so a reader (nginx, the preview server, a mirror) never
sees a half-written tree; the generation it leaves stays complete for readers
still using it, until the next build rewrites it in turn.

A generation is written under a name of its own, ``partial-<name>``, and
takes its name (``g<ns>``) only once complete: a folder named ``partial-``
is unambiguously one a build has not finished. A build that fails removes
it (on a full disk, what it wrote is what the next run needs to store its
results); a build that was killed leaves it, and the next run or build
removes it before anything else (``clear_partial``). The files written are
flushed to the disk before the generation is named complete and swapped in,
and the folders after: a crash never makes a link to a generation whose
files are not all on the disk.

Each generation's ``.manifest.json`` lists its files: size, modification
time, whether it has a ``.gz`` copy (for nginx's gzip_static), the key of the
inputs it was made from, and a hash of its bytes (SHA-256): a file made again
with the served file's size and hash has its bytes, and is not read back to
be compared.

``<output>.gens/.store`` names the store the site was last built from
(``remember_store``): a run that finds that store missing or empty refuses to
start a new one without ``--new-store``.

What must stay true:

- A file's bytes decide its modification time: a file that did not change
  keeps it, a changed one gets a later second than its previous version. So
  nginx's ETag (modification time and size) changes exactly when the bytes
  do, even for a change of the same size within one second.
- A file whose inputs have the key the served file was made from is not made
  again (``keep``): the served file is copied into the generation being
  written (or left, when that already holds it). Should it be missing from
  the served generation, ``StaleTree`` asks for a build without keys.
- Files are written over their old bytes, not truncated to nothing first:
  ext4 writes a file truncated to zero back to the disk when it is closed
  (``auto_da_alloc``), which would make every build wait on the disk.

A writer can be shared by processes: each places files with a ``Placer`` of
its own (``placer()``) and the writer ``absorb``s what each placed before the
manifest is written.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import re
import shutil
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import orjson
from isal import isal_zlib

from statusgen.errors import RenderError
from statusgen.policy import has_gzip_copy

MANIFEST = ".manifest.json"
PARTIAL = "partial-"  # the name of a generation being written starts so; a complete one with "g"
STORE_MARK = ".store"  # in <output>.gens/: the store the site was last built from
MANIFEST_FORMAT = 6
GZIP_LEVEL = 1  # ISA-L's fastest: every changed file of a build is compressed
SYNCFS_REPORTS_ERRORS = (5, 8)  # the first Linux whose syncfs(2) returns a failed write back


class StaleTree(Exception):
    """A file to keep is missing from the served generation: build again without keys."""


class Entry(NamedTuple):
    """A file as a manifest lists it."""

    size: int
    mtime: int
    gz: bool  # has a .gz copy
    key: str | None  # the key of the inputs it was made from
    sha: str  # the first 16 bytes of the SHA-256 of its bytes, in hex


@dataclass(frozen=True)
class WriteStats:
    files: int
    written: int  # files whose bytes changed
    kept: frozenset[str]  # files not made again: their inputs had the served files' key
    bytes_written: int
    generation: str


def digest(data: bytes) -> str:
    """A short hash: the keys of files' inputs."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def gens_dir(output: Path) -> Path:
    return output.parent / (output.name + ".gens")


def current_generation(output: Path) -> Path | None:
    if output.is_symlink():
        target = output.resolve()
        return target if target.is_dir() else None
    return output if output.is_dir() else None


def read_manifest(gen: Path | None) -> dict[str, Entry]:
    """What a generation holds, by path; {} for none, a damaged manifest or another format."""
    if gen is None:
        return {}
    try:
        doc = orjson.loads((gen / MANIFEST).read_bytes())
        if doc.get("format") != MANIFEST_FORMAT:
            return {}
        return {rel: Entry(*e) for rel, e in doc["files"].items()}
    except (OSError, orjson.JSONDecodeError, AttributeError, KeyError, TypeError):
        return {}


def _write_manifest(gen: Path, files: dict[str, Entry]) -> None:
    (gen / MANIFEST).write_bytes(
        orjson.dumps({"format": MANIFEST_FORMAT, "files": {r: list(e) for r, e in files.items()}})
    )


def _gzip(data: bytes) -> bytes:
    """A gzip member with no name and mtime 0: the same bytes for the same input."""
    return isal_zlib.compress(data, GZIP_LEVEL, 31)


def failure(output: Path, exc: OSError) -> RenderError:
    """An error of the file system (a full disk, a permission) as the tree's."""
    why = exc.strerror or str(exc)
    return RenderError(
        f"{output}: cannot write the output tree ({why}); the last complete site is left in "
        f"place. Free space or fix permissions on {output.parent}."
    )


def _write(path: Path, data: bytes, mtime: int) -> None:
    """``data`` over the old bytes of ``path`` (see the module's account), cut to its size, dated ``mtime``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.ftruncate(fd, len(data))
        os.utime(fd, (mtime, mtime))
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Placed:
    """What a placer placed: its manifest entries and counts (sent back by a worker process)."""

    files: dict[str, Entry]
    written: int
    kept: list[str]
    nbytes: int
    wrote: list[str] = field(default_factory=list)  # the files written, .gz copies too: flushed at the end


class Placer:
    """Brings the generation being written up to date, file by file, in one process.

    ``served``/``old``: the generation readers see now, and its manifest. ``target``/``mine``:
    the generation being rewritten, and what its manifest said it held (the build before the
    served one; empty for a new folder). A file is written only when ``target`` does not hold
    it already as wanted. ``output`` names the tree in errors."""

    def __init__(self, output: Path, served: Path | None, old: dict[str, Entry], target: Path, mine: dict[str, Entry]):
        self.output, self.served, self.old, self.target, self.mine = output, served, old, target, mine
        self.placed: dict[str, Entry] = {}
        self.written = self.nbytes = 0
        self.kept: list[str] = []
        self.wrote: list[str] = []
        self.folders: set[Path] = set()  # made (or found) by this placer

    def previous_key(self, rel: str) -> str | None:
        """The key of the inputs the served file was made from."""
        entry = self.old.get(rel)
        return entry.key if entry else None

    def put(self, rel: str, data: bytes, key: str | None = None) -> None:
        """``rel`` with these bytes: the served file's version when they are the same, else a new one."""
        try:
            self._put(rel, data, key)
        except OSError as exc:
            raise failure(self.output, exc) from None

    def keep(self, rel: str, key: str) -> None:
        """The served file, unchanged: its inputs have the key it was made from."""
        try:
            self._keep(rel, key)
        except OSError as exc:
            raise failure(self.output, exc) from None

    def _put(self, rel: str, data: bytes, key: str | None) -> None:
        before = self.old.get(rel)
        gz = has_gzip_copy(rel, len(data))
        sha = hashlib.sha256(data).hexdigest()[:32]
        same = before is not None and (before.size, before.sha, before.gz) == (len(data), sha, gz)
        if same:
            assert before is not None
            wanted = before._replace(key=key)
        else:
            now = int(time.time())
            wanted = Entry(len(data), max(now, before.mtime + 1) if before else now, gz, key, sha)
            self.written += 1
            self.nbytes += len(data)
        if not self._holds(rel, wanted):
            self._place(rel, data, _gzip(data) if gz else None, wanted.mtime)
        self.placed[rel] = wanted

    def _keep(self, rel: str, key: str) -> None:
        before = self.old.get(rel)
        if before is None or self.served is None:
            raise StaleTree(f"{rel}: nothing to keep in the served generation")
        wanted = before._replace(key=key)
        if not self._holds(rel, wanted):
            try:
                data = (self.served / rel).read_bytes()
                packed = (self.served / (rel + ".gz")).read_bytes() if wanted.gz else None
            except FileNotFoundError:
                raise StaleTree(f"{rel}: missing from the served generation") from None
            if len(data) != wanted.size:
                raise StaleTree(f"{rel}: changed in the served generation since it was written")
            self._place(rel, data, packed, wanted.mtime)
        self.placed[rel] = wanted
        self.kept.append(rel)

    def result(self) -> Placed:
        return Placed(self.placed, self.written, self.kept, self.nbytes, self.wrote)

    def read_served(self, rel: str) -> bytes | None:
        """The served file's bytes (None when it cannot be read)."""
        try:
            return None if self.served is None else (self.served / rel).read_bytes()
        except OSError:
            return None

    def _holds(self, rel: str, wanted: Entry) -> bool:
        """Whether the target holds ``rel`` as wanted: by its manifest, and on disk."""
        had = self.mine.get(rel)
        if had is None or (had.size, had.mtime, had.gz) != (wanted.size, wanted.mtime, wanted.gz):
            return False
        try:
            st = os.stat(self.target / rel)
        except FileNotFoundError:
            return False
        return st.st_size == wanted.size and int(st.st_mtime) == wanted.mtime

    def _place(self, rel: str, data: bytes, packed: bytes | None, mtime: int) -> None:
        path = self.target / rel
        if path.parent not in self.folders:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.folders.add(path.parent)
        _write(path, data, mtime)
        self.wrote.append(rel)
        gz = path.with_name(path.name + ".gz")
        if packed is not None:
            _write(gz, packed, mtime)
            self.wrote.append(rel + ".gz")


class TreeWriter:
    """One new generation, written as the files are made, then swapped in.

    with TreeWriter(output) as tree:   # picks the generation to rewrite, as partial-<name>
        tree.main.put(path, data, key) # or .keep(path, key); tree.placer() for another process
    tree.stats                         # swapped in when the block ends without error; on any
                                       # error, what was written is removed
    """

    def __init__(self, output: Path):
        self.output = output
        self.stats: WriteStats | None = None
        try:
            clear_partial(output)
            served = current_generation(output)
            self.new = _target(output, served)
        except OSError as exc:
            raise failure(output, exc) from None
        try:
            mine = read_manifest(self.new)
            (self.new / MANIFEST).unlink(missing_ok=True)  # written again once the generation is complete
            self.fresh = next(self.new.iterdir(), None) is None
            self.main = Placer(
                output, served.resolve() if served else None, read_manifest(served), self.new.resolve(), mine
            )
        except OSError as exc:
            self._discard()
            raise failure(output, exc) from None

    def placer(self) -> Placer:
        """A placer of this generation for another process: nothing placed yet."""
        m = self.main
        return Placer(self.output, m.served, m.old, m.target, m.mine)

    def absorb(self, placed: Placed) -> None:
        """What another process's placer placed (``Placer.result``), as if placed here."""
        self.main.placed.update(placed.files)
        self.main.written += placed.written
        self.main.kept += placed.kept
        self.main.nbytes += placed.nbytes
        self.main.wrote += placed.wrote

    def __enter__(self) -> TreeWriter:
        return self

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        if exc is not None:
            self._discard()
            return
        try:
            done = self._complete()
        except BaseException as error:
            self._discard()
            if isinstance(error, OSError):
                raise failure(self.output, error) from None
            raise
        self._swap_in(done)
        m = self.main
        _prune(self.output, {done.resolve(), *([m.served] if m.served else [])})
        self.stats = WriteStats(len(m.placed), m.written, frozenset(m.kept), m.nbytes, done.name)

    def _complete(self) -> Path:
        """Finish the generation: what it should no longer hold goes, its manifest is written, its
        files reach the disk, and it takes its complete name (returned)."""
        m = self.main
        if not self.fresh:
            _remove_unwanted(m.target, m.mine, m.placed)
        _write_manifest(m.target, m.placed)
        _flush(m.target, [*m.wrote, MANIFEST])
        done = self.new.with_name(self.new.name.removeprefix(PARTIAL))
        os.replace(self.new, done)
        _fsync(done.parent)
        return done

    def _swap_in(self, done: Path) -> None:
        """Point the output at the complete generation ``done``. Should that fail, ``done`` goes,
        unless the link points at it after all."""
        try:
            _swap(self.output, done)
            _fsync(self.output.parent)
        except OSError as error:
            if current_generation(self.output) != done.resolve():
                shutil.rmtree(done, ignore_errors=True)
            raise failure(self.output, error) from None

    def _discard(self) -> None:
        """Remove the generation being written (never the served one: that is not ``partial-``)."""
        shutil.rmtree(self.new, ignore_errors=True)


def _with_gz(files: dict[str, Entry]) -> set[str]:
    """The paths of a manifest's files and of their .gz copies."""
    return set(files) | {rel + ".gz" for rel, e in files.items() if e.gz}


def _remove_unwanted(target: Path, mine: dict[str, Entry], placed: dict[str, Entry]) -> None:
    """Remove what the target holds and this build did not place, and the folders left empty.

    When the target was complete (it had its manifest) what it held is known; otherwise (what a
    killed build left) the folder is walked."""
    wanted = _with_gz(placed)
    if mine:
        stale = sorted(_with_gz(mine) - wanted)
    else:
        stale = sorted(
            p.relative_to(target).as_posix()
            for p in target.rglob("*")
            if not p.is_dir() and p.relative_to(target).as_posix() not in wanted
        )
    for rel in stale:
        (target / rel).unlink(missing_ok=True)
    for folder in sorted({(target / rel).parent for rel in stale}, key=lambda p: len(p.parts), reverse=True):
        while folder != target:
            try:
                folder.rmdir()
            except OSError:  # not empty (or gone): its parents are not empty either
                break
            folder = folder.parent


def _target(output: Path, served: Path | None) -> Path:
    """The generation to rewrite, renamed ``partial-<name>``: the one before the served one, when it
    is complete (it has its manifest); else a new folder. Any other folder (a plain output folder
    moved aside, a generation whose manifest was lost) goes."""
    gens = gens_dir(output)
    gens.mkdir(parents=True, exist_ok=True)
    keep = served.resolve() if served else None
    others = sorted((g for g in _folders(gens) if g.resolve() != keep), key=lambda g: g.stat().st_mtime, reverse=True)
    chosen = next((g for g in others if (g / MANIFEST).is_file() and g.name.startswith("g")), None)
    for g in others:
        if g != chosen:
            shutil.rmtree(g, ignore_errors=True)
    name = chosen.name if chosen is not None else f"g{time.time_ns()}"
    partial = gens / f"{PARTIAL}{name}"
    if chosen is not None:
        os.replace(chosen, partial)
    else:
        partial.mkdir()
    return partial


def _folders(gens: Path) -> list[Path]:
    """The folders of ``gens``: the generations, complete or not (not its dotfiles)."""
    return [g for g in gens.iterdir() if g.is_dir() and not g.is_symlink() and not g.name.startswith(".")]


def clear_partial(output: Path) -> None:
    """Remove what a build that did not finish left: its partial generation and its swap link.
    Only the process that holds the run lock may: another's build may be writing one."""
    gens = gens_dir(output)
    try:
        for gen in _folders(gens) if gens.is_dir() else []:
            if gen.name.startswith(PARTIAL):
                shutil.rmtree(gen, ignore_errors=True)
        for link in output.parent.glob(f".{output.name}.swap-*"):
            if link.is_symlink():
                link.unlink(missing_ok=True)
    except OSError as exc:
        raise failure(output, exc) from None


def _fsync(path: Path) -> None:
    """Flush a file, or a folder's entries, to the disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _flush(root: Path, written: list[str]) -> None:
    """Put the files written under ``root``, and the folders that hold them, on the disk.

    On Linux, one syncfs(2) of the file system: the kernel writes every dirty page and the
    journal once, where an fsync per file asks for a journal commit each. Elsewhere (and on
    Linux before 5.8, whose syncfs does not report a failed write back), each file and then each
    folder is flushed, several at once: flushes in flight together share the file system's
    journal commits."""
    if _syncfs(root):
        return
    paths = [root / rel for rel in written]
    with ThreadPoolExecutor() as pool:
        list(pool.map(_fsync, paths))
        list(pool.map(_fsync, {root, *(p.parent for p in paths)}))


def _syncfs(path: Path) -> bool:
    """syncfs(2) on the file system that holds ``path``; whether the system has one that reports
    a failed write back (Linux 5.8 and later)."""
    if sys.platform != "linux" or _kernel_version() < SYNCFS_REPORTS_ERRORS:
        return False
    try:
        call = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        if call(fd) != 0:
            err = ctypes.get_errno()
            if err == errno.ENOSYS:
                return False
            raise OSError(err, os.strerror(err), str(path))
    finally:
        os.close(fd)
    return True


def _kernel_version() -> tuple[int, int]:
    """The running kernel's version, as (major, minor) (``6.1.0-18-amd64`` is (6, 1))."""
    match = re.match(r"(\d+)\.(\d+)", os.uname().release)
    return (int(match[1]), int(match[2])) if match else (0, 0)


def _swap(output: Path, new: Path) -> None:
    """Point ``output`` at ``new`` with one rename (moving a plain folder aside once)."""
    if output.exists() and not output.is_symlink():
        os.replace(output, gens_dir(output) / f"legacy-{time.time_ns()}")
    tmp = output.parent / f".{output.name}.swap-{os.getpid()}"
    if tmp.is_symlink():
        tmp.unlink()
    os.symlink(os.path.relpath(new, output.parent), tmp)
    os.replace(tmp, output)


def _prune(output: Path, keep: set[Path]) -> None:
    """Remove the generations other than ``keep``."""
    for gen in _folders(gens_dir(output)):
        if gen.resolve() not in keep:
            shutil.rmtree(gen, ignore_errors=True)


def recorded_store(output: Path) -> Path | None:
    """The store the site at ``output`` was last built from, if a run recorded one."""
    try:
        return Path(orjson.loads((gens_dir(output) / STORE_MARK).read_bytes())["store"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def remember_store(output: Path, store: Path) -> None:
    """Record ``store`` as the one the site is built from (written only when that changes)."""
    store = store.resolve()
    if recorded_store(output) == store:
        return
    mark = gens_dir(output) / STORE_MARK
    tmp = mark.with_name(f"{STORE_MARK}.{os.getpid()}")
    try:
        tmp.write_bytes(orjson.dumps({"store": str(store)}))
        _fsync(tmp)
        os.replace(tmp, mark)
        _fsync(mark.parent)
    except OSError as exc:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)
        raise RenderError(
            f"{mark}: cannot record the store the site is built from ({exc.strerror or exc}); "
            f"free space or fix permissions on {mark.parent}."
        ) from None


def write_tree(output: Path, files: dict[str, bytes]) -> WriteStats:
    """Write ``files`` (tree path -> bytes) as a new generation and swap it in."""
    with TreeWriter(output) as tree:
        for rel, data in files.items():
            tree.main.put(rel, data)
    assert tree.stats is not None
    return tree.stats

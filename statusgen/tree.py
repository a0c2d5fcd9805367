"""Write: the output tree, swapped into place atomically.

The output path (``site/`` by default) is a symbolic link to a generation
directory in ``<output>.gens/``. There are two generations: the one served,
and the one before it. A build rewrites the one before, then points the link
at it with one rename, so a reader (nginx, the preview server, a mirror)
never sees a half-written tree; the generation it leaves stays complete for
readers still using it, until the next build rewrites it in turn.

The files are placed by a process of its own (``TreeWriter`` starts
``python -m statusgen.tree`` and streams them to it): rendering holds the
GIL, so comparing, gzip and file I/O run there, beside it. It reads more
than one stream when asked (``take_input``: a forked process rendering a
share of the services writes its files there directly).

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

import fcntl
import hashlib
import mmap
import os
import selectors
import shutil
import struct
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Union

import orjson
from isal import isal_zlib

from .errors import RenderError

MANIFEST = ".manifest.json"
GZIP_SUFFIXES = (".json", ".xml", ".html", ".css", ".js", ".svg", ".txt")
#: Files smaller than a disk block get no .gz copy: the copy would cost an inode and a block of
#: its own to save a client under 4 KiB, well inside TCP's first flight (some 14 KB), so no
#: round trip. Most incident pages are below it (about 2.8 KB), and a site keeps every incident.
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
    """In the writer process: brings the generation being rewritten up to date, file by file.

    ``served``/``old``: the generation readers see now and its manifest (the previous
    build). ``target``/``mine``: the generation being rewritten and what it holds (the
    build before; empty when it is new). A file is written into ``target`` only when
    ``target`` does not hold it already as wanted; kept files whose bytes are not in hand
    are copied from ``served``.
    """

    def __init__(self, served: Path | None, old: dict[str, Entry], target: Path, mine: dict[str, Entry]):
        self.served, self.old, self.target, self.mine = served, old, target, mine
        with os.scandir(target) as entries:
            self.empty = next(entries, None) is None     # a new folder: all it will hold is written here
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
            st = os.stat(os.path.join(self.target, rel))
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
        path = os.path.join(self.target, rel)
        _mkdirs(os.path.dirname(path), self._made)
        held = self.mine.get(rel)       # the target holds a version of it (and of its .gz, when it had one)
        _write_in_place(path, data, mtime, held is not None)
        if packed is not None:
            _write_in_place(path + ".gz", packed, mtime, held is not None and bool(held[2]))

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


# A message: a header (8 bytes: the lengths of what follows), [path, key, keep] as JSON, the body.
_FRAME = struct.Struct("<II")
END = _FRAME.pack(0, 0)     # a stream's last message


def send_items(write: Callable[[bytes], object], items: Iterable[Item]) -> None:
    """Frame ``items`` for the writer process (without the END)."""
    for item in items:
        rel, data, key = item if len(item) == 3 else (item[0], item[1], None)  # type: ignore[misc]
        header = orjson.dumps([rel, key, data is KEEP])
        write(_FRAME.pack(len(header), 0 if data is KEEP else len(data)))
        write(header)
        if data is not KEEP:
            write(data)


def _messages(fds: list[int]) -> Iterator[tuple[str, str | None, bool, bytes]]:
    """The messages of several framed streams as they arrive, until each has sent its END
    (an end of file before it: the build stopped, EOFError)."""
    sel = selectors.DefaultSelector()
    bufs: dict[int, bytearray] = {}
    for fd in fds:
        sel.register(fd, selectors.EVENT_READ)
        bufs[fd] = bytearray()
    while bufs:
        for ready, _ in sel.select():
            fd = ready.fd
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                raise EOFError
            buf = bufs[fd]
            buf += chunk
            pos = 0
            while len(buf) - pos >= _FRAME.size:
                hlen, blen = _FRAME.unpack_from(buf, pos)
                if hlen == 0:                   # END
                    sel.unregister(fd)
                    del bufs[fd]
                    break
                start, end = pos + _FRAME.size + hlen, pos + _FRAME.size + hlen + blen
                if len(buf) < end:
                    break
                with memoryview(buf) as view:
                    rel, key, keep = orjson.loads(view[pos + _FRAME.size:start])
                    body = bytes(view[start:end])
                yield rel, key, keep, body
                pos = end
            if fd in bufs:
                del buf[:pos]


def _writer_main(served: str, target: str, more: list[int]) -> int:
    """The writer process (``python -m statusgen.tree SERVED TARGET [FD ...]``): reads the
    files on stdin (and on the inherited pipes FD, from processes rendering a share of the
    site), brings TARGET up to date with them, and reports on stdout as one JSON line.

    Rendering is Python work that holds the GIL; comparing, gzip and file I/O here run
    on another core, with no GIL to wait for between system calls. Each input is a stream
    of messages (``send_items``) closed by END.
    """
    out = sys.stdout
    try:
        served_path = Path(served) if served else None
        mine = _read_manifest(Path(target))
        (Path(target) / MANIFEST).unlink(missing_ok=True)      # from here on, TARGET is being rewritten
        placer = _Placer(served_path, _read_manifest(served_path), Path(target), mine)
        for rel, key, keep, body in _messages([sys.stdin.fileno(), *more]):
            if keep:
                placer.keep(rel, key)
            else:
                placer.place(rel, body, key)
        report: list[object] = ["ok", *placer.finish()]
    except StaleTree as exc:
        report = ["stale", str(exc)]
    except OSError as exc:
        report = ["oserror", exc.strerror or str(exc)]
    except EOFError:          # the build stopped: TARGET has no manifest, so the next build starts it anew
        return 1
    out.write(orjson.dumps(report).decode() + "\n")
    out.flush()
    return 0


def _child_env() -> dict[str, str]:
    """The environment of the writer process: ours, with this package importable."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    return env


class TreeWriter:
    """One new generation, written by a process of its own, then swapped in.

        with TreeWriter(output) as w:      # the writer process starts linking at once
            w.write(stream)                # a stream of Items; w.previous for the renderer
        stats = w.stats                    # swapped in when the block ends without error
    """

    def __init__(self, output: Path, inputs: int = 1):
        """``inputs``: streams of files the writer reads: this object's ``write``, and one per
        ``take_input`` (a pipe for a process rendering a share of the site)."""
        self.output = output
        self.prev = current_generation(output)
        self.old = _read_manifest(self.prev)
        self.stats: WriteStats | None = None
        try:
            self.new = _target(output, self.prev)
        except OSError as exc:
            raise self._failure(exc.strerror or str(exc)) from None
        pipes = [os.pipe() for _ in range(inputs - 1)]
        self._inputs = [w for _, w in pipes]
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "statusgen.tree", str(self.prev.resolve()) if self.prev else "",
             str(self.new.resolve()), *(str(r) for r, _ in pipes)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_child_env(), pass_fds=[r for r, _ in pipes])
        for r, _ in pipes:
            os.close(r)
        self._pipe = self._proc.stdin
        assert self._pipe is not None
        for fd in [self._pipe.fileno(), *self._inputs]:
            _widen(fd)

    def take_input(self) -> int:
        """The write end of one more input of the writer process; the taker writes its files
        and END there (``send_items``), and closes it."""
        return self._inputs.pop()

    @property
    def previous(self) -> Previous:
        """The previous build's files: the keys of their inputs, and their bytes."""
        return Previous(self.prev, _keys(self.old))

    def __enter__(self) -> TreeWriter:
        return self

    def __exit__(self, kind: object, exc: BaseException | None, tb: object) -> None:
        inputs, self._inputs = self._inputs, []
        if exc is not None:          # the target has no manifest now: the next build starts it anew
            self._proc.kill()
            self._proc.communicate()
            for fd in inputs:
                os.close(fd)
            return
        try:
            self._pipe.write(END)
            self._pipe.flush()
        except OSError:
            pass          # the writer already stopped on an error: its report is waiting
        for fd in inputs:             # an input never taken ends empty
            try:
                os.write(fd, END)
            except OSError:
                pass
            os.close(fd)
        out, _ = self._proc.communicate()
        try:
            report = orjson.loads(out.splitlines()[-1])
        except (IndexError, orjson.JSONDecodeError):
            report = ["oserror", f"the writer process ended with status {self._proc.returncode}"]
        if report[0] != "ok":
            if report[0] == "stale":
                raise StaleTree(report[1])
            raise self._failure(report[1])
        files, written, nbytes, kept = report[1:]
        try:
            _swap(self.output, self.new)
        except OSError as exc:
            raise self._failure(exc.strerror or str(exc)) from None
        _prune(self.output, {self.new.resolve()} | ({self.prev.resolve()} if self.prev else set()))
        self.stats = WriteStats(files, written, files - written, nbytes, self.new.name, kept)

    def _failure(self, why: str) -> RenderError:
        return RenderError(f"{self.output}: cannot write the output tree ({why}); "
                           f"the last complete site is left in place. Free space or fix permissions "
                           f"on {self.output.parent}.")

    def write(self, files: Mapping[str, bytes] | Iterable[Item]) -> None:
        """Send every file to the writer process (the pipe holds a few; the writer keeps none)."""
        try:
            send_items(self._pipe.write, files.items() if isinstance(files, Mapping) else files)
        except BrokenPipeError:
            pass          # the writer stopped on an error (or a share's process saw it stop): __exit__ reports it


def _widen(fd: int) -> None:
    """Let a pipe to the writer hold 1 MB (Linux; 64 KB by default): renderers block less often
    on it, and bytes cross it in fewer, larger copies (a cycle sends ~230 MB)."""
    try:
        fcntl.fcntl(fd, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except OSError:
        pass              # a lower /proc/sys/fs/pipe-max-size, or not Linux: the default size


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


if __name__ == "__main__":
    sys.exit(_writer_main(sys.argv[1], sys.argv[2], [int(fd) for fd in sys.argv[3:]]))

"""Render: a share of the services in a forked process, so a build uses both cores.

Rendering is Python and holds the GIL, so a second core needs a second
process. After the store is read, ``Share.start`` forks: the child inherits
the gathered data, makes the site-wide documents as the parent does (side by
side: on a large site they are some tenths of a second, and the second core
would wait), writes them (with the OpenAPI document, the badges and the API
page), renders the feeds and incidents pages, then services, and places its
files itself into the generation being written (``TreeWriter.place_share``,
with the copy of the writer the fork gave it), while the parent renders and
places services. Services are claimed one at a time from a counter in shared
memory (``Claims``), so both processes finish together. The child then hands
back, pickled, what it placed (the manifest entries of its files, which the
parent merges before the generation's manifest is written) and what the
site-wide pages need of its services (their records and the front page's
view of their 90 days, ``pages.front_bar``), and exits.

The child reads buckets and keeps closed history points through a store
connection of its own (a SQLite connection must not cross a fork). It never
returns into the caller's code: it leaves with ``os._exit``, so the parent's
buffers and exit handlers are not run twice. A failure in the child is raised
in the parent by ``join`` (or by ``close``, when the build stopped first): a
file to keep missing from the previous generation as ``StaleTree`` (the build
is made again without keys), a tree that cannot be written (a full disk) as
the writer's ``RenderError``, any other as a ``RenderError`` naming it.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import select
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from statusgen.errors import RenderError
from statusgen.render.tree import Item, StaleTree, TreeWriter

#: Services below which a build renders in one process (forking costs more than it saves).
MIN_SERVICES = 64


def usable(services: int) -> bool:
    """Whether a build of ``services`` services renders a share in a forked process: a site
    that large, on more than one core, in a process of one thread (a lock another thread
    holds at the fork, SQLite's or a logging handler's, would stay locked in the child)."""
    return services >= MIN_SERVICES and hasattr(os, "fork") and (os.cpu_count() or 1) > 1 and single_threaded()


def single_threaded() -> bool:
    """Whether this process runs one thread (``statusgen run`` and ``build`` do when they build)."""
    return threading.active_count() == 1


class Claims:
    """Indexes handed out one at a time to whichever process asks first: the parent and the
    child share the services this way (a counter in shared memory, made before the fork), so
    both finish together however their other work (feeds, incidents pages, site-wide pages)
    weighs. Each process iterates its own Claims object (the same counter)."""

    def __init__(self, count: int):
        self.count = count
        self._next = multiprocessing.Value("q", 0)
        self.taken: list[int] = []           # the indexes this process took

    def __iter__(self) -> Iterator[int]:
        while True:
            with self._next.get_lock():
                i = self._next.value
                self._next.value = i + 1
            if i >= self.count:
                return
            self.taken.append(i)
            yield i


class Share:
    """One forked process rendering a share of the site into the generation ``writer`` writes."""

    def __init__(self, writer: TreeWriter):
        self.writer = writer
        self.pid: int | None = None
        self._back: int | None = None

    def start(self, items: Callable[[], Iterable[Item]], result: Callable[[], Any]) -> None:
        """Fork: the child places ``items()``, then sends what it placed and ``result()`` back."""
        back, there = os.pipe()
        try:
            pid = os.fork()
        except OSError:
            for fd in (back, there):
                os.close(fd)
            raise
        if pid == 0:                                     # the child: never returns
            status = 0
            try:
                os.close(back)
                part = self.writer.place_share(items())
                message: tuple[str, Any] = ("ok", (part, result()))
            except StaleTree as exc:
                message, status = ("stale", str(exc)), 1
            except RenderError as exc:                   # the tree cannot be written: the writer's words
                message, status = ("failure", str(exc)), 1
            except BaseException as exc:                 # everything reaches the parent
                message, status = ("error", f"{type(exc).__name__}: {exc}"), 1
            try:
                with open(there, "wb") as told:
                    pickle.dump(message, told, protocol=pickle.HIGHEST_PROTOCOL)
            finally:
                os._exit(status)
        os.close(there)
        self.pid, self._back = pid, back

    def join(self) -> Any:
        """Wait for the child; its result (what it placed is merged into the writer's), or the
        error it met raised here."""
        part, value = self._collect()
        self.writer.absorb(part)
        return value

    def close(self) -> None:
        """When ``join`` was not reached (the build stopped early): a failure the child reported
        is raised here; a child still rendering is stopped."""
        if self.pid is None or self._back is None:
            return
        told, _, _ = select.select([self._back], [], [], 2.0)
        if not told:                                     # still at work: the build is over anyway
            os.kill(self.pid, signal.SIGKILL)
            os.close(self._back)
            os.waitpid(self.pid, 0)
            self.pid = self._back = None
            return
        self._collect()

    def _collect(self) -> Any:
        """Read the child's message and reap it; an error it met is raised here."""
        if self.pid is None or self._back is None:
            raise RuntimeError("the share's process was not started")
        with open(self._back, "rb") as back:
            data = back.read()
        _, status = os.waitpid(self.pid, 0)
        self.pid = self._back = None
        try:
            kind, value = pickle.loads(data)
        except (pickle.UnpicklingError, EOFError, ValueError):
            kind, value = "error", f"it ended with status {status} and said nothing"
        if kind == "stale":
            raise StaleTree(value)
        if kind == "failure":
            raise RenderError(value)
        if kind != "ok":
            raise RenderError(f"rendering a share of the services in a second process failed: {value}")
        return value

"""A lock so that two runs never write at once.

``run_lock(store_path)`` holds an exclusive ``flock`` on ``<store>.lock`` for
the duration of a run. The operating system releases it when the process
ends, however it ends (even SIGKILL), so a crash never leaves a stale lock.
A second run either waits (``wait_s``) or fails at once with ``LockError``.

A process forked while the lock is held (a render worker) closes its copy of
the descriptor at once: an ``flock`` belongs to the open file, shared by every
copy of the descriptor, so a worker that outlived a killed run would otherwise
keep the lock from the next one.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from statusgen.errors import LockError
from statusgen.store.failures import store_failure

_held: set[int] = set()  # the descriptors of the locks this process holds


def _close_in_child() -> None:
    """In a forked child: drop the copies of the parent's lock descriptors. Closing a copy leaves
    the parent's lock held; only the parent's own close (or its death) releases it."""
    for fd in _held:
        os.close(fd)
    _held.clear()


os.register_at_fork(after_in_child=_close_in_child)


def lock_path(store: Path) -> Path:
    return store.with_name(store.name + ".lock")


def _holder(path: Path) -> str:
    try:
        return path.read_text().strip() or "another process"
    except OSError:
        return "another process"


@contextmanager
def run_lock(store: Path, wait_s: float = 0.0) -> Iterator[None]:
    path = lock_path(store)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    _held.add(fd)
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise LockError(
                        f"{path}: another run holds the lock ({_holder(path)}); it is still "
                        f"writing. Wait for it, or pass --wait-lock SECONDS."
                    ) from None
                time.sleep(0.1)
        os.ftruncate(fd, 0)
        os.write(fd, f"pid {os.getpid()} since {time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())}\n".encode())
        yield
    finally:
        if fd in _held:  # else this is a forked child, which closed its copy as it started
            _held.discard(fd)
            os.close(fd)  # closing releases the lock


@contextmanager
def lock_store(path: Path, wait_s: float = 0.0) -> Iterator[None]:
    """The run lock beside the store (``run_lock``), a folder that cannot hold it being the
    store's error: it is the store's folder that must be writable."""
    with ExitStack() as stack:
        try:
            stack.enter_context(run_lock(path, wait_s))
        except OSError as exc:
            raise store_failure(lock_path(path), exc, "take the run lock beside the store") from None
        yield

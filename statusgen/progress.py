"""How far long work has come. A long piece of work is handed a ``Progress``: given a label and
the length of the work, it gives a context that takes each step's count. ``quiet`` tells nothing,
as logs and CI want; the command line hands a bar on a terminal (``cli.progress``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

Advance = Callable[[int], None]
Progress = Callable[[str, int], AbstractContextManager[Advance]]


def untold(count: int) -> None:
    """An advance nobody is shown."""


@contextmanager
def quiet(label: str, length: int) -> Iterator[Advance]:
    """Progress that tells nothing."""
    yield untold

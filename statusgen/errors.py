"""The one exception tree of statusgen.

StatusgenError            anything a user can cause and fix; the CLI prints
 |                        it as one line and exits non-zero, no traceback
 +-- ConfigError          the configuration file is invalid (lists every problem)
 +-- StoreError           the SQLite store cannot be opened, read or written, is damaged,
 |                        or is missing or empty where a run recorded one
 +-- RenderError          the output tree cannot be written
 +-- VendorParseError     a vendor payload is not in the expected shape
 +-- LockError            another run holds the lock
"""

from __future__ import annotations


class StatusgenError(Exception):
    """Base of every error a user can cause and fix."""

    exit_code = 1


class ConfigError(StatusgenError):
    """The configuration is invalid. ``problems`` holds every message."""

    exit_code = 2

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


class StoreError(StatusgenError):
    """Raised at the store's boundary (``store.Store``) for every error of SQLite."""

    exit_code = 3


class RenderError(StatusgenError):
    exit_code = 4


class VendorParseError(StatusgenError):
    """A vendor payload could not be read as the format asked for."""


class LockError(StatusgenError):
    exit_code = 5

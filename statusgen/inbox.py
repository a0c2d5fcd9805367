"""Where batches meet: a folder, or any rclone remote (``NAME:PATH``: S3, R2, GCS, SFTP...).

Agents put; the builder lists, gets and removes. A batch appears whole or not at all: a folder
inbox writes it under a dot name and renames it (a listing never shows names starting with a
dot), and object storage makes an object visible only once it is complete.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path
from typing import Protocol

from statusgen.batches import MAX_BYTES
from statusgen.config import Config
from statusgen.config.load import is_remote
from statusgen.config.secrets import expand
from statusgen.errors import ConfigError, StatusgenError
from statusgen.rclonecmd import LISTING_NOT_FOUND, rclone_error

RCLONE_TIMEOUT_S = 120.0  # one rclone call; an inbox that does not answer in this is down
# rclone retries each call three times and each request ten: the next run tries again anyway, and
# an agent keeps what it could not send, so one call gives up soon.
RCLONE_FLAGS = ["--retries", "1", "--low-level-retries", "2", "--contimeout", "10s"]


class InboxError(StatusgenError):
    """The inbox could not be reached, read or written; the message names it."""

    exit_code = 6


class Inbox(Protocol):
    where: str

    def put(self, name: str, data: bytes) -> None: ...

    def names(self) -> list[str]: ...

    def get(self, name: str) -> bytes: ...

    def remove(self, name: str) -> None: ...


class FolderInbox:
    def __init__(self, folder: Path):
        self.folder, self.where = folder, str(folder)

    def put(self, name: str, data: bytes) -> None:
        path = self.folder / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(prefix=".", dir=path.parent)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(temp, path)
        except OSError as exc:
            raise InboxError(f"inbox {self.where}: cannot write {name}: {exc.strerror or exc}") from None

    def names(self) -> list[str]:
        if not self.folder.is_dir():
            return []
        found = []
        for path in self.folder.rglob("*"):
            rel = path.relative_to(self.folder).as_posix()
            if path.is_file() and not any(part.startswith(".") for part in rel.split("/")):
                found.append(rel)
        return sorted(found)

    def get(self, name: str) -> bytes:
        try:
            with open(self.folder / name, "rb") as f:
                return f.read(MAX_BYTES + 1)  # a bigger one is refused for its size, never read whole
        except OSError as exc:
            raise InboxError(f"inbox {self.where}: cannot read {name}: {exc.strerror or exc}") from None

    def remove(self, name: str) -> None:
        try:
            (self.folder / name).unlink(missing_ok=True)
        except OSError as exc:
            raise InboxError(f"inbox {self.where}: cannot remove {name}: {exc.strerror or exc}") from None


class RcloneInbox:
    def __init__(self, remote: str, binary: str = "rclone"):
        self.remote, self.binary, self.where = remote.rstrip("/"), binary, remote

    def _run(self, argv: list[str], what: str, data: bytes | None = None, ok: tuple[int, ...] = (0,)) -> bytes:
        try:
            done = subprocess.run(
                [self.binary, *RCLONE_FLAGS, *argv],
                input=data,
                capture_output=True,
                timeout=RCLONE_TIMEOUT_S,
                check=False,
            )
        except OSError as exc:
            raise InboxError(f"inbox {self.where}: cannot run rclone ({self.binary}: {exc.strerror or exc})") from None
        except subprocess.TimeoutExpired:
            raise InboxError(f"inbox {self.where}: rclone {what} took more than {RCLONE_TIMEOUT_S:g} s") from None
        if done.returncode not in ok:
            said = rclone_error(done.stderr.decode("utf-8", "replace"), done.returncode)
            raise InboxError(f"inbox {self.where}: rclone {what} failed: {said}")
        return done.stdout if done.returncode == 0 else b""

    def put(self, name: str, data: bytes) -> None:
        self._run(["rcat", f"{self.remote}/{name}"], "rcat", data)

    def names(self) -> list[str]:
        listed = self._run(
            ["lsf", "--recursive", "--files-only", self.remote], "lsf", ok=(0, LISTING_NOT_FOUND)
        ).decode("utf-8", "replace")
        return sorted(n for n in listed.splitlines() if n and not any(p.startswith(".") for p in n.split("/")))

    def get(self, name: str) -> bytes:
        return self._run(["cat", "--count", str(MAX_BYTES + 1), f"{self.remote}/{name}"], "cat")

    def remove(self, name: str) -> None:
        self._run(["deletefile", f"{self.remote}/{name}"], "deletefile")


def open_inbox(where: str, remote: bool) -> Inbox:
    """The inbox at ``where``: an rclone remote, or a folder (an absolute path)."""
    return RcloneInbox(where) if remote else FolderInbox(Path(where))


def inbox_key(config: Config) -> bytes:
    """The key batches are signed with, from the environment variable the configuration names."""
    if config.site.inbox_key is None or config.site.inbox is None:
        raise ConfigError([f"{config.path.name}: [site]: probe agents need inbox and inbox_key (docs/locations.md)"])
    return expand(config.site.inbox_key).encode("utf-8")


def config_inbox(config: Config) -> Inbox:
    assert config.site.inbox is not None
    return open_inbox(config.site.inbox, is_remote(config.site.inbox))

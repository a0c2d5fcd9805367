"""Where batches meet: a folder, or any rclone remote (``NAME:PATH``: S3, R2, GCS, SFTP...).

Agents put; the builder lists, gets and removes. A batch appears whole or not at all: a folder
inbox writes it under a dot name and renames it (a listing never shows names starting with a
dot), and object storage makes an object visible only once it is complete.

An inbox touches batches only: it removes no name but a batch's (``batches.NAME``), and it may
not be, hold or sit among what statusgen keeps elsewhere (``inbox_place_problems``): an inbox
shared with the configuration, the store, the site or the notes would take their files for
batches, and an agent's files would be published.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path, PurePosixPath
from stat import S_ISREG
from typing import Protocol

from statusgen.batches import MAX_BYTES, NAME
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

    def listing(self) -> list[tuple[str, int | None]]: ...

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
        return [name for name, _ in self.listing()]

    def listing(self) -> list[tuple[str, int | None]]:
        """Every file's name and size, but those under a dot name (being written)."""
        if not self.folder.is_dir():
            return []
        found = []
        for path in self.folder.rglob("*"):
            rel = path.relative_to(self.folder).as_posix()
            if any(part.startswith(".") for part in rel.split("/")):
                continue
            try:
                stat = path.lstat()
            except OSError:
                continue  # gone since the listing: never a reason to stop
            if S_ISREG(stat.st_mode):
                found.append((rel, stat.st_size))
        return sorted(found)

    def get(self, name: str) -> bytes:
        try:
            with open(self.folder / name, "rb") as f:
                return f.read(MAX_BYTES + 1)  # a bigger one is refused for its size, never read whole
        except OSError as exc:
            raise InboxError(f"inbox {self.where}: cannot read {name}: {exc.strerror or exc}") from None

    def remove(self, name: str) -> None:
        _only_batches(self.where, name)
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
        return [name for name, _ in self.listing()]

    def listing(self) -> list[tuple[str, int | None]]:
        """Every object's name and size, as rclone lists them (size first: a name may hold the
        separator), but those under a dot name."""
        listed = self._run(
            ["lsf", "--recursive", "--files-only", "--format", "sp", "--separator", ";", self.remote],
            "lsf",
            ok=(0, LISTING_NOT_FOUND),
        ).decode("utf-8", "replace")
        found = []
        for line in listed.splitlines():
            size, _, name = line.partition(";")
            if name and not any(p.startswith(".") for p in name.split("/")):
                found.append((name, int(size) if size.isdigit() else None))
        return sorted(found)

    def get(self, name: str) -> bytes:
        return self._run(["cat", "--count", str(MAX_BYTES + 1), f"{self.remote}/{name}"], "cat")

    def remove(self, name: str) -> None:
        _only_batches(self.where, name)
        self._run(["deletefile", f"{self.remote}/{name}"], "deletefile")


def _only_batches(where: str, name: str) -> None:
    """What must stay true of every removal: the name is a batch's, whoever asks."""
    if NAME.fullmatch(name) is None:
        raise InboxError(f"inbox {where}: {name[:200]!r} is not a batch's name; it is left as it is")


def open_inbox(where: str, remote: bool) -> Inbox:
    """The inbox at ``where``: an rclone remote, or a folder (an absolute path)."""
    return RcloneInbox(where) if remote else FolderInbox(Path(where))


#: The least a key may hold: as much as the HMAC-SHA256 that it keys (32 bytes).
KEY_BITS = 256
HEX = frozenset("0123456789abcdefABCDEF")
BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")
MAKE_KEY = 'python3 -c "import secrets; print(secrets.token_hex(32))"'


def key_bits(key: str) -> int:
    """The most entropy a key can hold, by its alphabet: 4 bits a hex digit (``token_hex``), 6 a
    base64 character (``token_urlsafe``); a key of fewer than 8 distinct characters holds none
    worth the name."""
    body = key.rstrip("=")
    if len(set(body)) < 8:
        return 0
    if set(body) <= HEX:
        return 4 * len(body)
    return 6 * len(body)


def inbox_key(config: Config, location: str | None = None) -> bytes:
    """The key the batches of ``location`` are signed with (its own ``inbox_key``, else the
    site's), from the environment variable the configuration names; a key too weak to sign with
    is a configuration error, on the agent as on the main host."""
    own = next((loc.inbox_key for loc in config.locations if loc.name == location), None)
    reference = own or config.site.inbox_key
    if reference is None or config.site.inbox is None:
        raise ConfigError([f"{config.path.name}: [site]: probe agents need inbox and inbox_key (docs/locations.md)"])
    key = expand(reference)
    where = f"location {location}: inbox_key" if own else "[site]: inbox_key"
    if key_bits(key) < KEY_BITS:
        said = "is empty" if not key else f"holds at most {key_bits(key)} bits"
        raise ConfigError(
            [
                f"{config.path.name}: {where}: the key in {reference} {said}; a key needs {KEY_BITS} bits "
                f"(64 hex digits or 43 base64 characters): make one with {MAKE_KEY}"
            ]
        )
    return key.encode("utf-8")


def location_keys(config: Config) -> dict[str, bytes]:
    """Each agent's key, by location: a batch is verified with its own location's only."""
    return {loc.name: inbox_key(config, loc.name) for loc in config.locations}


def _overlap(a: PurePosixPath | Path, b: PurePosixPath | Path) -> str | None:
    """How ``a`` stands to ``b``: is it, holds it, or sits inside it (None: apart)."""
    if a == b:
        return "is"
    if a in b.parents:
        return "holds"
    return "sits inside" if b in a.parents else None


def inbox_place_problems(config: Config, publish_remote: str | None = None) -> list[str]:
    """Why the inbox may not be where it is: a folder inbox that is or holds the configuration's
    folder or the store's, or that is, holds or sits inside the site tree or the notes folder; an
    rclone inbox that is, holds or sits inside the remote path the site is published to."""
    inbox = config.site.inbox
    if inbox is None:
        return []
    where = f"{config.path.name}: [site]: inbox {inbox}"
    fix = "give the inbox a folder or bucket of its own (docs/locations.md)"
    problems = []
    if is_remote(inbox):
        if publish_remote and is_remote(publish_remote):
            # a remote's path follows its last colon (a connection string's values may hold colons)
            (a_name, _, a_path), (b_name, _, b_path) = (r.rstrip("/").rpartition(":") for r in (inbox, publish_remote))
            how = _overlap(PurePosixPath("/", a_path), PurePosixPath("/", b_path)) if a_name == b_name else None
            if how:
                problems.append(f"{where} {how} the remote the site is published to ({publish_remote}); {fix}")
        return problems
    folder = Path(os.path.realpath(inbox))
    site = config.site
    gens = site.output.with_name(site.output.name + ".gens")
    kept: list[tuple[str, Path, tuple[str, ...]]] = [
        ("the configuration's folder", config.path.parent, ("is", "holds")),
        ("the store's folder", site.store.parent, ("is", "holds")),
        ("the site tree", site.output, ("is", "holds", "sits inside")),
        ("the site's generations", gens, ("is", "holds", "sits inside")),
        ("the notes folder", site.notes, ("is", "holds", "sits inside")),
    ]
    for what, path, refused in kept:
        how = _overlap(folder, Path(os.path.realpath(path)))
        if how in refused:
            problems.append(f"{where} {how} {what} ({path}); {fix}")
    return problems


def check_inbox_place(config: Config, publish_remote: str | None = None) -> None:
    """``inbox_place_problems`` as a configuration error (exit 2), naming each."""
    problems = inbox_place_problems(config, publish_remote)
    if problems:
        raise ConfigError(problems)


def config_inbox(config: Config) -> Inbox:
    """The configuration's inbox, once its place is checked."""
    assert config.site.inbox is not None
    check_inbox_place(config)
    return open_inbox(config.site.inbox, is_remote(config.site.inbox))

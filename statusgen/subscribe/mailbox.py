"""The messages that arrive at the subscriptions' address: read bounded, each acted on once.

A mailbox is an IMAP server (``imaps://``, ``imap+starttls://``, ``imap://`` on this host) or a
Maildir folder a host's own delivery fills. Both give the same thing: the oldest messages not yet
marked done, at most ``limit`` of them, each at most ``MAX_MESSAGE_BYTES`` read (a larger one is
listed with ``raw=None``, so the caller can mark it done without ever holding it); ``done`` marks
them so no later run lists them again.

Every failure to reach, log in to or read the mailbox leaves here as ``MailboxError``: one line
naming the mailbox (``MailServer.shown``) and what to correct, never a secret.
"""

from __future__ import annotations

import hashlib
import imaplib
import os
import re
import ssl
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

from statusgen.config.records import MailServer, SubscriptionsConfig
from statusgen.config.secrets import expand
from statusgen.errors import StatusgenError

#: A visitor's request fits in a few kilobytes; a larger message is never read further than this.
MAX_MESSAGE_BYTES = 256 * 1024
#: The keyword that marks a message as read by statusgen, apart from the operator's own \Seen.
DONE_KEYWORD = "$StatusgenRead"


class MailboxError(StatusgenError):
    """The mailbox cannot be reached, logged in to or read; the message names it and the fix."""


@dataclass(frozen=True)
class Letter:
    """One message of the mailbox, as a run sees it."""

    ref: str  # how the mailbox names it: an IMAP UID, a Maildir file (new/NAME or cur/NAME:2,FLAGS)
    digest: str  # sha256 hex naming it for good, whatever its flags or folder become
    raw: bytes | None  # its bytes; None when larger than MAX_MESSAGE_BYTES
    size: int  # its size in bytes, as far as it is known (at least MAX_MESSAGE_BYTES + 1 when raw is None)


class Connection(ABC):
    """Something held open (a mail server's connection); use it in a ``with`` block so it is let go."""

    @abstractmethod
    def close(self) -> None:
        """Let go of it."""

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.close()


class Mailbox(Connection):
    """An open mailbox."""

    @abstractmethod
    def letters(self, limit: int) -> list[Letter]:
        """At most ``limit`` messages not yet marked done, oldest first."""

    @abstractmethod
    def done(self, letters: Sequence[Letter]) -> None:
        """Mark ``letters`` so they are never listed again."""


def open_mailbox(config: SubscriptionsConfig, env: Mapping[str, str]) -> Mailbox:
    """The configured mailbox, connected and logged in (IMAP) or checked (a folder)."""
    server = config.mailbox
    if server.folder is not None:
        return MaildirMailbox(server.folder)
    return ImapMailbox.connect(server, env, config.timeout)


def sha256(*parts: str) -> str:
    return hashlib.sha256("\0".join(parts).encode("utf-8", "surrogateescape")).hexdigest()


def without_secrets(text: str, secrets: Sequence[str]) -> str:
    """``text`` with every secret blanked: a server may echo what it was sent in its errors."""
    for secret in secrets:
        if len(secret) >= 3:  # shorter ones would blank ordinary words ("ref***sed"); no server echoes them
            text = text.replace(secret, "***")
    return text


# -- IMAP ------------------------------------------------------------------------------------------


def bounded_literal(size: int) -> int:
    """A literal's size, refused past what a partial fetch of ours can ask for: imaplib reads a
    literal whole into memory, so a server that ignores the partial fetch must not get that far."""
    if size > MAX_MESSAGE_BYTES + 1:
        raise imaplib.IMAP4.abort(f"it sent {size} bytes where at most {MAX_MESSAGE_BYTES + 1} were asked for")
    return size


class _PlainImap(imaplib.IMAP4):
    def read(self, size: int) -> bytes:
        return super().read(bounded_literal(size))


class _TlsImap(imaplib.IMAP4_SSL):
    def read(self, size: int) -> bytes:
        return super().read(bounded_literal(size))


FETCHED_UID = re.compile(rb"\bUID (\d+)")
FETCHED_SIZE = re.compile(rb"\bRFC822\.SIZE (\d+)")


def quoted(name: str) -> str:
    """A folder name as an IMAP quoted string (imaplib sends arguments as they are)."""
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


class ImapMailbox(Mailbox):
    """A folder of an IMAP server, selected read-write for one run."""

    def __init__(self, server: MailServer, imap: imaplib.IMAP4, secrets: Sequence[str]) -> None:
        self.server, self.imap, self.secrets = server, imap, secrets
        self.uidvalidity = ""
        self.keywords = False  # whether the folder keeps our own keyword (else \Seen marks done)

    @classmethod
    def connect(cls, server: MailServer, env: Mapping[str, str], timeout: float) -> ImapMailbox:
        user, password = expand(server.user or "", env), expand(server.password or "", env)
        secrets = (password,)  # the user name is no secret, and blanking a short one garbles the line
        with failures(server, secrets, "could not be reached"):
            imap = cls.transport(server, timeout)
        box = cls(server, imap, secrets)
        try:
            box.login(user, password)
            box.select()
        except BaseException:
            box.close()
            raise
        return box

    @staticmethod
    def transport(server: MailServer, timeout: float) -> imaplib.IMAP4:
        if server.scheme == "imaps":
            return _TlsImap(server.host, server.port, ssl_context=ssl.create_default_context(), timeout=timeout)
        imap = _PlainImap(server.host, server.port, timeout=timeout)
        if server.scheme == "imap+starttls":
            if "STARTTLS" not in imap.capabilities:
                imap.shutdown()
                raise MailboxError(
                    f"the mailbox {server.shown} does not offer STARTTLS; use imaps:// if it speaks TLS "
                    f"from the start, or a mailbox that offers STARTTLS"
                )
            imap.starttls(ssl.create_default_context())
        return imap

    def login(self, user: str, password: str) -> None:
        with failures(self.server, self.secrets, "refused the login", "check mailbox_user and mailbox_password"):
            self.imap.login(user, password)

    def select(self) -> None:
        folder = self.server.path
        fix = f'check the folder "{folder}" in [subscriptions] mailbox'
        with failures(self.server, self.secrets, "cannot open its folder", fix):
            kind, said = self.imap.select(quoted(folder))
            if kind != "OK":
                raise imaplib.IMAP4.error(answer(said))
            _, validity = self.imap.response("UIDVALIDITY")
            _, flags = self.imap.response("PERMANENTFLAGS")
        self.uidvalidity = validity[-1].decode("ascii", "replace") if validity and validity[-1] else ""
        self.keywords = any(b"\\*" in (f or b"") for f in flags or [])

    def letters(self, limit: int) -> list[Letter]:
        with failures(self.server, self.secrets, "could not be read"):
            uids = self.search()[:limit]
            sizes = self.sizes(uids)
            letters = (self.letter(uid, sizes.get(uid, 0)) for uid in uids)
            return [letter for letter in letters if letter is not None]

    def search(self) -> list[int]:
        """The UIDs not marked done, oldest (lowest) first."""
        criteria = ("UNKEYWORD", DONE_KEYWORD) if self.keywords else ("UNSEEN",)
        kind, found = self.imap.uid("SEARCH", *criteria)
        if kind != "OK":
            raise imaplib.IMAP4.error(f"SEARCH failed: {answer(found)}")
        return sorted({int(n) for line in found if isinstance(line, bytes) for n in line.split()})

    def sizes(self, uids: Sequence[int]) -> dict[int, int]:
        if not uids:
            return {}
        kind, found = self.imap.uid("FETCH", ",".join(map(str, uids)), "(RFC822.SIZE)")
        if kind != "OK":
            raise imaplib.IMAP4.error(f"FETCH failed: {answer(found)}")
        sizes = {}
        for line in found:
            head = line[0] if isinstance(line, tuple) else line
            uid, size = FETCHED_UID.search(head or b""), FETCHED_SIZE.search(head or b"")
            if uid and size:
                sizes[int(uid.group(1))] = int(size.group(1))
        return sizes

    def letter(self, uid: int, size: int) -> Letter | None:
        """The message of ``uid``; None when it went away meanwhile (another client deleted it)."""
        digest = sha256("imap", self.server.shown, self.server.path, self.uidvalidity, str(uid))
        if size > MAX_MESSAGE_BYTES:
            return Letter(str(uid), digest, None, size)
        # a partial fetch: a server that reported a smaller size still sends no more than this
        kind, found = self.imap.uid("FETCH", str(uid), f"(BODY.PEEK[]<0.{MAX_MESSAGE_BYTES + 1}>)")
        if kind != "OK":
            raise imaplib.IMAP4.error(f"FETCH failed: {answer(found)}")
        raw = next((part[1] for part in found if isinstance(part, tuple) and FETCHED_UID.search(part[0])), None)
        if raw is None:
            return None
        if len(raw) > MAX_MESSAGE_BYTES:
            return Letter(str(uid), digest, None, max(size, len(raw)))
        return Letter(str(uid), digest, raw, len(raw))

    def done(self, letters: Sequence[Letter]) -> None:
        if not letters:
            return
        flags = f"(\\Seen {DONE_KEYWORD})" if self.keywords else "(\\Seen)"
        with failures(self.server, self.secrets, "did not keep the messages marked read"):
            kind, said = self.imap.uid("STORE", ",".join(letter.ref for letter in letters), "+FLAGS.SILENT", flags)
            if kind != "OK":
                raise imaplib.IMAP4.error(f"STORE failed: {answer(said)}")

    def close(self) -> None:
        with suppress(OSError, EOFError, imaplib.IMAP4.error):
            self.imap.logout()  # leaving anyway: a server ends a session that went wrong itself


@contextmanager
def failures(server: MailServer, secrets: Sequence[str], what: str, fix: str = "") -> Iterator[None]:
    """Turns what the network, TLS and imaplib raise into one ``MailboxError`` line."""
    try:
        yield
    except (OSError, EOFError, imaplib.IMAP4.error) as error:
        said = without_secrets(reason(error), secrets)
        fix = fix or "check [subscriptions] mailbox and that the server answers from this host"
        raise MailboxError(f"the mailbox {server.shown} {what} ({said}); {fix}") from None


def answer(found: Sequence[object]) -> str:
    """What an IMAP server said, as text (imaplib gives a list of bytes and tuples)."""
    return " ".join(line.decode("utf-8", "replace") for line in found if isinstance(line, bytes))


def reason(error: BaseException) -> str:
    """What went wrong, in a few words: the exception's text, or its kind where it has none."""
    if isinstance(error, TimeoutError):
        return "no answer in time"
    if isinstance(error, ssl.SSLCertVerificationError):
        return f"its TLS certificate is not trusted: {error.verify_message}"
    if isinstance(error, ssl.SSLError) and error.reason:
        return f"TLS failed: {error.reason}"  # without the C source's file and line
    text = str(error).strip()
    if isinstance(error, OSError) and error.strerror:
        text = error.strerror
    return " ".join(text.split())[:200] or type(error).__name__


# -- Maildir ---------------------------------------------------------------------------------------


class MaildirMailbox(Mailbox):
    """A Maildir a host's delivery fills: new/ holds what no reader took yet; a message in cur/ is
    done once its info carries the S (seen) flag."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        missing = [name for name in ("new", "cur", "tmp") if not (folder / name).is_dir()]
        if missing:
            what = "does not exist" if not folder.exists() else f"is not a Maildir (no {', '.join(missing)})"
            raise MailboxError(
                f"the mailbox folder {folder} {what}; make it a Maildir (new/, cur/, tmp/), or correct "
                f"[subscriptions] mailbox"
            )

    def letters(self, limit: int) -> list[Letter]:
        try:
            pending = sorted(self.pending())
            return [self.letter(ref) for _, _, ref in pending[:limit]]
        except OSError as error:
            raise MailboxError(f"the mailbox folder {self.folder} could not be read ({reason(error)})") from None

    def pending(self) -> list[tuple[float, str, str]]:
        """(mtime, name, ref) of each message not marked done."""
        found = []
        for sub in ("new", "cur"):
            with os.scandir(self.folder / sub) as entries:
                for entry in entries:
                    if entry.name.startswith(".") or not entry.is_file() or (sub == "cur" and seen(entry.name)):
                        continue
                    found.append((entry.stat().st_mtime, entry.name, f"{sub}/{entry.name}"))
        return found

    def letter(self, ref: str) -> Letter:
        digest = sha256(ref.split("/", 1)[1].split(":", 1)[0])
        with open(self.folder / ref, "rb") as file:
            raw = file.read(MAX_MESSAGE_BYTES + 1)
            size = max(os.fstat(file.fileno()).st_size, len(raw))
        return Letter(ref, digest, raw if len(raw) <= MAX_MESSAGE_BYTES else None, size)

    def close(self) -> None:
        """A folder holds nothing open."""

    def done(self, letters: Sequence[Letter]) -> None:
        for letter in letters:
            name = letter.ref.split("/", 1)[1]
            try:
                os.rename(self.folder / letter.ref, self.folder / "cur" / with_seen(name))
            except FileNotFoundError:
                pass  # another reader took it away: it is not listed again either way
            except OSError as error:
                raise MailboxError(
                    f"the mailbox folder {self.folder} did not let a message be marked read ({reason(error)}); "
                    f"statusgen needs to write to its new/ and cur/"
                ) from None


def seen(name: str) -> bool:
    """Whether a Maildir file name's info (after ``:2,``) carries the S flag."""
    info = name.partition(":")[2]
    return info.startswith("2,") and "S" in info[2:]


def with_seen(name: str) -> str:
    """The file name with S among its flags, kept in ASCII order as Maildir asks."""
    base, _, info = name.partition(":")
    flags = info[2:] if info.startswith("2,") else ""
    return f"{base}:2,{''.join(sorted(set(flags + 'S')))}"

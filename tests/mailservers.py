"""Real mail servers on loopback for the subscriptions' tests: Debian's Dovecot as the mailbox
(IMAP, a passwd-file user, a Maildir) and aiosmtpd as the mail server statusgen sends through.

Import the fixtures by name where they are used::

    from tests.mailservers import dovecot_fixture, dovecot_server_fixture, relay_fixture  # noqa: F401

    def test_something(dovecot: Dovecot, relay: Relay) -> None: ...

A fixture's function is named ``<fixture>_fixture`` so that a test's argument does not shadow an
import; import those it depends on too (``dovecot`` needs ``dovecot_server``; ``dovecot_tls`` needs
``dovecot_tls_server`` and ``mail_ca``; ``trust_mail_ca`` needs ``mail_ca``).

``dovecot`` gives a new folder per test on one Dovecot of the session (``Dovecot``: its ``url``,
``deliver`` a message, read ``flags``);
``relay`` records what it receives (``Relay.received``) and refuses the addresses of ``refuse``;
``start_relay`` makes one with logins (``users``), TLS, or a short idle timeout. ``dovecot_tls`` and
``MailCA.server_context()`` speak TLS under the session's ``mail_ca``, which ``trust_mail_ca`` makes
statusgen trust.
"""

from __future__ import annotations

import asyncio
import imaplib
import itertools
import os
import pwd
import re
import shutil
import socket
import ssl
import subprocess
import tempfile
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
import trustme
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from tests.conformance import free_port

DOVECOT = shutil.which("dovecot") or "/usr/sbin/dovecot"

DOVECOT_CONF = """\
base_dir = {root}/run
state_dir = {root}/state
log_path = {log}
listen = 127.0.0.1
protocols = imap
{ssl}
disable_plaintext_auth = no
auth_mechanisms = plain login
default_internal_user = dovecot
default_login_user = dovenull
first_valid_uid = 100
# a refused login answers at once, and the next ones are not slowed down: tests try wrong passwords
auth_failure_delay = 0
service anvil {{
  unix_listener anvil-auth-penalty {{
    mode = 0
  }}
}}
mail_location = maildir:{root}/mail
passdb {{
  driver = passwd-file
  args = {root}/passwd
}}
userdb {{
  driver = static
  args = uid=dovecot gid=dovecot home={root}/home
}}
service imap-login {{
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {tls_port}
  }}
}}
"""


@dataclass(frozen=True)
class Certificate:
    chain: Path  # the certificate, then the CA's
    key: Path


@dataclass(frozen=True)
class MailCA:
    """A CA of the test session and a certificate it issued for 127.0.0.1."""

    ca: Path  # the CA's certificate, to trust (SSL_CERT_FILE)
    certificate: Certificate

    def server_context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(self.certificate.chain, self.certificate.key)
        return context


@pytest.fixture(name="mail_ca", scope="session")
def mail_ca_fixture(tmp_path_factory: pytest.TempPathFactory) -> MailCA:
    folder = tmp_path_factory.mktemp("mail-ca")
    ca = trustme.CA(organization_name="Statusgen Mail Test CA")
    issued = ca.issue_cert("127.0.0.1")
    ca.cert_pem.write_to_path(str(folder / "ca.pem"))
    issued.private_key_pem.write_to_path(str(folder / "key.pem"))
    with open(folder / "chain.pem", "wb") as chain:
        for blob in issued.cert_chain_pems:
            chain.write(blob.bytes())
    return MailCA(folder / "ca.pem", Certificate(folder / "chain.pem", folder / "key.pem"))


@pytest.fixture(name="trust_mail_ca")
def trust_mail_ca_fixture(mail_ca: MailCA, monkeypatch: pytest.MonkeyPatch) -> MailCA:
    """``ssl.create_default_context()`` trusts ``mail_ca`` (and only it) for the test."""
    monkeypatch.setenv("SSL_CERT_FILE", str(mail_ca.ca))
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    return mail_ca


@dataclass
class Dovecot:
    """A Dovecot serving one user's Maildir over plain IMAP on loopback."""

    port: int
    root: Path  # its own folder: configuration, sockets, state, the Maildir
    log: Path
    process: subprocess.Popen[bytes] | None = None  # its master, in the foreground
    host: str = "127.0.0.1"
    user: str = "status"
    password: str = "imap-s3cret-Pw"
    folder: str = "INBOX"  # the test's own folder: what the methods act on unless told
    tls_port: int = 0  # imaps://, when it has a certificate (it then offers STARTTLS on port too)

    @property
    def config(self) -> Path:
        return self.root / "dovecot.conf"

    @property
    def maildir(self) -> Path:
        """The folder's Maildir (Dovecot's Maildir++: a folder is a dot-named Maildir in INBOX's)."""
        return self.root / "mail" if self.folder == "INBOX" else self.root / "mail" / f".{self.folder}"

    def url(self, scheme: str = "imap", folder: str | None = None) -> str:
        port = self.tls_port if scheme == "imaps" else self.port
        return f"{scheme}://{self.host}:{port}/{self.folder if folder is None else folder}"

    @contextmanager
    def session(self, folder: str | None = None) -> Iterator[imaplib.IMAP4]:
        """The test's own IMAP session as the user, with ``folder`` selected."""
        imap = imaplib.IMAP4(self.host, self.port, timeout=30)
        try:
            imap.login(self.user, self.password)
            kind, said = imap.select(folder or self.folder)
            assert kind == "OK", said
            yield imap
        finally:
            imap.logout()

    def deliver(self, raw: bytes) -> int:
        """Puts a message in the folder as a delivery would (IMAP APPEND); its UID."""
        with self.session() as imap:
            kind, said = imap.append(self.folder, None, None, raw)
        assert kind == "OK", said
        found = re.search(rb"APPENDUID \d+ (\d+)", said[0] or b"")
        assert found, said
        return int(found.group(1))

    def flags(self) -> dict[int, set[str]]:
        """Each message's UID and flags in the folder, as the server keeps them."""
        with self.session() as imap:
            kind, found = imap.uid("FETCH", "1:*", "(FLAGS)")
        assert kind == "OK", found
        out = {}
        for line in found:
            if isinstance(line, bytes) and (m := re.search(rb"UID (\d+) FLAGS \(([^)]*)\)", line)):
                out[int(m.group(1))] = set(m.group(2).decode().split())
        return out

    def messages(self) -> list[tuple[int, set[str], bytes]]:
        """Each message of the folder: its UID, flags and bytes, in UID order."""
        flags = self.flags()
        with self.session() as imap:
            kind, found = imap.uid("FETCH", "1:*", "(BODY.PEEK[])")
        assert kind == "OK", found
        bodies = {}
        for part in found:
            if isinstance(part, tuple) and (m := re.search(rb"UID (\d+)", part[0])):
                bodies[int(m.group(1))] = part[1]
        return [(uid, flags[uid], bodies[uid]) for uid in sorted(bodies)]

    def create(self, folder: str) -> None:
        with self.session("INBOX") as imap:
            kind, said = imap.create(folder)
        assert kind == "OK", said


def start_dovecot(log: Path, certificate: Certificate | None = None) -> Dovecot:
    """Dovecot in a folder of its own, answering on a free loopback port.

    Not in pytest's tmp_path: that is root's alone (0700), and Dovecot's login and mail processes
    run as dovenull and dovecot, which must reach their sockets and the Maildir. Run as root, it
    needs no more: the master is root, its children are not. With a ``certificate`` it also
    answers imaps:// and offers STARTTLS; without, it speaks plain IMAP alone."""
    root = Path(tempfile.mkdtemp(prefix="statusgen-dovecot-"))
    root.chmod(0o755)
    dovecot = Dovecot(port=0, root=root, log=log)
    (root / "passwd").write_text(f"{dovecot.user}:{{PLAIN}}{dovecot.password}::::::\n")
    owner = pwd.getpwnam("dovecot")
    for name in ("mail", "home"):
        (root / name).mkdir()
        os.chown(root / name, owner.pw_uid, owner.pw_gid)
    for _ in range(3):  # another test may take the free port first
        dovecot.port, dovecot.tls_port = free_port(), free_port() if certificate else 0
        ssl = f"ssl = yes\nssl_cert = <{certificate.chain}\nssl_key = <{certificate.key}" if certificate else "ssl = no"
        conf = DOVECOT_CONF.format(root=root, log=log, port=dovecot.port, tls_port=dovecot.tls_port, ssl=ssl)
        dovecot.config.write_text(conf)
        # -F: in the foreground, so the test holds its master and can always end it
        dovecot.process = subprocess.Popen([DOVECOT, "-F", "-c", str(dovecot.config)], stdin=subprocess.DEVNULL)
        if answers(dovecot):
            return dovecot
        stop_dovecot(dovecot)
    stop_dovecot(dovecot, remove=True)
    raise RuntimeError(f"dovecot did not start: {log.read_text() if log.exists() else 'no log'}")


def answers(dovecot: Dovecot, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline and dovecot.process is not None and dovecot.process.poll() is None:
        try:
            socket.create_connection((dovecot.host, dovecot.port), timeout=0.5).close()
            return True
        except OSError:
            time.sleep(0.02)
    return False


def stop_dovecot(dovecot: Dovecot, remove: bool = False) -> None:
    """SIGTERM to the master, as ``doveadm stop`` sends it (which then polls for a further 2 s: the
    master's own shutdown takes 1.1 s), then a kill if it is still there after 10 s."""
    if dovecot.process is not None and dovecot.process.poll() is None:
        dovecot.process.terminate()
        try:
            dovecot.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            dovecot.process.kill()
            dovecot.process.wait()
    if remove:
        shutil.rmtree(dovecot.root, ignore_errors=True)


@contextmanager
def running_dovecot(log: Path, certificate: Certificate | None = None) -> Iterator[Dovecot]:
    assert os.path.exists(DOVECOT), "dovecot is not installed: run `make system` (scripts/system-packages.sh)"
    server = start_dovecot(log, certificate)
    try:
        yield server
    finally:
        stop_dovecot(server, remove=True)


@pytest.fixture(name="dovecot_server", scope="session")
def dovecot_server_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Dovecot]:
    """One Dovecot for the session: its master takes a second to stop, a folder a test nothing."""
    with running_dovecot(tmp_path_factory.mktemp("dovecot") / "dovecot.log") as server:
        yield server


@pytest.fixture(name="dovecot")
def dovecot_fixture(dovecot_server: Dovecot) -> Dovecot:
    """The session's Dovecot with a new, empty folder of the test's own."""
    return with_new_folder(dovecot_server)


@pytest.fixture(name="dovecot_tls_server", scope="session")
def dovecot_tls_server_fixture(tmp_path_factory: pytest.TempPathFactory, mail_ca: MailCA) -> Iterator[Dovecot]:
    with running_dovecot(tmp_path_factory.mktemp("dovecot-tls") / "dovecot.log", mail_ca.certificate) as server:
        yield server


@pytest.fixture(name="dovecot_tls")
def dovecot_tls_fixture(dovecot_tls_server: Dovecot) -> Dovecot:
    """A Dovecot with TLS (imaps:// and STARTTLS) under ``mail_ca``'s certificate, a folder of the
    test's own; use ``trust_mail_ca`` for statusgen to trust it."""
    return with_new_folder(dovecot_tls_server)


def with_new_folder(server: Dovecot) -> Dovecot:
    folder = f"test{next(FOLDERS)}"
    server.create(folder)
    return replace(server, folder=folder)


FOLDERS = itertools.count(1)


# -- the mail server ------------------------------------------------------------------------------


@dataclass
class Received:
    """One message as the relay took it."""

    mail_from: str
    rcpt_tos: list[str]
    raw: bytes
    peer: tuple[str, int]  # the client's address: one connection, one peer
    login: str | None  # the user it logged in as

    @property
    def message(self) -> EmailMessage:
        parsed = message_from_bytes(self.raw, policy=policy.default)
        assert isinstance(parsed, EmailMessage)
        return parsed


@dataclass
class Relay:
    """aiosmtpd on loopback: records each message, refuses the recipients of ``refuse``
    (address -> (code, text): 5xx permanent, 4xx temporary)."""

    port: int
    host: str = "127.0.0.1"
    received: list[Received] = field(default_factory=list)
    refuse: dict[str, tuple[int, str]] = field(default_factory=dict)
    users: dict[str, str] = field(default_factory=dict)  # logins it takes (and then requires)
    logins: list[str] = field(default_factory=list)  # each successful AUTH, in order
    pause: float = 0.0  # seconds each message is held before the answer: a busy server, to kill a sender in
    hang_up: bool = False  # take each message, then close the connection without answering

    def url(self, scheme: str = "smtp") -> str:
        return f"{scheme}://{self.host}:{self.port}"

    @property
    def peers(self) -> list[tuple[str, int]]:
        return [r.peer for r in self.received]

    async def handle_RCPT(self, server: Any, session: Any, envelope: Any, address: str, options: list[str]) -> str:
        if address in self.refuse:
            code, text = self.refuse[address]
            return f"{code} {text}"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        login = session.auth_data.login.decode() if isinstance(session.auth_data, LoginPassword) else None
        received = Received(envelope.mail_from, list(envelope.rcpt_tos), envelope.original_content, session.peer, login)
        self.received.append(received)
        if self.pause:
            await asyncio.sleep(self.pause)
        if self.hang_up:
            server.transport.close()  # the message is taken; the client never hears so
        return "250 OK queued"

    def authenticate(self, server: Any, session: Any, envelope: Any, mechanism: str, data: Any) -> AuthResult:
        given = (data.login.decode(), data.password.decode()) if isinstance(data, LoginPassword) else None
        if given is None or self.users.get(given[0]) != given[1]:
            return AuthResult(success=False, handled=False)
        self.logins.append(given[0])
        return AuthResult(success=True, auth_data=data)


class QuietController(Controller):
    """A controller whose server does not warn of AUTH without TLS: on loopback, as intended."""

    def factory(self) -> Any:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "Requiring AUTH while not requiring TLS", UserWarning)
            return super().factory()  # type: ignore[no-untyped-call]


@contextmanager
def start_relay(
    users: dict[str, str] | None = None,
    idle_timeout: float = 300.0,
    tls: ssl.SSLContext | None = None,
    implicit: bool = False,
) -> Iterator[Relay]:
    """A relay; with ``users``, AUTH is offered in clear (loopback) and required before MAIL.
    ``idle_timeout``: seconds of silence after which it closes a connection, as servers do.
    ``tls`` (``MailCA.server_context()``): STARTTLS offered, or TLS from the start if ``implicit``."""
    relay = Relay(port=free_port(), users=dict(users or {}))
    options: dict[str, Any] = {"timeout": idle_timeout}
    if tls is not None:
        options["ssl_context" if implicit else "tls_context"] = tls
    if users:
        options.update(authenticator=relay.authenticate, auth_required=True, auth_require_tls=False)
    controller = QuietController(relay, hostname=relay.host, port=relay.port, **options)
    controller.start()
    try:
        yield relay
    finally:
        controller.stop()


@pytest.fixture(name="relay")
def relay_fixture() -> Iterator[Relay]:
    with start_relay() as server:
        yield server

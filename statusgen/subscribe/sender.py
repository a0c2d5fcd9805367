"""How the subscriptions' messages leave: through the operator's mail server, or into a folder.

A mail server is ``smtps://`` (TLS from the start), ``smtp+starttls://`` (refused when the server
does not offer STARTTLS: the login would cross the network in clear) or ``smtp://`` on this host.
One connection carries a run's messages; a server that dropped it between two is reconnected once.
A folder (``[subscriptions] smtp`` naming a path) receives each message as a Maildir, as a local
delivery would: for a trial, and for the demo, where nothing may leave the machine.

The envelope sender is the subscriptions' address, so that bounces come back to the mailbox that
is read. A recipient the server refuses is ``SendFailed`` (the next message goes on); a server that
cannot be reached or logged in to is ``MailServerError`` (nothing more can be sent this run).
"""

from __future__ import annotations

import mailbox
import smtplib
import ssl
import time
from abc import abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from email.message import EmailMessage
from email.utils import getaddresses
from pathlib import Path

from statusgen.config.records import MailServer, SubscriptionsConfig
from statusgen.config.secrets import expand
from statusgen.errors import StatusgenError
from statusgen.subscribe.mailbox import Connection, reason, without_secrets


class MailServerError(StatusgenError):
    """The mail server cannot be reached, does not do TLS as configured, or refuses the login or
    our address; the message names it and the fix."""


class SendFailed(Exception):
    """The server refused a message's recipient: ``permanent`` for a 5xx answer (the address
    does not take mail), not for a 4xx one (try again at a later run). ``said`` is its answer."""

    def __init__(self, said: str, permanent: bool) -> None:
        super().__init__(said)
        self.said, self.permanent = said, permanent


class Sender(Connection):
    """Where messages go."""

    @abstractmethod
    def send(self, message: EmailMessage) -> None:
        """Hand ``message`` over for its ``To`` addresses, with our address as the envelope sender."""


def open_sender(config: SubscriptionsConfig, env: Mapping[str, str]) -> Sender:
    """The configured mail server, connected (and logged in), or the folder that keeps messages."""
    if config.smtp.folder is not None:
        return FolderSender(config.smtp.folder, config.address)
    return SmtpSender(config.smtp, config.address, env, config.timeout)


def recipients(message: EmailMessage) -> list[str]:
    found = [address for _, address in getaddresses(message.get_all("To", [])) if address]
    if not found:
        raise ValueError("the message has no To address")
    return found


class FolderSender(Sender):
    """A Maildir that receives what would be sent, as a local delivery writes it."""

    def __init__(self, folder: Path, address: str) -> None:
        self.address = address
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)  # Maildir makes the folder, not its parents
            self.maildir = mailbox.Maildir(folder, create=True)
        except OSError as error:
            raise MailServerError(
                f"the folder {folder} cannot be made a Maildir ({reason(error)}); correct [subscriptions] smtp"
            ) from None
        self.folder = folder

    def send(self, message: EmailMessage) -> None:
        recipients(message)
        # a delivery agent records the envelope sender in Return-Path: a reader of the folder sees
        # where bounces would go
        data = f"Return-Path: <{self.address}>\n".encode() + message.as_bytes()
        try:
            self.maildir.add(data)
        except OSError as error:
            raise MailServerError(
                f"the folder {self.folder} cannot be written ({reason(error)}); correct [subscriptions] smtp"
            ) from None

    def close(self) -> None:
        """A folder holds nothing open."""


#: Seconds without a message after which the connection is checked before the next one.
IDLE_S = 0.5


class SmtpSender(Sender):
    """One SMTP connection for many messages."""

    def __init__(self, server: MailServer, address: str, env: Mapping[str, str], timeout: float) -> None:
        self.server, self.address, self.timeout = server, address, timeout
        self.user, self.password = expand(server.user or "", env), expand(server.password or "", env)
        self.smtp = self.connect()
        self.used = time.monotonic()

    def connect(self) -> smtplib.SMTP:
        with self.failures("could not be reached"):
            if self.server.scheme == "smtps":
                context = ssl.create_default_context()
                smtp: smtplib.SMTP = smtplib.SMTP_SSL(
                    self.server.host, self.server.port, timeout=self.timeout, context=context
                )
            else:
                smtp = smtplib.SMTP(self.server.host, self.server.port, timeout=self.timeout)
        try:
            self.greet(smtp)
        except BaseException:
            quit_quietly(smtp)
            raise
        return smtp

    def greet(self, smtp: smtplib.SMTP) -> None:
        """EHLO, STARTTLS where configured, and the login where credentials are set."""
        with self.failures("did not answer EHLO"):
            smtp.ehlo()
        if self.server.scheme == "smtp+starttls":
            if not smtp.has_extn("starttls"):
                raise MailServerError(
                    f"the mail server {self.server.shown} does not offer STARTTLS; use smtps:// if it speaks "
                    f"TLS from the start, or a server that offers STARTTLS"
                )
            with self.failures("failed in STARTTLS"):
                smtp.starttls(context=ssl.create_default_context())
                smtp.ehlo()
        if self.user and self.password:
            with self.failures("refused the login", "check smtp_user and smtp_password"):
                smtp.login(self.user, self.password)

    def send(self, message: EmailMessage) -> None:
        to = recipients(message)
        if time.monotonic() - self.used > IDLE_S:
            self.awake()
        refused = self.hand_over(message, to)  # handed over once: a second try could deliver it twice
        self.used = time.monotonic()
        if refused:
            raise failed(refused)

    def awake(self) -> None:
        """The connection, after a pause: a server closes an idle one, so it is asked (NOOP) and,
        if it closed it, made again, before a message is handed over rather than after."""
        try:
            self.smtp.noop()
        except (smtplib.SMTPServerDisconnected, OSError):
            quit_quietly(self.smtp)
            self.smtp = self.connect()

    def hand_over(self, message: EmailMessage, to: Sequence[str]) -> Mapping[str, tuple[int, bytes | str]]:
        """Send once; the recipients refused (each with the server's answer)."""
        try:
            return self.smtp.send_message(message, from_addr=self.address, to_addrs=list(to))
        except smtplib.SMTPRecipientsRefused as error:
            return dict(error.recipients)
        except smtplib.SMTPDataError as error:
            return dict.fromkeys(to, (error.smtp_code, error.smtp_error))
        except smtplib.SMTPSenderRefused as error:
            raise MailServerError(
                f"the mail server {self.server.shown} refused {self.address} as the sender "
                f"({error.smtp_code} {text(error.smtp_error)}); it must accept [subscriptions] address"
            ) from None
        except (OSError, smtplib.SMTPException) as error:  # the message may have arrived: not sent again
            raise self.error("failed while sending", error) from None

    @contextmanager
    def failures(self, what: str, fix: str = "") -> Iterator[None]:
        """Turns what the network, TLS and smtplib raise into one ``MailServerError`` line."""
        try:
            yield
        except (OSError, smtplib.SMTPException) as error:
            raise self.error(what, error, fix) from None

    def error(self, what: str, error: BaseException, fix: str = "") -> MailServerError:
        if isinstance(error, smtplib.SMTPResponseException):
            said = f"{error.smtp_code} {text(error.smtp_error)}"
        else:
            said = reason(error)
        fix = fix or "check [subscriptions] smtp and that the server answers from this host"
        said = without_secrets(said, (self.password,))
        return MailServerError(f"the mail server {self.server.shown} {what} ({said}); {fix}")

    def close(self) -> None:
        quit_quietly(self.smtp)


def quit_quietly(smtp: smtplib.SMTP) -> None:
    with suppress(OSError, smtplib.SMTPException):
        smtp.quit()  # leaving anyway
    smtp.close()


def text(said: bytes | str) -> str:
    """A server's answer as one line."""
    line = said.decode("utf-8", "replace") if isinstance(said, bytes) else said
    return " ".join(line.split())[:200]


def failed(refused: Mapping[str, tuple[int, bytes | str]]) -> SendFailed:
    """One ``SendFailed`` for the refused recipients: permanent only when every answer was 5xx."""
    said = "; ".join(f"{address}: {code} {text(answer)}" for address, (code, answer) in refused.items())
    return SendFailed(said, permanent=all(500 <= code < 600 for code, _ in refused.values()))

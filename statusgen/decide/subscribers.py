"""Decision: what a visitor's message to the subscription address does. Pure.

The mailbox's messages arrive read as ``Request`` (``statusgen.subscribe.requests``: automatic
replies, loops and oversized messages never become one). ``handle`` takes one request, the
subscriber it concerns as the store holds it, and returns what changes and what is answered:

* **subscribe**: a new address is recorded as waiting, with a random token, and sent one
  confirmation; an address already known asks again (for other services, or in another
  language), and is sent a confirmation of that. An address is sent at most one confirmation an
  hour and read at most ``requests_per_day`` requests a day (``Asking``, kept by the address's
  hash, outlives its subscription); past ``max_subscribers`` addresses, a new one is answered
  by nothing.
* **confirm**: only the token of the confirmation, from the address it was sent to, confirms what
  was asked; the subscriber is welcomed. A token from another address confirms nothing.
* **unsubscribe**: from the address, or with its token from anywhere (a mail program's
  List-Unsubscribe, a forwarded mailbox), the subscriber is removed at once and told so, once.
  An address that is not subscribed is answered by nothing, and one that never confirmed is
  forgotten without a word: a forged sender gets no mail.

``expiry`` says until when a request waits for its confirmation (``CONFIRM_WITHIN``);
``bounced`` what a permanent delivery failure does.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

CONFIRM_WITHIN = timedelta(hours=48)
CONFIRMATION_EVERY = timedelta(hours=1)
PENDING, CONFIRMED = "pending", "confirmed"
CONFIRM, WELCOME, GOODBYE = "confirm", "welcome", "goodbye"


def address_key(address: str) -> str:
    """The one form an address is known by: mail programs and people vary the case."""
    return address.strip().casefold()


def address_hash(address: str) -> str:
    """What a log line names an address by: never the address itself."""
    return hashlib.sha256(address_key(address).encode()).hexdigest()[:12]


def hidden(text: str, address: str) -> str:
    """``text`` (a mail server's answer, which quotes the recipient) with ``address`` named by its
    hash, as a log line may name it."""
    return re.sub(re.escape(address.strip()), address_hash(address), text, flags=re.IGNORECASE)


@dataclass(frozen=True)
class Subscriber:
    """An address as the store holds it. ``services`` () is the whole site; a request waiting for
    its confirmation is ``asked_services``, ``asked_language`` and ``asked_at``."""

    address: str
    token: str
    state: str
    services: tuple[str, ...]
    language: str
    created_at: datetime
    confirmed_at: datetime | None = None
    asked_services: tuple[str, ...] | None = None
    asked_language: str | None = None
    asked_at: datetime | None = None
    bounces: int = 0
    id: int | None = None  # the store's, once saved

    @property
    def key(self) -> str:
        return address_key(self.address)

    @property
    def confirmed(self) -> bool:
        return self.state == CONFIRMED

    @property
    def waiting(self) -> bool:
        """Whether a request waits for its confirmation."""
        return self.asked_at is not None


@dataclass(frozen=True)
class Asking:
    """What an address asked lately, kept by its hash apart from the subscribers, and after they
    leave: leaving and asking again does not start its limits afresh."""

    day: str | None = None  # the UTC day ``requests`` counts
    requests: int = 0
    confirmation_sent_at: datetime | None = None


@dataclass(frozen=True)
class Request:
    """A visitor's command, read from a message ``sender`` wrote (``statusgen.mailto``)."""

    sender: str
    verb: str  # subscribe | confirm | unsubscribe
    services: tuple[str, ...] = ()
    language: str | None = None
    token: str | None = None


@dataclass(frozen=True)
class Limits:
    services: tuple[str, ...]  # the site's slugs: what a request may name
    languages: tuple[str, ...]  # the site's languages, its first the default
    max_subscribers: int
    requests_per_day: int


@dataclass(frozen=True)
class Handled:
    """What one request does: ``saved`` is written (by key), ``removed`` deleted; ``reply`` is
    sent to ``saved`` (or to ``removed``); ``asking`` is the sender's count as it now is;
    ``said`` is the log's account (no address in it)."""

    said: str
    saved: Subscriber | None = None
    removed: Subscriber | None = None
    reply: str | None = None
    asking: Asking | None = None


def handle(
    request: Request,
    known: Subscriber | None,
    by_token: Subscriber | None,
    asking: Asking,
    limits: Limits,
    count: int,
    new_token: str,
    now: datetime,
) -> Handled:
    """What ``request`` does. ``known``: the subscriber of its sender; ``by_token``: the one its
    token names; ``asking``: what its sender asked lately; ``count``: the addresses the store
    holds; ``new_token``: a fresh random token, for a new address."""
    who = address_hash(request.sender)
    if request.verb == "subscribe":
        return _subscribe(request, known, asking, limits, count, new_token, now, who)
    if request.verb == "confirm":
        return _confirm(request, by_token, now, who)
    return _unsubscribe(request, known, by_token, who)


def _asked(request: Request, limits: Limits) -> tuple[tuple[str, ...], str]:
    """The services and language a subscribe request asks for, of those the site has: names it
    does not have are dropped (none left: the whole site); an unknown language is the first."""
    services = tuple(s for s in request.services if s in limits.services)
    by_lower = {t.lower(): t for t in limits.languages}
    language = by_lower.get((request.language or "").lower(), limits.languages[0])
    return services, language


def _subscribe(
    request: Request,
    known: Subscriber | None,
    asking: Asking,
    limits: Limits,
    count: int,
    token: str,
    now: datetime,
    who: str,
) -> Handled:
    services, language = _asked(request, limits)
    today = now.date().isoformat()
    requests = asking.requests + 1 if asking.day == today else 1
    counted = replace(asking, day=today, requests=requests)
    if requests > limits.requests_per_day:
        return Handled(f"subscribe from {who}: ignored, past {limits.requests_per_day} requests today", asking=counted)
    last = asking.confirmation_sent_at
    if last is not None and now - last < CONFIRMATION_EVERY:
        return Handled(f"subscribe from {who}: no confirmation, one was sent within the hour", asking=counted)
    if known is None and count >= limits.max_subscribers:
        return Handled(f"subscribe from {who}: not taken, the site has its {limits.max_subscribers} addresses")
    base = known or Subscriber(request.sender, token, PENDING, (), language, now)
    asked = replace(base, asked_services=services, asked_language=language, asked_at=now)
    sent = replace(counted, confirmation_sent_at=now)
    return Handled(f"subscribe from {who}: a confirmation is sent", saved=asked, reply=CONFIRM, asking=sent)


def _confirm(request: Request, by_token: Subscriber | None, now: datetime, who: str) -> Handled:
    if by_token is None:
        return Handled(f"confirm from {who}: ignored, no such token")
    if by_token.key != address_key(request.sender):
        return Handled(f"confirm from {who}: ignored, the token is another address's")
    if by_token.asked_at is None or now - by_token.asked_at > CONFIRM_WITHIN:
        return Handled(f"confirm from {who}: ignored, nothing waits for a confirmation")
    confirmed = replace(
        by_token,
        state=CONFIRMED,
        services=by_token.asked_services or (),
        language=by_token.asked_language or by_token.language,
        confirmed_at=now,
        asked_services=None,
        asked_language=None,
        asked_at=None,
    )
    return Handled(f"confirm from {who}: subscribed", saved=confirmed, reply=WELCOME)


def _unsubscribe(request: Request, known: Subscriber | None, by_token: Subscriber | None, who: str) -> Handled:
    """A subscriber is told they left; an address that never confirmed is forgotten silently (a
    forged request and its undoing must not make two messages to someone who asked nothing)."""
    leaving = by_token if request.token is not None else known
    if leaving is None:
        return Handled(f"unsubscribe from {who}: ignored, not subscribed")
    if not leaving.confirmed:
        return Handled(f"unsubscribe from {who}: the request waiting for confirmation is forgotten", removed=leaving)
    return Handled(f"unsubscribe from {who}: removed", removed=leaving, reply=GOODBYE)


def expiry(subscriber: Subscriber) -> datetime | None:
    """Until when the subscriber's request waits for its confirmation."""
    return subscriber.asked_at + CONFIRM_WITHIN if subscriber.asked_at is not None else None


def bounced(subscriber: Subscriber, limit: int) -> Handled:
    """A permanent delivery failure to ``subscriber``: counted; at ``limit``, the address is
    removed, with no message (its mail does not arrive)."""
    who = address_hash(subscriber.address)
    counted = replace(subscriber, bounces=subscriber.bounces + 1)
    if counted.bounces >= limit:
        return Handled(f"bounce for {who}: removed after {counted.bounces} permanent failures", removed=counted)
    return Handled(f"bounce for {who}: {counted.bounces} of {limit} permanent failures", saved=counted)


def wants(subscriber: Subscriber, service: str) -> bool:
    """Whether a confirmed subscriber is told of ``service``'s events."""
    return subscriber.confirmed and (not subscriber.services or service in subscriber.services)


def recipients(subscribers: Sequence[Subscriber], service: str) -> list[Subscriber]:
    return [s for s in subscribers if wants(s, service)]

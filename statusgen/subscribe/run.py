"""One run's turn for the subscriptions, after the site is built and swapped in:

1. requests not confirmed within 48 hours are forgotten;
2. the mailbox's new messages are read (at most ``messages_per_run``), each acted on once: its
   outcome and its digest are saved in one transaction before it is marked done in the mailbox,
   so a run stopped in between finds it again and knows it (``mail_read``);
3. the answers (confirmations, welcomes, goodbyes) are sent;
4. the subscribers' messages are sent (``outbox.deliver``): an unsubscribe read in step 2 has
   already taken its address's messages away.

The mailbox or the mail server failing stops this turn with a warning, never the run: the site
is built, and what waits is read or sent by the next run.
"""

from __future__ import annotations

import logging
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from statusgen.config import Config, SubscriptionsConfig
from statusgen.config.secrets import MissingSecret
from statusgen.decide.subscribers import Handled, Limits, Subscriber, address_hash, bounced, handle, hidden
from statusgen.store import Store
from statusgen.subscribe.compose import reply
from statusgen.subscribe.mailbox import Letter, MailboxError, open_mailbox
from statusgen.subscribe.outbox import MailDelivery, deliver
from statusgen.subscribe.requests import read
from statusgen.subscribe.sender import MailServerError, SendFailed, open_sender

log = logging.getLogger("statusgen")
TOKEN_BYTES = 24  # 32 characters of URL-safe base64: a token no one guesses


@dataclass(frozen=True)
class MailTurn:
    read: int
    answered: int
    delivery: MailDelivery


def mail_turn(store: Store, config: Config, now: datetime, env: Mapping[str, str] | None = None) -> MailTurn | None:
    """The subscriptions' part of a run (the module's steps); None when none are configured."""
    subs = config.subscriptions
    if subs is None:
        return None
    env = os.environ if env is None else env
    expired = store.expire_requests(now)
    if expired:
        log.info("subscriptions: %d requests not confirmed within 48 hours forgotten", expired)
    answers: list[tuple[str, Subscriber]] = []
    letters = 0
    try:
        with open_mailbox(subs, env) as box:
            batch = box.letters(subs.messages_per_run)
            letters = len(batch)
            for letter in batch:
                answers += _act(store, config, subs, letter, now)
                box.done([letter])
    except (MailboxError, MissingSecret) as exc:  # the site is built: the next run reads it
        log.warning("subscriptions: %s; the mailbox is read again by the next run", exc)
    answered = _answer(config, subs, answers, now, env)
    return MailTurn(letters, answered, deliver(store, config, now, env))


def _limits(config: Config, subs: SubscriptionsConfig) -> Limits:
    return Limits(
        tuple(s.slug for s in config.services), config.site.languages, subs.max_subscribers, subs.requests_per_day
    )


def _act(
    store: Store, config: Config, subs: SubscriptionsConfig, letter: Letter, now: datetime
) -> list[tuple[str, Subscriber]]:
    """One message's outcome, saved with its digest; what it asks to be answered."""
    if store.already_read([letter.digest]):
        return []
    found = read(letter.raw, subs)
    outcomes: list[Handled] = []
    if found.request is not None:
        request = found.request
        by_token = store.subscriber_by_token(request.token) if request.token else None
        known = store.subscriber(request.sender)
        token = secrets.token_urlsafe(TOKEN_BYTES)
        asking = store.asking(request.sender)
        count = store.subscriber_count()
        outcomes.append(handle(request, known, by_token, asking, _limits(config, subs), count, token, now))
    for address in sorted(found.bounced):
        subscriber = store.subscriber(address)
        if subscriber is not None:
            outcomes.append(bounced(subscriber, subs.bounces))
    log.info("subscriptions: message %s: %s", letter.digest[:12], found.said)
    for outcome in outcomes:
        log.info("subscriptions: %s", outcome.said)
    saved = [o.saved for o in outcomes if o.saved is not None]
    removed = [o.removed for o in outcomes if o.removed is not None]
    asked = [(found.request.sender, o.asking) for o in outcomes if o.asking is not None and found.request]
    store.save_subscribers(saved, removed, [letter.digest], now, asked)
    answers = []
    for o in outcomes:
        to = o.saved or o.removed
        if o.reply is not None and to is not None:
            answers.append((o.reply, to))
    return answers


def _answer(
    config: Config,
    subs: SubscriptionsConfig,
    answers: list[tuple[str, Subscriber]],
    now: datetime,
    env: Mapping[str, str],
) -> int:
    """Send the answers through one connection; one that fails is told in the log (a visitor
    may ask again: a confirmation, an hour later)."""
    if not answers:
        return 0
    sent = 0
    try:
        with open_sender(subs, env) as sender:
            for kind, to in answers:
                try:
                    sender.send(reply(config, subs, kind, to, now))
                    sent += 1
                except SendFailed as exc:
                    who, said = address_hash(to.address), hidden(exc.said, to.address)
                    log.warning("subscriptions: the %s to %s was refused: %s", kind, who, said)
    except (MailServerError, MissingSecret) as exc:  # the site is built: the next run sends what waits
        log.warning("subscriptions: %s; %d answers not sent", exc, len(answers) - sent)
    return sent

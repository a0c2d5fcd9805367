"""Sending one message to one notifier, through Apprise: the I/O edge of notifications.

Apprise takes the notifier's URL (its ``${NAME}`` read from the environment only here, at the
moment of sending) and the message; what the notifier answered is Apprise's account of the call,
with every secret of the URL put back as its ``${NAME}`` before anyone sees it.

Our generic webhook (``statusgen://``, ``statusgens://``) is an Apprise plugin of our own: Apprise
calls ``post_webhook`` with the JSON body ``messages.webhook_body`` made, which it posts as is.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import apprise
import httpx
from apprise.decorators import notify as apprise_plugin

from statusgen import __version__
from statusgen.config import Config, NotifyConfig
from statusgen.config.notifyurl import WEBHOOK_SCHEMES, quiet, scheme
from statusgen.config.secrets import expand, references
from statusgen.errors import StatusgenError
from statusgen.notify.messages import Message, webhook_body

WEBHOOK_TIMEOUT_S = 30.0  # Apprise stops waiting at the notifier's own timeout before this
ANSWER_LIMIT = 500  # characters of an answer kept in the store

quiet()


@dataclass(frozen=True)
class Answer:
    """What a notifier answered to one message: ``sent``; ``timed_out`` when Apprise stopped
    waiting (it may have arrived); ``said``, Apprise's lines about it, without secrets."""

    notifier: str
    sent: bool
    timed_out: bool
    said: str


def post_webhook(body: str, title: str, notify_type: str, meta: dict[str, Any], *args: Any, **kwargs: Any) -> bool:
    """Apprise's call for a ``statusgen://`` URL: POST the JSON body there (https for statusgens)."""
    url = WEBHOOK_SCHEMES[meta["schema"]] + meta["url"][len(meta["schema"]) :]
    headers = {"Content-Type": "application/json", "User-Agent": f"statusgen/{__version__}"}
    try:
        answer = httpx.post(url, content=body.encode(), headers=headers, timeout=WEBHOOK_TIMEOUT_S)
    except httpx.HTTPError as exc:
        logging.getLogger("apprise").warning("The webhook could not be reached: %s.", type(exc).__name__)
        return False
    if not answer.is_success:
        logging.getLogger("apprise").warning("The webhook answered HTTP %d.", answer.status_code)
        return False
    logging.getLogger("apprise").info("The webhook answered HTTP %d.", answer.status_code)
    return True


for _scheme in WEBHOOK_SCHEMES:
    apprise_plugin(on=_scheme, name="statusgen webhook")(post_webhook)  # type: ignore[no-untyped-call]  # untyped there


def without_secrets(text: str, url: str, env: Mapping[str, str]) -> str:
    """``text`` with the value of each variable ``url`` names (as is, and as a URL quotes it)
    put back as ``${NAME}``."""
    for name in references(url):
        value = env.get(name, "")
        for form in sorted({value, quote(value, safe=""), quote(value)}, key=len, reverse=True):
            if len(form) >= 3:  # shorter values would rewrite ordinary words
                text = text.replace(form, f"${{{name}}}")
    return text


def send(
    config: Config, notifier: NotifyConfig, message: Message, now: datetime, env: Mapping[str, str], timeout: float
) -> Answer:
    """Send ``message`` to ``notifier`` within ``timeout`` seconds and say how it went."""
    try:
        url = expand(notifier.url, env)
    except StatusgenError as exc:
        return Answer(notifier.name, False, False, str(exc))
    target = apprise.Apprise()
    if not target.add(url):
        return Answer(notifier.name, False, False, "Apprise does not take this URL")
    if scheme(url) in WEBHOOK_SCHEMES:
        body, fmt = webhook_body(config, message, now).decode(), apprise.NotifyFormat.TEXT
    else:
        body, fmt = message.body, apprise.NotifyFormat.MARKDOWN
    try:
        result = target.notify(body=body, title=message.title, body_format=fmt, timeout=timeout, log_level=logging.INFO)
    except Exception as exc:  # a notifier's failure, whatever it is, must not end the run that sends to it
        return Answer(notifier.name, False, False, f"Apprise failed: {type(exc).__name__}")
    said = " ".join(" ".join(e.message.split()) for e in result.logs())
    timed_out = result.status == apprise.AppriseResultStatus.TIMEOUT
    said = said or ("sent" if result else "timed out" if timed_out else "not sent")
    return Answer(notifier.name, bool(result), timed_out, without_secrets(said, notifier.url, env)[:ANSWER_LIMIT])

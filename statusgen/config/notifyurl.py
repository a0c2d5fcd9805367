"""Apprise URLs, at their one boundary: whether Apprise takes one, and what of it may be shown.

A notifier's URL is an Apprise URL (``slack://...``, ``mailto://...``, ``json://...``) or our own
generic webhook, ``statusgen://`` (http) or ``statusgens://`` (https), whose body is documented in
docs/notifications.md. The URL may name environment variables (``${SLACK_TOKEN}``): what is
logged, stored or shown of it is ``shown``, its scheme and notifier name alone.

Apprise logs through its own logger, with URLs in some of its lines; ``quiet`` keeps those lines
from reaching our logs or the terminal (the sender reads them from each call's result instead).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from urllib.parse import urlsplit

from statusgen.config.secrets import REFERENCE

WEBHOOK_SCHEMES = {"statusgen": "http", "statusgens": "https"}


def quiet() -> None:
    """Keep Apprise's own log lines out of every handler (they may hold a URL)."""
    logger = logging.getLogger("apprise")
    logger.propagate = False
    if not logger.handlers:
        logger.addHandler(logging.NullHandler())


def scheme(url: str) -> str:
    return url.split("://", 1)[0].lower() if "://" in url else ""


def understood(url: str, env: Mapping[str, str]) -> bool:
    """Whether Apprise (or our webhook) takes ``url`` once its ``${NAME}`` are read from ``env``
    (each name must be set there). The expanded URL is never kept."""
    expanded = REFERENCE.sub(lambda m: env[m.group(1)], url)
    if scheme(expanded) in WEBHOOK_SCHEMES:
        return bool(urlsplit(expanded).hostname)
    quiet()
    import apprise

    return bool(apprise.Apprise().add(expanded))

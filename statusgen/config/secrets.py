"""Secrets in the configuration: named, read at run time, never published.

A check or vendor URL, or a header value, may name environment variables
(``https://api.example.com/health?key=${STATUSGEN_TOKEN}``). The configuration
keeps the names; ``expand`` reads the values only where a request is made, so
no value reaches the store, the tree or the logs. What is published of a URL
is ``public_url``: no userinfo, no query, no fragment.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from urllib.parse import urlsplit, urlunsplit

from statusgen.errors import StatusgenError

REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


class MissingSecret(StatusgenError):
    """A variable the configuration names is not set (exit 2, like any configuration error)."""

    exit_code = 2


def references(text: str) -> list[str]:
    """The environment variables ``text`` names, in order."""
    return REFERENCE.findall(text)


def expand(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with each ``${NAME}`` replaced by the variable's value."""
    env = os.environ if env is None else env

    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise MissingSecret(f"the environment variable {name} is not set; export it before running statusgen")
        return env[name]

    return REFERENCE.sub(value, text)


def public_url(url: str) -> str:
    """The URL as it may be published: scheme, host, port and path only."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:  # a local file (a vendor source may be one)
        return url.split("?", 1)[0].split("#", 1)[0]
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal
    try:
        port = parts.port
    except ValueError:
        port = None
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))

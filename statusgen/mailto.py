"""The commands a visitor writes to the subscription address, as the subject of a message.

This is the public interface of subscribing by email, as ``routes`` is of the URLs: the page's
``mailto:`` links are made here, and the run reads what arrives here, so both say the same.

    subscribe [SLUG ...] [lang=TAG]   the services named (the whole site when none), in a language
    confirm TOKEN                     the answer to a confirmation
    unsubscribe [TOKEN]               leave (the token: from any address, for the one it names)

A reply's prefixes ("Re:", "AW:", "Fwd:"...) and a list's tags ("[Status]") are ignored; commands
are read in any case; tokens are exact.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import quote

SUBSCRIBE, CONFIRM, UNSUBSCRIBE = "subscribe", "confirm", "unsubscribe"
COMMANDS = (SUBSCRIBE, CONFIRM, UNSUBSCRIBE)
TOKEN = re.compile(r"[A-Za-z0-9_-]{20,64}")
SLUG = re.compile(r"[a-z0-9][a-z0-9-]{0,63}")
LANGUAGE = re.compile(r"lang=([A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})*)", re.IGNORECASE)
#: What mail programs put before a subject they reply to or forward, in the languages we speak.
#: And what lists put there ("[Status]"), in any order with them.
REPLY_PREFIX = re.compile(
    r"^\s*(?:(?:re|aw|sv|antw|wg|fw|fwd|tr|rv|enc|res)\s*(?:\[\d+\])?\s*:\s*|\[[^\]]{0,64}\]\s*)+", re.IGNORECASE
)
MAX_SUBJECT = 998  # RFC 5322's line limit: a longer subject is no command of ours


@dataclass(frozen=True)
class Command:
    """A command read from a subject: ``services`` () for the whole site; ``language`` as written."""

    verb: str
    services: tuple[str, ...] = ()
    language: str | None = None
    token: str | None = None


def subject(verb: str, services: tuple[str, ...] = (), language: str | None = None, token: str | None = None) -> str:
    """The subject that says a command (what ``command`` reads back)."""
    words = [verb, *services]
    if language:
        words.append(f"lang={language}")
    if token:
        words.append(token)
    return " ".join(words)


def mailto(
    address: str, verb: str, services: tuple[str, ...] = (), language: str | None = None, token: str | None = None
) -> str:
    """A ``mailto:`` URL (RFC 6068) that writes a command to ``address``."""
    return f"mailto:{quote(address, safe='@')}?subject={quote(subject(verb, services, language, token), safe='')}"


def command(text: str) -> Command | None:
    """The command a subject says, or None (an ordinary message: not ours to answer)."""
    if len(text) > MAX_SUBJECT:
        return None
    words = REPLY_PREFIX.sub("", text).split()
    if not words or words[0].lower() not in COMMANDS:
        return None
    verb, rest = words[0].lower(), words[1:]
    if verb == SUBSCRIBE:
        language = None
        services: list[str] = []
        for word in rest:
            found = LANGUAGE.fullmatch(word)
            if found:
                language = found.group(1)
            elif SLUG.fullmatch(word.lower()) and word.lower() not in services:
                services.append(word.lower())
        return Command(SUBSCRIBE, tuple(services), language)
    token = next((w for w in rest if TOKEN.fullmatch(w)), None)
    if verb == CONFIRM and token is None:
        return None
    return Command(verb, token=token)

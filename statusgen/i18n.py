"""The languages a site speaks: their tags, where their pages live, and their message catalogs.

Every word a reader sees goes through gettext: templates through Jinja's ``i18n``
extension, Python through the ``gettext``/``ngettext`` of ``translations(tag)``.
English is the source language: its messages are the msgids themselves. The
catalogs are ``statusgen/locale/{locale}/LC_MESSAGES/statusgen.po``, extracted
and updated with Babel (``make catalogs``, docs/translating.md) and compiled to
the ``.mo`` files the wheel ships.

A site's first language (``site.languages[0]``) is served at ``/``, each other
at ``/{prefix}/`` with the same pages; the JSON API, the Statuspage documents
and the feeds speak the first only. Machine values (statuses, outcomes, slugs)
never change with the language.
"""

from __future__ import annotations

import gettext
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from functools import cache, lru_cache
from importlib.resources import files
from typing import Any, Union

from babel import Locale
from babel.dates import format_skeleton

from statusgen.timeutil import iso, moment, parse_time

DOMAIN = "statusgen"
SOURCE = "en"


def N_(message: str) -> str:
    """Mark a message for extraction where it is defined; it is translated where it is shown."""
    return message


def locale_name(tag: str) -> str:
    """A BCP 47 tag as gettext and Babel name its locale: ``pt-BR`` as ``pt_BR``."""
    return tag.replace("-", "_")


def url_prefix(tag: str) -> str:
    """The folder a language's pages live in: ``pt-BR`` in ``pt-br``."""
    return tag.lower()


def _shipped() -> tuple[str, ...]:
    """The languages with a compiled catalog in the package (``make language`` and ``make
    catalogs`` add one: docs/translating.md), English first, by BCP 47 tag."""
    found = (files("statusgen") / "locale").iterdir() if (files("statusgen") / "locale").is_dir() else ()
    tags = sorted(p.name.replace("_", "-") for p in found if (p / "LC_MESSAGES" / f"{DOMAIN}.mo").is_file())
    return (SOURCE, *tags)


#: The languages shipped with a catalog, by BCP 47 tag.
SHIPPED = _shipped()


@dataclass(frozen=True)
class Language:
    """One language of a site: its tag and whether it is the site's first (served at ``/``)."""

    tag: str
    first: bool = True

    @property
    def locale(self) -> str:
        return locale_name(self.tag)

    @property
    def prefix(self) -> str:
        """``""`` for the first language, else ``/de`` and the like: what its page URLs start with."""
        return "" if self.first else "/" + url_prefix(self.tag)

    def url(self, path: str) -> str:
        """A root-relative URL as this language's pages link it: a page's (its path ends with
        ``/``, before any query or fragment) moves under the language's folder; a document's
        (JSON, a feed, a CSV, an asset) stays where it is, in the site's first language."""
        if not self.prefix or not path.startswith("/") or path.startswith("//"):
            return path
        bare = path.split("#", 1)[0].split("?", 1)[0]
        return self.prefix + path if bare.endswith("/") else path

    def file(self, path: str) -> str:
        """A page's file in the tree (``services/x/index.html``), in this language's folder."""
        return f"{self.prefix.lstrip('/')}/{path}" if self.prefix else path


def site_languages(tags: tuple[str, ...]) -> tuple[Language, ...]:
    """A site's languages, its first first."""
    return tuple(Language(tag, first=i == 0) for i, tag in enumerate(tags))


@cache
def translations(tag: str) -> gettext.NullTranslations:
    """The compiled catalog of a language; the source language's words for English."""
    if tag == SOURCE:
        return gettext.NullTranslations()
    mo = files("statusgen") / "locale" / locale_name(tag) / "LC_MESSAGES" / f"{DOMAIN}.mo"
    with mo.open("rb") as f:
        return gettext.GNUTranslations(f)


# -- times as each language writes them --------------------------------------------------------


@cache
def _locale(tag: str) -> Locale:
    return Locale.parse(locale_name(tag))


@lru_cache(maxsize=4096)
def date_words(day: date, tag: str, skeleton: str = "yMMMd") -> str:
    """A day as language ``tag`` writes it, by Babel's ``skeleton`` (``Nov 22, 2026``)."""
    return format_skeleton(skeleton, day, locale=_locale(tag))


@lru_cache(maxsize=2048)
def _clock_words(hour: int, minute: int, tag: str) -> str:
    return format_skeleton("Hm", datetime(2000, 1, 1, hour, minute, tzinfo=UTC), tzinfo=UTC, locale=_locale(tag))


def moment_words(when: datetime, tag: str, skeleton: str = "yMMMd") -> str:
    """A time in UTC as the pages of language ``tag`` write it, to the minute: its day (by
    ``skeleton``) and its 24-hour clock, joined by the locale's medium date-time pattern, then
    ``UTC`` (``Nov 22, 2026, 20:21 UTC``, ``2026年11月22日 20:21 UTC``). The pages' filters
    (``render.words``) and the decisions' sentences (``said_time``) both say a time with it."""
    when = when.astimezone(UTC)
    pattern = str(_locale(tag).datetime_formats["medium"])  # "{1}, {0}": the date, then the time
    return pattern.format(_clock_words(when.hour, when.minute, tag), date_words(when.date(), tag, skeleton)) + " UTC"


# -- words said once, said again in another language -----------------------------------------

Gettext = Callable[[str], str]
Ngettext = Callable[[str, str, int], str]
Value = Union[str, int, float, "Said"]


class Said(str):
    """A sentence the decisions make (a service's reason, an incident's title or update, the
    state of collection), kept as how it was made, so that every language can say it again.

    It is its English text (the str itself: what the store, the logs and the tests read), and its
    message with the values that fill it (``said``, ``said_plural``; a value may be a ``Said``
    too, a time among them: ``said_time``), or the parts it joins (``Said.joined``). ``say`` says
    it in a language; ``to_json`` and ``from_json`` keep it in the store."""

    message: str | tuple[str, str] | None
    values: dict[str, Value]
    plural_n: int | None
    parts: tuple[Value, ...]
    separator: str

    def __new__(cls, text: str = "") -> Said:
        made = super().__new__(cls, text)
        made.message, made.values, made.plural_n, made.parts, made.separator = text, {}, None, (), ""
        return made

    @classmethod
    def made(
        cls,
        message: str | tuple[str, str] | None,
        values: dict[str, Value],
        count: int | None = None,
        parts: tuple[Value, ...] = (),
        separator: str = "",
    ) -> Said:
        words = cls(_english(message, values, count, parts, separator))
        words.message, words.values, words.plural_n, words.parts, words.separator = (
            message,
            values,
            count,
            parts,
            separator,
        )
        return words

    @classmethod
    def joined(cls, joiner: str, parts: Sequence[Value]) -> Said:
        """Parts said one after another, each in its own words, two at a time by ``joiner`` (a
        message of ``%(first)s`` and ``%(next)s``: ``SENTENCES``, ``CLAUSES``)."""
        return cls.made(None, {}, None, tuple(parts), joiner)

    def say(self, gettext: Gettext, ngettext: Ngettext, tag: str = SOURCE) -> str:
        """This sentence in the language of ``gettext`` and ``ngettext``, its times as ``tag``
        writes them."""
        if self.message is None:
            return _fold(gettext(self.separator), [say(p, gettext, ngettext, tag) for p in self.parts])
        values = {k: v.say(gettext, ngettext, tag) if isinstance(v, Said) else v for k, v in self.values.items()}
        if isinstance(self.message, tuple):
            assert self.plural_n is not None
            return ngettext(*self.message, self.plural_n) % values
        text = gettext(self.message)
        return text % values if values else text

    def to_json(self) -> Any:
        if self.message is None:
            return {"join": self.separator, "parts": [_json(p) for p in self.parts]}
        out: dict[str, Any] = {"said": list(self.message) if isinstance(self.message, tuple) else self.message}
        if self.values:
            out["values"] = {k: _json(v) for k, v in self.values.items()}
        if self.plural_n is not None:
            out["count"] = self.plural_n
        return out

    @classmethod
    def from_json(cls, doc: Any) -> Value:
        """What ``to_json`` wrote (a plain value stays one)."""
        if not isinstance(doc, dict):
            return doc  # type: ignore[no-any-return]  # a value as JSON keeps it: str, int, float
        if "time" in doc:
            return said_time(parse_time(doc["time"]))
        if "join" in doc:
            return cls.joined(doc["join"], [cls.from_json(p) for p in doc["parts"]])
        message = tuple(doc["said"]) if isinstance(doc["said"], list) else doc["said"]
        values = {k: cls.from_json(v) for k, v in doc.get("values", {}).items()}
        return cls.made(message, values, doc.get("count"))


class SaidTime(Said):
    """A time in a sentence (``said_time``): in English ``timeutil.moment``'s words
    (``2026-11-22 20:21 UTC``, what the store's text, the logs and the notifications read); in a
    language, as its pages write a time (``moment_words``). Kept as ``{"time": RFC 3339}``."""

    when: datetime

    def say(self, gettext: Gettext, ngettext: Ngettext, tag: str = SOURCE) -> str:
        return moment_words(self.when, tag)

    def to_json(self) -> Any:
        return {"time": iso(self.when)}


#: How the parts of a ``Said.joined`` are put together: sentences one after another, and the
#: clauses of one sentence ("a timed out; b answered HTTP 503").
SENTENCES = N_("%(first)s %(next)s")
CLAUSES = N_("%(first)s; %(next)s")
#: A duration's units, largest first: by their size in seconds, the name Babel formats each
#: with on the pages (``render.words``), and the message the decisions' sentences say it with.
UNITS = (
    (86400, "duration-day", N_("%(n)s d")),
    (3600, "duration-hour", N_("%(n)s h")),
    (60, "duration-minute", N_("%(n)s min")),
    (1, "duration-second", N_("%(n)s s")),
)


def _fold(joiner: str, parts: list[str]) -> str:
    if not parts:
        return ""
    text = parts[0]
    for part in parts[1:]:
        text = joiner % {"first": text, "next": part}
    return text


def said_list(parts: Sequence[Value]) -> Value:
    """Parts as a list in words: "a, b and c"."""
    if not parts:
        return ""
    told = parts[0]
    for part in parts[1:-1]:
        told = said("%(list)s, %(next)s", list=told, next=part)
    return said("%(list)s and %(last)s", list=told, last=parts[-1]) if len(parts) > 1 else told


def duration_parts(seconds: float) -> list[tuple[int, str, str]]:
    """A duration as a person says it, in its two largest units: (count, Babel's unit, message)
    of each, as in "2 h 5 min", "3 d 4 h", "1 min 5 s", "45 s". A zero after the largest is
    not said ("2 h", not "2 h 0 min"); nothing at all is "0 s"."""
    left, parts = max(0, int(seconds)), list[tuple[int, str, str]]()
    for size, unit, message in UNITS:
        if left >= size or (size == 1 and not parts):
            count, left = divmod(left, size)
            parts.append((count, unit, message))
        elif parts:
            break
        if len(parts) == 2:
            break
    return parts


def said_duration(seconds: float) -> Said:
    """A duration in a sentence of the decisions (``duration_parts``), as the pages say it."""
    return Said.joined(SENTENCES, [said(message, n=count) for count, _, message in duration_parts(seconds)])


def said_time(when: datetime) -> Said:
    """A time in a sentence of the decisions, said by each language in its own form (``SaidTime``)."""
    words = SaidTime(moment(when))
    words.when = when.astimezone(UTC)
    return words


def said(message: str, /, **values: Value) -> Said:
    """A sentence made of a message and the values that fill its ``%(name)s`` places."""
    return Said.made(message, values)


def said_plural(one: str, many: str, count: int, /, **values: Value) -> Said:
    """A sentence whose words depend on ``count`` (its plural forms: ``ngettext``)."""
    return Said.made((one, many), values, count)


def say(value: Value, gettext: Gettext, ngettext: Ngettext, tag: str = SOURCE) -> str:
    """Words in a language: a ``Said`` said in it (its times as ``tag`` writes them), anything
    else as it is."""
    return value.say(gettext, ngettext, tag) if isinstance(value, Said) else str(value)


def say_in(value: Value, tag: str) -> str:
    """Words in the language ``tag`` (its catalog: ``translations``; its forms: Babel's)."""
    catalog = translations(tag)
    return say(value, catalog.gettext, catalog.ngettext, tag)


def _english_plural(one: str, many: str, n: int) -> str:
    return one if n == 1 else many


def _english(
    message: str | tuple[str, str] | None,
    values: dict[str, Value],
    count: int | None,
    parts: tuple[Value, ...],
    separator: str,
) -> str:
    if message is None:
        return _fold(separator, [str(p) for p in parts])
    text = _english_plural(*message, count or 0) if isinstance(message, tuple) else message
    return text % values if values else text


def _json(value: Value) -> Any:
    return value.to_json() if isinstance(value, Said) else value


def kept_words(words: str | None) -> str | None:
    """Words as a text column keeps them: a ``Said`` as its JSON (so that every language can say
    it again), other words as they are."""
    return json.dumps(words.to_json(), ensure_ascii=False) if isinstance(words, Said) else words


def words_of(kept: str | None) -> str | None:
    """What ``kept_words`` wrote (words an older version kept are plain sentences)."""
    if kept and kept.startswith("{"):
        try:
            words = Said.from_json(json.loads(kept))
            return words if isinstance(words, str) else kept
        except (ValueError, KeyError, TypeError):
            return kept
    return kept

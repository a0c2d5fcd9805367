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
from dataclasses import dataclass
from functools import cache
from importlib.resources import files

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

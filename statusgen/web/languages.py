"""The languages of a built tree, as its health document lists them (``/api/v1/health``'s
``languages``, the site's ``site.languages``): the first at ``/``, each other in its folder.
The preview server, the nginx configuration and publish give each file its
``Content-Language`` from them (``routes.language_of``)."""

from __future__ import annotations

import json
from pathlib import Path

from statusgen import routes


class TreeLanguagesError(ValueError):
    """The tree's health document is missing, or does not list its languages."""


def tree_languages(site: Path) -> tuple[str, ...]:
    """The languages a tree's pages speak, its first first."""
    path = site / routes.API / "health.json"
    try:
        found = json.loads(path.read_bytes())["languages"]
    except FileNotFoundError:
        raise TreeLanguagesError(f"{path}: not found; {site} is not a statusgen tree") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TreeLanguagesError(f'{path}: cannot read its "languages" ({type(exc).__name__}: {exc})') from None
    if (
        not isinstance(found, list)
        or not found
        or not all(isinstance(t, str) and routes.LANGUAGE_RE.fullmatch(t) for t in found)
    ):
        raise TreeLanguagesError(f'{path}: "languages" must be a non-empty list of language tags, got {found!r}')
    return tuple(found)

"""The templates every page and feed is made with, and the site's static files.

They ship inside the package (the repository keeps them in the top-level
``templates/``, which the wheel installs as ``statusgen.templates``) and are
read through the package's resources, never through a path of the source
tree. Each language has an environment of its own (``environment(language)``):
its catalog installed for Jinja's ``i18n`` extension (``{% trans %}``, ``_()``),
its filters (``render.words``) and its links (``local``: a page's URL in the
language's folder). Autoescape is on for every template, HTML and Atom alike: vendor and
service text is untrusted, and no template marks any of it safe. The operator's
Markdown passes the ``markdown`` filter, which sanitizes it before marking it safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache
from gettext import NullTranslations
from importlib.resources import files

from babel import Locale
from jinja2 import Environment, PackageLoader
from jinja2.utils import htmlsafe_json_dumps
from markupsafe import Markup

from statusgen import routes
from statusgen.config import SiteConfig
from statusgen.config.brand import THEME_STYLESHEET
from statusgen.i18n import SOURCE, Language, site_languages, translations
from statusgen.render.markdown import to_html
from statusgen.render.words import words

PACKAGE = "statusgen.templates"


ENGLISH = Language(SOURCE)


@cache
def environment(language: Language = ENGLISH) -> Environment:
    """The templates' environment in a language, made once a process."""
    env = Environment(
        loader=PackageLoader(PACKAGE, "."),
        autoescape=True,
        keep_trailing_newline=True,
        auto_reload=False,
        extensions=["jinja2.ext.i18n"],
    )
    env.policies["ext.i18n.trimmed"] = True  # a message's line breaks and indents are not part of it
    catalog = translations(language.tag)
    env.install_gettext_translations(catalog, newstyle=True)  # type: ignore[attr-defined]
    env.globals.update(_messages(catalog))
    env.filters.update(words(language).filters())
    local = language.url
    env.filters.update(
        local=local,
        service_page_url=lambda slug: local(routes.service_page_url(slug)),
        service_feed_url=routes.service_feed_url,
        service_url=routes.service_url,
        service_incidents_url=lambda slug: local(routes.service_incidents_url(slug)),
        incident_anchor=routes.incident_anchor,
        incidents_page_url=lambda day: local(routes.incidents_page_url(day)),
        markdown=to_html,  # the operator's words, sanitized (render.markdown): the only Markup made of text
    )
    env.filters.update(alternates=alternates, language_name=language_name)
    # the script's words, written once (every page holds them): JSON that HTML cannot break out of
    env.globals.update(lang=language, script_words=htmlsafe_json_dumps(words(language).script(), sort_keys=True))
    return env


def _messages(catalog: NullTranslations) -> dict[str, Callable[..., Markup]]:
    """The templates' gettext, ngettext and pgettext (and ``_``), as the i18n extension's
    newstyle ones behave (the catalog's message as Markup, its places filled with escaped values),
    each message looked up once: a site's pages call them a quarter of a million times a build,
    and the extension's own pass through the template context at each call."""

    @cache
    def said(message: str) -> Markup:
        return Markup(catalog.gettext(message))

    def gettext(message: str, /, **values: object) -> Markup:
        return said(message) % values

    def ngettext(singular: str, plural: str, num: int, /, **values: object) -> Markup:
        values.setdefault("num", num)
        return Markup(catalog.ngettext(singular, plural, num)) % values

    def pgettext(context: str, message: str, /, **values: object) -> Markup:
        values.setdefault("context", context)
        return Markup(catalog.pgettext(context, message)) % values

    return {"gettext": gettext, "_": gettext, "ngettext": ngettext, "pgettext": pgettext}


def render(template: str, /, language: Language = ENGLISH, **context: object) -> bytes:
    """A template rendered to UTF-8 bytes, in a language."""
    return render_text(template, language, **context).encode("utf-8")


def render_text(template: str, /, language: Language = ENGLISH, **context: object) -> str:
    """A template rendered in a language (a part of a page, HTML its template escaped); within
    ``building(site)``, given ``site`` when its caller gives none."""
    site = _building.get()
    if site is not None:
        context.setdefault("site", site)
    return environment(language).get_template(template).render(**context)


#: The site a build is rendering, for templates whose caller passes only some of it.
_building: ContextVar[SiteConfig | None] = ContextVar("statusgen_building", default=None)


@contextmanager
def building(site: SiteConfig) -> Iterator[None]:
    """Templates rendered within are given ``site`` unless their caller gives one: the embeddable
    status is rendered with the site's title alone (``views.embed_pages``), and shows the
    operator's logo and stylesheets too."""
    token = _building.set(site)
    try:
        yield
    finally:
        _building.reset(token)


def alternates(tags: tuple[str, ...], here: str | None) -> list[tuple[Language, str]]:
    """Each language of a site and the URL of the page at ``here`` (its path in the first
    language) in it: the page's translations, for hreflang links and the language switcher."""
    return [(lang, lang.url(here)) for lang in site_languages(tags)] if isinstance(here, str) else []


def static_files() -> dict[str, bytes]:
    """The files copied into the tree as they are: ``templates/static/`` as ``static/<name>``, and
    ``templates/root/`` at the root of the tree (the favicon, where browsers look for it)."""
    out = {}
    for folder, prefix in (("static", "static/"), ("root", "")):
        for p in sorted((files(PACKAGE) / folder).iterdir(), key=lambda p: p.name):
            if p.is_file():
                out[prefix + p.name] = p.read_bytes()
    return out


def brand_files(site: SiteConfig) -> dict[str, bytes]:
    """The operator's files, copied into the tree as they were read and checked with the
    configuration (the logo, the favicon, the stylesheet: ``config.brand``), and the stylesheet
    made of the brand; nothing on a site without one."""
    out = {f.path: f.data for f in (site.logo, site.favicon, site.stylesheet) if f is not None}
    if "/" + THEME_STYLESHEET in site.brand_stylesheets:
        out[THEME_STYLESHEET] = theme_stylesheet(site).encode()
    return out


def theme_stylesheet(site: SiteConfig) -> str:
    """static/brand/theme.css, loaded after site.css (the pages' policy allows no inline style):
    the logo's place in the header and the embeddable status, and the accent as the colour of
    links, focus rings and the site's name, and of a band atop the header. Without a dark
    accent, the dark theme keeps statusgen's colours but the band (config.brand: one colour
    seldom reads as text on both themes)."""
    rules = ["/* The operator's brand (site.logo, site.accent), made by statusgen from the configuration */"]
    if site.logo is not None:
        rules += [
            ".brand { display: inline-flex; align-items: center; gap: .5rem; }",
            ".brand .logo { display: block; height: 2rem; width: auto; max-width: 12rem; object-fit: contain; }",
            ".embed .logo { height: 1.25em; width: auto; max-width: 8em; object-fit: contain;"
            " vertical-align: -.25em; margin-right: .4em; }",
        ]
    if site.accent is not None:
        rules += [f":root {{ --accent: {site.accent.light}; }}", ".top { border-top: .25rem solid var(--accent); }"]
        for theme, colour in (("light", site.accent.light), ("dark", site.accent.dark)):
            if colour is not None:
                band = f" --accent: {colour};" if theme == "dark" else ""
                rules.append(
                    f"@media (prefers-color-scheme: {theme}) {{ :root {{{band} --link: {colour}; --focus: {colour}; }}"
                    f" .brand {{ color: {colour}; }} }}"
                )
    return "\n".join(rules) + "\n"


def templates_digest_parts() -> list[bytes]:
    """Every template and static file, name and bytes: part of the key of every file made with them."""
    out: list[bytes] = []
    stack = [files(PACKAGE)]
    while stack:
        for p in sorted(stack.pop().iterdir(), key=lambda p: p.name):
            if p.name in ("init", "mail"):  # `statusgen init`'s files, the subscribers' mail: no page's
                continue
            if p.is_dir():
                stack.append(p)
            elif not p.name.endswith((".py", ".pyc")):
                out += [p.name.encode(), p.read_bytes()]
    return out


def language_name(tag: str) -> str:
    """A language's name as its own readers write it (``Deutsch``, ``日本語``): the switcher's words."""
    name = Locale.parse(tag.replace("-", "_")).get_display_name() or tag
    return name[:1].upper() + name[1:]

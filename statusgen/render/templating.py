"""The templates every page and feed is made with, and the site's static files.

They ship inside the package (the repository keeps them in the top-level
``templates/``, which the wheel installs as ``statusgen.templates``) and are
read through the package's resources, never through a path of the source
tree. Autoescape is on for every template, HTML and Atom alike: vendor and
service text is untrusted, and no template marks any of it safe. The operator's
Markdown passes the ``markdown`` filter, which sanitizes it before marking it safe.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

from jinja2 import Environment, PackageLoader

from statusgen import routes
from statusgen.render.markdown import to_html
from statusgen.render.words import FILTERS

PACKAGE = "statusgen.templates"


@cache
def environment() -> Environment:
    """The templates' environment, made once a process."""
    env = Environment(
        loader=PackageLoader(PACKAGE, "."), autoescape=True, keep_trailing_newline=True, auto_reload=False
    )
    env.filters.update(FILTERS)
    env.filters.update(
        service_page_url=routes.service_page_url,
        service_feed_url=routes.service_feed_url,
        service_url=routes.service_url,
        service_incidents_url=routes.service_incidents_url,
        incident_anchor=routes.incident_anchor,
        incidents_page_url=routes.incidents_page_url,
        markdown=to_html,  # the operator's words, sanitized (render.markdown): the only Markup made of text
    )
    return env


def render(template: str, /, **context: object) -> bytes:
    """A template rendered to UTF-8 bytes."""
    return render_text(template, **context).encode("utf-8")


def render_text(template: str, /, **context: object) -> str:
    """A template rendered (a part of a page, HTML its template escaped)."""
    return environment().get_template(template).render(**context)


def static_files() -> dict[str, bytes]:
    """The files copied into the tree as they are: ``templates/static/`` as ``static/<name>``, and
    ``templates/root/`` at the root of the tree (the favicon, where browsers look for it)."""
    out = {}
    for folder, prefix in (("static", "static/"), ("root", "")):
        for p in sorted((files(PACKAGE) / folder).iterdir(), key=lambda p: p.name):
            if p.is_file():
                out[prefix + p.name] = p.read_bytes()
    return out


def templates_digest_parts() -> list[bytes]:
    """Every template and static file, name and bytes: part of the key of every file made with them."""
    out: list[bytes] = []
    stack = [files(PACKAGE)]
    while stack:
        for p in sorted(stack.pop().iterdir(), key=lambda p: p.name):
            if p.name == "init":  # the files of `statusgen init`: no page is made with them
                continue
            if p.is_dir():
                stack.append(p)
            elif not p.name.endswith((".py", ".pyc")):
                out += [p.name.encode(), p.read_bytes()]
    return out

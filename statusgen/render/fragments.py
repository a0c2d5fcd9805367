"""Render: the one cache, of the parts of service pages drawn from histories.

A service page is made again whenever one of its histories changes: the
24-hour one every five minutes, as its buckets close. Its other panels and its
day-by-day table change far less often (hourly, every six hours, daily), and
drawing them is most of the page's cost. So each is kept between builds under
the key of the history it is drawn from (``render.service.history_key``: the
history's window, the results its buckets hold, the service's incidents, and
the site's settings, code and templates), in one file of its own beside the
output's generations, ``<output>.gens/.fragments``.

One rule: after a build that drew any, the file holds the fragments of the
histories that build served (those of a page it kept too), and no other.
A file that is missing, unreadable or of another format is an empty cache:
deleting it costs one build's drawing, nothing else. It is not part of the
store of record, nor of the tree.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import orjson
from markupsafe import Markup

from statusgen.render.tree import gens_dir

FORMAT = 1
FILE = ".fragments"
log = logging.getLogger("statusgen")


@dataclass(frozen=True)
class Drawn:
    """The fragments a process found live and those it drew (sent back by a worker process)."""

    used: set[str] = field(default_factory=set)
    new: dict[str, str] = field(default_factory=dict)


class Fragments:
    """The fragments of an output's cache (read when first needed), and what this process found
    live and drew."""

    def __init__(self, output: Path):
        self.output, self.path = output, gens_dir(output) / FILE
        self.drawn = Drawn()
        self._known: dict[str, str] | None = None

    @property
    def known(self) -> dict[str, str]:
        """The cache as the last build that drew left it (a normal cycle draws nothing, nor reads it)."""
        if self._known is None:
            try:
                saved = orjson.loads(self.path.read_bytes())
                known = saved["fragments"] if saved.get("format") == FORMAT else {}
            except (OSError, ValueError, TypeError, AttributeError, KeyError):
                known = {}
            self._known = known if isinstance(known, dict) else {}
        return self._known

    def live(self, keys: Iterable[str]) -> None:
        """These fragments are of what this build serves, whether or not its pages draw them: they
        stay in the cache."""
        self.drawn.used.update(keys)

    def get(self, key: str, draw: Callable[[], Markup]) -> Markup:
        """The fragment of this key: the last build's, else drawn now."""
        self.drawn.used.add(key)
        html = self.known.get(key)
        if html is None:
            made = draw()
            self.drawn.new[key] = str(made)
            return made
        return Markup(html)  # drawn by a template of this code (the key holds it), escaped there

    def fresh(self) -> Fragments:
        """The same cache, nothing read or used yet: for a worker process."""
        return Fragments(self.output)

    def absorb(self, drawn: Drawn) -> None:
        """What another process found live and drew, as if here."""
        self.drawn.used.update(drawn.used)
        self.drawn.new.update(drawn.new)

    def save(self) -> None:
        """Keep the live fragments of this build, when it drew any. The cache is not flushed to
        the disk: one lost costs a build's drawing."""
        new = self.drawn.new
        if not new:
            return
        known = self.known
        kept = {k: new[k] if k in new else known[k] for k in sorted(self.drawn.used) if k in new or k in known}
        part = self.path.with_name(FILE + ".part")
        try:
            part.write_bytes(orjson.dumps({"format": FORMAT, "fragments": kept}))
            os.replace(part, self.path)
        except OSError as exc:  # the site is built: a cache not kept costs the next build's drawing
            log.warning("%s: cannot keep the drawn fragments (%s)", self.path, exc.strerror or exc)
            part.unlink(missing_ok=True)

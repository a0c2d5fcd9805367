"""The message catalogs checked as a translator's tools check them: what is wrong with them.

``problems(root)`` extracts every message of a source tree afresh (``pybabel extract``, with the
repository's babel.cfg, as ``make catalogs`` does) and compares each language's catalog with
it: a message used but missing or left untranslated (or fuzzy), one the catalog still carries
though nothing uses it (stale, obsolete), a translation whose placeholders differ from its
message's, and a compiled ``.mo`` that is not its ``.po``. One line per problem, naming the
catalog and the message.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from babel.messages import mofile, pofile
from babel.messages.catalog import Catalog, Message

PYBABEL = Path(sys.executable).with_name("pybabel")
LOCALE = "statusgen/locale"
#: The marks of messages besides gettext's own (as the Makefile's catalogs target gives them).
KEYWORDS = ("-k", "N_", "-k", "said", "-k", "said_plural:1,2")


def extracted(root: Path, out: Path) -> Catalog:
    """Every message the templates and code of ``root`` use, extracted now."""
    subprocess.run(
        [PYBABEL, "-q", "extract", "-F", "babel.cfg", *KEYWORDS, "--no-wrap", "-o", str(out), "."],
        cwd=root,
        check=True,
    )
    with out.open("rb") as f:
        return pofile.read_po(f)


def catalogs(root: Path) -> dict[str, Path]:
    """Each language's catalog file, by locale name."""
    return {p.parent.parent.name: p for p in sorted((root / LOCALE).glob("*/LC_MESSAGES/statusgen.po"))}


def _key(value: object) -> object:
    """A message's id or string as a dict key: plural ones come from a .mo as lists."""
    return tuple(value) if isinstance(value, list | tuple) else value


def _name(message: Message) -> str:
    """A message as a problem names it: its singular id, after its context if it has one."""
    singular = message.id if isinstance(message.id, str) else message.id[0]
    return f"{message.context}|{singular}" if message.context else singular


def problems(root: Path, scratch: Path) -> list[str]:
    used = extracted(root, scratch / "fresh.pot")
    wanted = {_name(m): m for m in used if m.id}
    out = []
    for locale, path in catalogs(root).items():
        with path.open("rb") as f:
            catalog = pofile.read_po(f, locale=locale)
        have = {_name(m): m for m in catalog if m.id}
        for key, message in wanted.items():
            found = have.get(key)
            strings = found and (found.string if isinstance(found.string, tuple) else (found.string,))
            if found is None:
                out.append(f"{path}: lacks {key!r}")
            elif found.fuzzy or not strings or not all(strings):
                out.append(f"{path}: {key!r} is not translated (or is fuzzy)")
            elif isinstance(message.id, tuple) != isinstance(found.id, tuple):
                out.append(f"{path}: {key!r} has plural forms in one place and not in the other")
        out += [f"{path}: carries {key!r}, which nothing uses (stale)" for key in have.keys() - wanted.keys()]
        out += [f"{path}: carries an obsolete message {key!r}" for key in catalog.obsolete]
        for message, errors in catalog.check():
            out += [f"{path}: {message.id!r}: {error}" for error in errors]
        mo = path.with_suffix(".mo")
        if not mo.exists():
            out.append(f"{mo}: missing: run make catalogs")
            continue
        with mo.open("rb") as f:
            compiled = {(m.context, _key(m.id)): _key(m.string) for m in mofile.read_mo(f) if m.id}
        if compiled != {(m.context, _key(m.id)): _key(m.string) for m in catalog if m.id and not m.fuzzy}:
            out.append(f"{mo}: not compiled from its .po: run make catalogs")
    return out


if __name__ == "__main__":  # `make check-catalogs`
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        found = problems(Path.cwd(), Path(scratch))
    for line in found:
        print(line)
    print(f"{len(catalogs(Path.cwd()))} catalogs, {len(found)} problems")
    sys.exit(1 if found else 0)

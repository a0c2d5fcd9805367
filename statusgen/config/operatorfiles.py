"""The operator's own words, as files: notes on incidents, manual incidents, planned maintenance.

A folder beside the configuration (``[site] notes``, ``notes/`` by default), kept in git and
reviewed like code, holds one Markdown file (``*.md``) per thing: a TOML front matter between
``+++`` lines, then a Markdown body. What a file is follows from its keys:

* ``incident = "<incident id>"`` and ``at``: a **note** on that incident (body: the note);
* ``service``, ``title``, ``severity`` (or ``status``), ``started``, optional ``resolved``: a
  **manual incident** for a service our checks cannot see (body: its updates, each under a
  ``## 2026-11-25 14:02`` heading, in UTC; text before the first heading opens it);
* ``services``, ``title``, ``start``, ``end``: a **planned maintenance** (body: what readers are told).

``read_folder`` reads them with the configuration and returns every problem at once, each naming
the file, the key and the fix. The texts stay Markdown source here; ``render.markdown`` turns them
into sanitized HTML. This is where the operator's words enter: they are cleaned of control
characters (``statusgen.text``), and a Markdown link to anything but http(s), mailto or a path of
the site loses its destination, so the JSON, which publishes the source, carries none either.
``write_note`` and friends write such files for ``statusgen note`` and the like. The configuration
reads the folder through this module, which imports none of statusgen's but ``model``,
``timeutil`` and ``text``.
"""

from __future__ import annotations

import html
import re
import tomllib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from statusgen.model import SLUG
from statusgen.text import one_line, outside_link, without_controls
from statusgen.timeutil import offset_time

MAX_FILE_BYTES = 64 << 10  # one file: words for people, not a dump
MAX_FILES = 10_000  # files in the folder
NAME_RE = re.compile(rf"{SLUG}\.md")  # the name becomes part of ids and URLs
HEADING_RE = re.compile(r"^## +(.+?) *$", re.MULTILINE)
STATUS_OF_SEVERITY = {"minor": "degraded", "major": "partial_outage", "critical": "major_outage"}
DELIMITER = "+++"


@dataclass(frozen=True)
class OperatorNote:
    """A note on an incident (statusgen's own or a manual one): shown in its timeline."""

    file: str  # its name in the folder: names the note for good
    incident: str
    at: datetime
    message: str  # Markdown


@dataclass(frozen=True)
class ManualUpdate:
    at: datetime
    message: str  # Markdown


@dataclass(frozen=True)
class ManualIncident:
    """An incident the operator records for a service: open while ``resolved`` is unset."""

    file: str
    service: str
    title: str
    status: str  # degraded | partial_outage | major_outage: what the service is while it is open
    started: datetime
    resolved: datetime | None
    updates: tuple[ManualUpdate, ...]  # in order; the first is at ``started``

    @property
    def id(self) -> str:
        """Stable while the file keeps its name (its times may be corrected)."""
        return manual_incident_id(self.service, self.file)


@dataclass(frozen=True)
class PlannedMaintenance:
    file: str
    title: str
    services: tuple[str, ...]
    start: datetime
    end: datetime
    message: str  # Markdown


@dataclass(frozen=True)
class OperatorFiles:
    notes: tuple[OperatorNote, ...] = ()
    incidents: tuple[ManualIncident, ...] = ()
    maintenance: tuple[PlannedMaintenance, ...] = ()
    by_incident: dict[str, tuple[OperatorNote, ...]] = field(default_factory=dict, compare=False)

    def __post_init__(self) -> None:
        for note in sorted(self.notes, key=lambda n: (n.at, n.file)):
            self.by_incident[note.incident] = self.by_incident.get(note.incident, ()) + (note,)

    def notes_on(self, incident_id: str) -> tuple[OperatorNote, ...]:
        """The notes on an incident, oldest first."""
        return self.by_incident.get(incident_id, ())


def manual_incident_id(service: str, file: str) -> str:
    return f"{service}-operator-{file.removesuffix('.md')}"


# -- the keys of each kind of file ---------------------------------------------


class Invalid(ValueError):
    """A value's problem; the message completes "<key> ..."."""


@dataclass(frozen=True)
class FrontKey:
    name: str
    convert: Callable[[Any], Any]
    required: bool
    doc: str


def _text(value: Any) -> str:
    if not isinstance(value, str) or not one_line(value):
        raise Invalid(f"must be a non-empty string, got {show(value)}")
    return one_line(value)


def _time(value: Any) -> datetime:
    """A TOML offset date-time, or a text in RFC 3339 with an offset."""
    at = offset_time(value)
    if at is None:
        raise Invalid(f"must be a date-time with an offset, like 2026-11-25T14:02:00Z, got {show(value)}")
    return at


def _one_of(choices: Collection[str]) -> Callable[[Any], str]:
    def convert(value: Any) -> str:
        if value not in choices:
            raise Invalid(f"must be one of {', '.join(choices)}, got {show(value)}")
        return str(value)

    return convert


def _names(value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise Invalid(f'must be a non-empty list of service slugs, like ["api", "web"], got {show(value)}')
    return tuple(value)


def show(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else repr(value)


NOTE_KEYS = (
    FrontKey("incident", _text, True, "The id of the incident the note is on (its JSON `id`)."),
    FrontKey("at", _time, True, "When the note was written (date-time with offset)."),
)
INCIDENT_KEYS = (
    FrontKey("service", _text, True, "The slug of the service it is about."),
    FrontKey("title", _text, True, "What happened, in a few words."),
    FrontKey("severity", _one_of(STATUS_OF_SEVERITY), False, "minor, major or critical (or give `status`)."),
    FrontKey(
        "status",
        _one_of(STATUS_OF_SEVERITY.values()),
        False,
        "degraded, partial_outage or major_outage (or give `severity`).",
    ),
    FrontKey("started", _time, True, "When it started (date-time with offset)."),
    FrontKey("resolved", _time, False, "When it ended; the incident is open until this is set."),
)
MAINTENANCE_KEYS = (
    FrontKey("title", _text, True, "What is being done."),
    FrontKey("services", _names, True, "The slugs of the services it puts in maintenance."),
    FrontKey("start", _time, True, "When it begins (date-time with offset)."),
    FrontKey("end", _time, True, "When it ends, after start."),
)
KINDS = {"note": NOTE_KEYS, "incident": INCIDENT_KEYS, "maintenance": MAINTENANCE_KEYS}


def kind_of(front: Mapping[str, Any]) -> str | None:
    """What a file is, from its keys."""
    if "incident" in front:
        return "note"
    if "services" in front:
        return "maintenance"
    if "service" in front:
        return "incident"
    return None


# -- reading -------------------------------------------------------------------


@dataclass
class _Found:
    notes: list[OperatorNote] = field(default_factory=list)
    incidents: list[ManualIncident] = field(default_factory=list)
    maintenance: list[PlannedMaintenance] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def read_folder(folder: Path, shown: str, services: Collection[str]) -> tuple[OperatorFiles, list[str]]:
    """The operator's files in ``folder`` (named ``shown`` in problems), and every problem found.
    ``services``: the configured slugs. A missing folder holds nothing."""
    found = _Found()
    if not folder.is_dir():
        if folder.exists():
            found.problems.append(f"{shown}: is not a folder; make it a folder of .md files or remove it")
        return OperatorFiles(), found.problems
    paths = sorted(p for p in folder.iterdir() if p.suffix == ".md")
    if len(paths) > MAX_FILES:
        found.problems.append(f"{shown}: {len(paths)} files; at most {MAX_FILES}, remove old ones")
        paths = paths[:MAX_FILES]
    for path in paths:
        _read_file(path, f"{shown}/{path.name}", set(services), found)
    _check_ids(found, shown)
    files = OperatorFiles(tuple(found.notes), tuple(found.incidents), tuple(found.maintenance))
    return files, found.problems


def _read_file(path: Path, shown: str, services: set[str], found: _Found) -> None:
    problems: list[str] = []
    if not NAME_RE.fullmatch(path.name):
        problems.append(f"{shown}: the name must be lower-case letters, digits and dashes, like 2026-11-25-dns.md")
    parsed = _split(path, shown, problems)
    if parsed is not None:
        front, body = parsed
        _read_kind(path.name, front, body, shown, services, found, problems)
    found.problems += problems


def _split(path: Path, shown: str, problems: list[str]) -> tuple[dict[str, Any], str] | None:
    """The front matter (parsed) and the body of a file, or None (with its problem)."""
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            problems.append(f"{shown}: {size} bytes is larger than a file may be ({MAX_FILE_BYTES}); shorten it")
            return None
        raw = without_controls(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{shown}: cannot be read: {exc}")
        return None
    first, _, rest = raw.partition("\n")
    front, sep, body = rest.partition(f"\n{DELIMITER}\n") if first.strip() == DELIMITER else ("", "", "")
    if not sep and first.strip() == DELIMITER and rest.rstrip().endswith(DELIMITER):
        front, sep, body = rest.rstrip().removesuffix(DELIMITER), DELIMITER, ""
    if not sep:
        problems.append(f"{shown}: must begin with a front matter between two {DELIMITER} lines, like {_EXAMPLE}")
        return None
    try:
        return tomllib.loads(front), links_to_the_web(body.strip())
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        problems.append(f"{shown}: the front matter is not valid TOML: {exc}")
        return None


_EXAMPLE = f'"{DELIMITER}\\nincident = "api-20261125t140200"\\nat = 2026-11-25T14:30:00Z\\n{DELIMITER}"'


#: Where a Markdown link's destination begins: after ``](`` (an inline link) or a reference
#: definition's ``[label]:``, then spaces; and an autolink, ``<scheme:...>``.
_DESTINATION = re.compile(r"\]\([ \t]*\n?[ \t]*|^ {0,3}\[(?:[^\]\\\n]|\\.){1,999}\]:[ \t]*\n?[ \t]*", re.MULTILINE)
_BRACKETED = re.compile(r"<(?:[^<>\\\n]|\\.)*>")
_AUTOLINK = re.compile(r"<[A-Za-z][A-Za-z0-9+.\-]{1,31}:[^<>\x00-\x20]*>")
_ESCAPED = re.compile(r"\\(.)")
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
#: What a reader's link may be besides http(s) (``outside_link``): a mail address.
_MAIL = "mailto"


def links_to_the_web(markdown: str) -> str:
    """The Markdown with every link to a scheme but http(s) and mailto left without its
    destination (``[words](javascript:...)`` becomes ``[words]()``, an autolink to one goes), read
    as a renderer reads a destination: backslash escapes and character references decoded,
    spaces, tabs and case ignored. A link to a path of the site (no scheme) stays."""
    out, done = [], 0
    for found in _DESTINATION.finditer(markdown):
        start = found.end()
        if start < done:
            continue
        end = _destination_end(markdown, start)
        if not _followable(markdown[start:end].strip("<>")):
            out.append(markdown[done:start])
            done = end
    kept = "".join(out) + markdown[done:]
    return _AUTOLINK.sub(lambda m: m[0] if _followable(m[0][1:-1]) else "", kept)


def _destination_end(markdown: str, start: int) -> int:
    """Where the link destination beginning at ``start`` ends (CommonMark: ``<...>`` on one line,
    or a run of characters without a space whose parentheses balance)."""
    bracketed = _BRACKETED.match(markdown, start)
    if bracketed:
        return bracketed.end()
    depth, at = 0, start
    while at < len(markdown) and not markdown[at].isspace():
        char = markdown[at]
        if char == "\\":
            at += 1
        elif char == "(":
            depth += 1
        elif char == ")":
            if depth == 0:
                break
            depth -= 1
        at += 1
    return min(at, len(markdown))


def _followable(destination: str) -> bool:
    read = html.unescape(_ESCAPED.sub(r"\1", destination))
    read = "".join(read.split())  # a browser drops tabs and newlines inside a URL
    scheme = _SCHEME.match(read)
    if scheme is None:
        return True
    return scheme[1].lower() == _MAIL or outside_link(read) is not None


def _read_kind(
    name: str,
    front: dict[str, Any],
    body: str,
    shown: str,
    services: set[str],
    found: _Found,
    problems: list[str],
) -> None:
    kind = kind_of(front)
    if kind is None:
        problems.append(
            f"{shown}: cannot tell what the file is: give incident = (a note), service = (a manual incident) "
            "or services = (a planned maintenance)"
        )
        return
    values = _values(front, KINDS[kind], shown, problems)
    if problems:
        return
    if kind == "note":
        _note(name, values, body, shown, services, found, problems)
    elif kind == "incident":
        _incident(name, values, body, shown, services, found, problems)
    else:
        _maintenance(name, values, body, shown, services, found, problems)


def _values(front: dict[str, Any], keys: tuple[FrontKey, ...], shown: str, problems: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key in keys:
        if key.name not in front:
            if key.required:
                problems.append(f"{shown}: {key.name} is required ({key.doc})")
            continue
        try:
            out[key.name] = key.convert(front[key.name])
        except Invalid as exc:
            problems.append(f"{shown}: {key.name} {exc}")
    known = [k.name for k in keys]
    problems += [f'{shown}: unknown key "{k}"; allowed keys: {", ".join(known)}' for k in front if k not in known]
    return out


def _unknown_service(shown: str, key: str, slug: str, services: set[str]) -> str:
    some = ", ".join(sorted(services)[:10]) + (", ..." if len(services) > 10 else "")
    return f'{shown}: {key} names unknown service "{slug}"; configured services: {some}'


def _note(
    name: str, v: dict[str, Any], body: str, shown: str, services: set[str], found: _Found, problems: list[str]
) -> None:
    if not body:
        problems.append(f"{shown}: the note is empty; write it below the front matter")
        return
    if not any(v["incident"].startswith(f"{s}-") for s in services):
        problems.append(
            f'{shown}: incident "{v["incident"]}" is not the id of an incident of a configured service; '
            "copy the id from the incident's JSON (/api/v1/incidents.json)"
        )
        return
    found.notes.append(OperatorNote(name, v["incident"], v["at"], body))


def _incident(
    name: str, v: dict[str, Any], body: str, shown: str, services: set[str], found: _Found, problems: list[str]
) -> None:
    if v["service"] not in services:
        problems.append(_unknown_service(shown, "service", v["service"], services))
    if ("severity" in v) == ("status" in v):
        problems.append(f"{shown}: give one of severity (minor, major, critical) or status, not both nor neither")
    if v.get("resolved") is not None and v["resolved"] < v["started"]:
        problems.append(f"{shown}: resolved ({v['resolved']:%Y-%m-%d %H:%M}) must not be before started")
    updates = _updates(body, v["started"], v.get("resolved"), shown, problems)
    if problems:
        return
    status = v.get("status") or STATUS_OF_SEVERITY[v["severity"]]
    found.incidents.append(
        ManualIncident(name, v["service"], v["title"], status, v["started"], v.get("resolved"), updates)
    )


def _updates(
    body: str, started: datetime, resolved: datetime | None, shown: str, problems: list[str]
) -> tuple[ManualUpdate, ...]:
    """A manual incident's updates: the text before the first heading (at ``started``), then one
    per ``## <time>`` heading."""
    parts = HEADING_RE.split(body)
    out = [ManualUpdate(started, parts[0].strip())] if parts[0].strip() else []
    for heading, text in zip(parts[1::2], parts[2::2], strict=True):
        at = heading_time(heading)
        if at is None:
            problems.append(f'{shown}: heading "## {heading}" must be a time in UTC, like ## 2026-11-25 14:02')
        elif at < started or (resolved is not None and at > resolved):
            problems.append(f'{shown}: heading "## {heading}" is outside the incident (started to resolved)')
        elif text.strip():
            out.append(ManualUpdate(at, text.strip()))
    return tuple(sorted(out, key=lambda u: u.at))


def heading_time(heading: str) -> datetime | None:
    """``2026-11-25 14:02`` (UTC), or a date-time with an offset."""
    try:
        at = datetime.fromisoformat(heading.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return at.replace(tzinfo=UTC) if at.tzinfo is None else at.astimezone(UTC)


def _maintenance(
    name: str, v: dict[str, Any], body: str, shown: str, services: set[str], found: _Found, problems: list[str]
) -> None:
    problems += [_unknown_service(shown, "services", s, services) for s in v["services"] if s not in services]
    if v["end"] <= v["start"]:
        problems.append(f"{shown}: end ({v['end']:%Y-%m-%d %H:%M}) must be after start ({v['start']:%Y-%m-%d %H:%M})")
    if not problems:
        found.maintenance.append(PlannedMaintenance(name, v["title"], v["services"], v["start"], v["end"], body))


def _check_ids(found: _Found, shown: str) -> None:
    """A note on a manual incident names one that exists (other ids: see ``unknown_incidents``)."""
    manual = {i.id for i in found.incidents}
    for note in found.notes:
        if "-operator-" in note.incident and note.incident not in manual:
            found.problems.append(
                f'{shown}/{note.file}: incident "{note.incident}" is no manual incident of the folder; '
                "copy the id from the incident's JSON"
            )


def unknown_incidents(files: OperatorFiles, known: Collection[str], shown: str) -> list[str]:
    """The problems of notes on incidents that were never recorded (``known``: the store's ids)."""
    manual = {i.id for i in files.incidents}
    return [
        f'{shown}/{n.file}: incident "{n.incident}" is not a recorded incident; '
        "copy the id from the incident's JSON (/api/v1/incidents.json)"
        for n in files.notes
        if n.incident not in manual and n.incident not in known
    ]


# -- writing (statusgen note / incident / maintenance) --------------------------


#: What a TOML basic string cannot hold as it is: the quote, the backslash, the control characters.
_TOML_ESCAPES = {
    **{c: f"\\u{c:04X}" for c in [*range(0x20), 0x7F]},
    **{ord(c): f"\\{e}" for c, e in zip('"\\\b\t\n\f\r', '"\\btnfr', strict=True)},
}


def _toml_value(value: Any) -> str:
    if isinstance(value, datetime):
        return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return '"' + str(value).translate(_TOML_ESCAPES) + '"'


def file_text(front: Mapping[str, Any], body: str) -> str:
    """A file of the folder: its front matter (None values left out) and its body."""
    lines = [f"{k} = {_toml_value(v)}" for k, v in front.items() if v is not None]
    return "\n".join([DELIMITER, *lines, DELIMITER, "", body.strip(), ""])


def file_name(at: datetime, words: str) -> str:
    """``2026-11-25-dns-at-the-provider.md``: the date and the first words, as a slug."""
    slug = re.sub(r"[^a-z0-9]+", "-", words.lower()).strip("-")[:40].strip("-") or "note"
    return f"{at:%Y-%m-%d}-{slug}.md"


def write_file(folder: Path, name: str, text: str) -> Path:
    """Write a new file in the folder (made if missing); never overwrites one: a number is added."""
    folder.mkdir(parents=True, exist_ok=True)
    stem, n = name.removesuffix(".md"), 2
    path = folder / name
    while path.exists():
        path, n = folder / f"{stem}-{n}.md", n + 1
    with path.open("x", encoding="utf-8") as f:
        f.write(text)
    return path

"""The notes folder as the commands use it: checked against the store, and written by command.

``statusgen note`` / ``incident`` / ``maintenance`` write a file of the folder (docs/notes.md)
for people who prefer a command to an editor; each file is read back with the configuration
before the command succeeds, so a file a command writes is never one a run would refuse.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from pathlib import Path

from statusgen.config import Config, load_config, shown_folder
from statusgen.config.operatorfiles import file_name, file_text, unknown_incidents, write_file
from statusgen.errors import ConfigError
from statusgen.store import recorded_incident_ids


def check_notes(config: Config, recorded: Collection[str]) -> None:
    """Raise ``ConfigError`` when a note is on an incident that was never recorded (``recorded``:
    the ids in the store): a run refuses the folder before probing, as a bad configuration."""
    problems = unknown_incidents(config.operator, recorded, shown_folder(config.site.notes, config.path.parent))
    if problems:
        raise ConfigError(problems)


def checked_config(config_path: Path) -> Config:
    """The configuration and its notes folder, the notes checked against the store's incidents
    (read only): what check-config reports, and what ``--loop`` reloads between cycles (a folder
    edited wrong keeps the last good one, and the checks go on)."""
    config = load_config(config_path)
    check_notes(config, recorded_incident_ids(config.site.store))
    return config


def write_note(config_path: Path, incident: str, at: datetime, message: str) -> Path:
    front = {"incident": incident, "at": at}
    return _write(config_path, file_name(at, message.split("\n", 1)[0]), file_text(front, message))


def write_incident(
    config_path: Path,
    service: str,
    title: str,
    severity: str,
    started: datetime,
    resolved: datetime | None,
    message: str,
) -> Path:
    front = {"service": service, "title": title, "severity": severity, "started": started, "resolved": resolved}
    return _write(config_path, file_name(started, f"{service} {title}"), file_text(front, message))


def write_maintenance(
    config_path: Path, title: str, services: Sequence[str], start: datetime, end: datetime, message: str
) -> Path:
    front = {"title": title, "services": list(services), "start": start, "end": end}
    return _write(config_path, file_name(start, f"maintenance {title}"), file_text(front, message))


def _write(config_path: Path, name: str, text: str) -> Path:
    """Write the file, then read the folder back with the configuration: on any problem the file
    is removed and the problems raised (every one, naming the file and the fix)."""
    config = load_config(config_path)
    path = write_file(config.site.notes, name, text)
    try:
        load_config(config_path)
    except ConfigError:
        path.unlink()
        raise
    return path

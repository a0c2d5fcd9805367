"""rclone's exit statuses and logs, as publish and the locations' inbox read them."""

from __future__ import annotations

import json
import re

LISTING_NOT_FOUND = 3  # rclone's exit status for "directory not found"
TIMESTAMP = re.compile(r"^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d ")  # rclone's plain log prefix


def rclone_error(stderr: str, returncode: int) -> str:
    """rclone's own words: its final "Failed to ..." line, else its last logged error, else the exit status."""
    fatal, logged = [], []
    for line in stderr.splitlines():
        entry = json_line(line)
        if entry.get("level") in ("error", "critical"):
            obj = entry.get("object")
            logged.append(f"{obj}: {entry.get('msg')}" if obj else str(entry.get("msg")))
        elif not entry:
            plain = TIMESTAMP.sub("", line.strip())
            if plain.startswith("Failed to"):
                fatal.append(plain)
    found = fatal or logged
    return found[-1] if found else f"rclone exited with status {returncode}"


def json_line(line: str) -> dict[str, object]:
    try:
        entry = json.loads(line)
    except ValueError:
        return {}
    return entry if isinstance(entry, dict) else {}

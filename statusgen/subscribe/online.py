"""``check-config --online``: the mailbox and the mail server answer and take the login.

What a run would do first, and no more: log in to the mailbox and open its folder (no message is
read or marked), greet the mail server with TLS as configured and log in (then QUIT: nothing is
sent). A folder must be a Maildir (the mailbox) or a place that can be written (the mail server's).
Each problem is one line naming the key and the fix, so that a first run does not find them.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping
from pathlib import Path

from statusgen.config.records import SubscriptionsConfig
from statusgen.errors import StatusgenError
from statusgen.subscribe.mailbox import open_mailbox
from statusgen.subscribe.sender import open_sender


def check_online(config: SubscriptionsConfig, env: Mapping[str, str]) -> list[str]:
    """The problems found with the mailbox and the mail server; empty when both are fine."""
    problems = []
    try:
        open_mailbox(config, env).close()
    except StatusgenError as error:
        problems.append(f"[subscriptions] mailbox: {error}")
    folder = config.smtp.folder
    try:
        if folder is not None:
            writable(folder)  # opening it would make the folder: a check only looks
        else:
            open_sender(config, env).close()
    except StatusgenError as error:
        problems.append(f"[subscriptions] smtp: {error}")
    return problems


class NotWritable(StatusgenError):
    pass


def writable(folder: Path) -> None:
    """Whether a Maildir can be written at ``folder``: in it, or in the nearest folder above it
    that exists (where it would be made). A file is made and removed: permissions alone do not
    tell about a read-only file system, nor about root."""
    place = folder
    while not place.exists() and place != place.parent:
        place = place.parent
    if not place.is_dir():
        raise NotWritable(f"{place} is not a folder, so the folder {folder} cannot be made; correct it")
    try:
        with tempfile.TemporaryFile(dir=place):
            pass
    except OSError as error:
        raise NotWritable(
            f"the folder {folder} cannot be written ({error.strerror or error}); let statusgen's user write there"
        ) from None

"""Logs: one line per event, human-readable by default, JSON lines with --log-format json.

Untrusted text in a message (vendor strings, URLs, paths) is made printable
before it is logged: control characters never reach the terminal or the file.
"""

from __future__ import annotations

import logging
import sys
import time
from typing import Any

import orjson

LOGGER = "statusgen"


def printable(text: str) -> str:
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in text)


class HumanFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        when = self.formatTime(record, "%Y-%m-%dT%H:%M:%S")
        return f"{when}Z {record.levelname.lower()}: {printable(record.getMessage())}"


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + "Z",
            "level": record.levelname.lower(),
            "message": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))
        return orjson.dumps(entry).decode()


def _not_the_stop(record: logging.LogRecord) -> bool:
    """A task that ended with the loop's own stop (a KeyboardInterrupt, see loop.Stopping) is the
    stop itself, already logged: not a failure to report again."""
    return not (record.exc_info and record.exc_info[0] and issubclass(record.exc_info[0], KeyboardInterrupt))


def setup(fmt: str = "text", stream: Any = None) -> logging.Logger:
    logger = logging.getLogger(LOGGER)
    logger.handlers.clear()
    handler = logging.StreamHandler(stream or sys.stderr)
    formatter: logging.Formatter = JsonFormatter() if fmt == "json" else HumanFormatter()
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    # What asyncio itself reports (a task that failed while a stopped cycle was cancelled) goes
    # out in the same format, one line each: a JSON log stays JSON.
    library = logging.getLogger("asyncio")
    library.handlers[:] = [handler]
    library.filters[:] = [_not_the_stop]
    library.setLevel(logging.WARNING)
    library.propagate = False
    return logger


def event(message: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log one line; ``fields`` become keys of the JSON line."""
    logging.getLogger(LOGGER).log(level, message, extra={"fields": fields})

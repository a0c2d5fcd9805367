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
    return logger


def event(message: str, level: int = logging.INFO, **fields: Any) -> None:
    """Log one line; ``fields`` become keys of the JSON line."""
    logging.getLogger(LOGGER).log(level, message, extra={"fields": fields})

"""A TCP check: connect to ``tcp://host:port``, optionally send a line and expect a banner, timed.

The latency runs from the start of the connection (resolving the host included) until it is
open, or, when the check expects text, until that text has arrived; closing is not counted.
The target is the operator's own choice, as an HTTP check's first URL is: nothing redirects
a TCP check, so ``site.allow_private_targets`` has nothing to refuse here. Failures become
outcomes through ``neterrors.outcome_of``, as HTTP's do; text that never comes (the server
closed, or sent more than BANNER_LIMIT bytes without it) is ``wrong_answer``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from contextlib import suppress
from datetime import datetime
from urllib.parse import urlsplit

from statusgen.config.secrets import expand
from statusgen.model import CheckResult, Outcome
from statusgen.neterrors import outcome_of
from statusgen.probe.check import CheckTarget
from statusgen.timeutil import utcnow

BANNER_LIMIT = 65536  # the most read while waiting for the expected text


async def _expected(reader: asyncio.StreamReader, expect: bytes) -> bool:
    """Whether ``expect`` arrives before the server closes or BANNER_LIMIT bytes have come."""
    seen = b""
    while expect not in seen and len(seen) <= BANNER_LIMIT:
        piece = await reader.read(4096)
        if not piece:
            return False
        seen += piece
    return expect in seen


async def probe_tcp(target: CheckTarget, clock: Callable[[], datetime] = utcnow) -> CheckResult:
    """One TCP check, within its timeout; every failure becomes an outcome."""
    check = target.check
    parts = urlsplit(expand(check.url))
    line = (expand(check.send) + "\r\n").encode("utf-8") if check.send is not None else None
    sent = clock()
    writer: asyncio.StreamWriter | None = None
    try:
        async with asyncio.timeout(check.timeout):
            start = time.perf_counter()
            reader, writer = await asyncio.open_connection(parts.hostname, parts.port)
            if line is not None:
                writer.write(line)
                await writer.drain()
            found = await _expected(reader, check.expect.encode("utf-8")) if check.expect else True
            elapsed_ms = (time.perf_counter() - start) * 1000.0
    except Exception as exc:
        return CheckResult(target.service, target.check_index, sent, outcome_of(exc), None, None, False)
    finally:
        if writer is not None:
            writer.close()
            with suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)
    outcome = Outcome.OK if found else Outcome.WRONG_ANSWER
    slow = found and elapsed_ms > check.degraded_ms
    return CheckResult(target.service, target.check_index, sent, outcome, round(elapsed_ms, 1), None, slow)

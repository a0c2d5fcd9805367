"""The inbox under attack: what batches nobody should have sent cost a run.

    python -m bench inbox

Forged: 150 maximal batches (just under 4 MiB, random bytes, signed with a key that is not the
location's) in a folder inbox, taken by one ingest. Budget: 6 s, a tenth of a 60 s interval
(the share a run gives the inbox), beside the floor of reading those files once in the same run.
Bombs: a signed batch of 32 MiB of newlines (31 KB compressed) and one of one 32 MiB line, each
decoded alone. Budget: under 1 s and under 100 MB (tracemalloc's peak) each.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import hmac
import logging
import os
import shutil
import struct
import tempfile
import time
import tracemalloc
import zlib
from pathlib import Path

from statusgen.batches import FORMAT, BatchRefused, decode
from statusgen.config import load_config
from statusgen.inbox import FolderInbox
from statusgen.locations.ingest import expectations, ingest
from statusgen.store import Store
from statusgen.timeutil import utcnow

FORGED, FORGED_BYTES = 150, (4 << 20) - 4096  # random bytes deflate to a little more: just under the cap
FORGED_BUDGET_S = 6.0
BOMB_BUDGET_S, BOMB_BUDGET_MB = 1.0, 100
KEY = hashlib.sha256(b"bench").hexdigest()


def verdict(name: str, value: str, budget: str, ok: bool) -> None:
    print(f"  {name:<56} {value:>10}   budget {budget:<9} {'PASS' if ok else 'FAIL'}", flush=True)


def signed(name: str, body: bytes, key: bytes) -> bytes:
    """A batch file of ``body`` (docs/locations.md: the signature in the gzip header)."""
    deflate = zlib.compressobj(9, zlib.DEFLATED, -15)
    payload = deflate.compress(body) + deflate.flush() + struct.pack("<II", zlib.crc32(body), len(body) & 0xFFFFFFFF)
    mac = hmac.new(key, f"{FORMAT}\n{name}\n".encode() + payload, hashlib.sha256).hexdigest().encode()
    extra = b"SG" + struct.pack("<H", len(mac)) + mac
    return b"\x1f\x8b\x08\x04" + bytes(4) + b"\x00\xff" + struct.pack("<H", len(extra)) + extra + payload


def site(work: Path) -> Path:
    path = work / "services.toml"
    path.write_text(
        '[site]\ninterval = 60\ninbox = "inbox"\ninbox_key = "${BENCH_INBOX_KEY}"\n'
        '[categories]\nc = "C"\n[[locations]]\nname = "eu"\n'
        '[[services]]\nslug = "a"\nname = "A"\ncategory = "c"\n[[services.checks]]\nurl = "http://127.0.0.1:9/"\n',
        encoding="utf-8",
    )
    return path


def forged(work: Path) -> None:
    config = load_config(site(work))
    inbox = FolderInbox(work / "inbox")
    for n in range(FORGED):
        name = f"eu/20261204T{n // 60:02d}{n % 60:02d}00Z-{n:08x}.jsonl.gz"
        inbox.put(name, signed(name, os.urandom(FORGED_BYTES), b"not the location's key"))
    os.sync()
    t = time.perf_counter()
    for name in inbox.names():
        inbox.get(name)
    floor = time.perf_counter() - t
    with Store(config.site.store) as store:
        t = time.perf_counter()
        done = ingest(config, store, utcnow(), clock=lambda: 0.0)  # no budget: every batch, timed whole
        took = time.perf_counter() - t
    assert len(done.refused) == FORGED and done.left == 0, (len(done.refused), done.left)
    assert all("bad signature" in why for _, why in done.refused), done.refused[0]
    print(f"  the floor: reading the {FORGED} files once takes {floor:.2f} s")
    verdict(
        f"{FORGED} forged 4 MiB batches refused ({took / floor:.1f}x the floor)",
        f"{took:.2f} s",
        f"<= {FORGED_BUDGET_S:.0f} s",
        took <= FORGED_BUDGET_S,
    )


def bombs(work: Path) -> None:
    config = load_config(site(work))
    expect = expectations(config, utcnow())
    name = "eu/20261204T000000Z-0b0b0b0b.jsonl.gz"
    for what, body in (("newlines", b"\n" * (32 << 20)), ("one line", b"{" * (32 << 20))):
        data = signed(name, body, KEY.encode())
        tracemalloc.start()
        t = time.perf_counter()
        try:
            decode(name, data, expect)
        except BatchRefused as exc:
            reason = str(exc)
        took = time.perf_counter() - t
        peak = tracemalloc.get_traced_memory()[1] / 1e6
        tracemalloc.stop()
        label = f"a signed bomb of 32 MiB of {what} ({len(data) // 1024} KB): {reason}"
        verdict(label[:56], f"{took:.3f} s", f"< {BOMB_BUDGET_S:.0f} s", took < BOMB_BUDGET_S)
        verdict("  its memory (tracemalloc peak)", f"{peak:.1f} MB", f"< {BOMB_BUDGET_MB} MB", peak < BOMB_BUDGET_MB)
    unsigned = gzip.compress(b"\n" * (32 << 20))
    t = time.perf_counter()
    with contextlib.suppress(BatchRefused):
        decode(name, unsigned, expect)
    took = time.perf_counter() - t
    verdict("the newline bomb unsigned (no key needed to send it)", f"{took:.4f} s", "< 1 s", took < BOMB_BUDGET_S)


def main() -> None:
    os.environ["BENCH_INBOX_KEY"] = KEY
    logging.disable(logging.WARNING)  # a line per refused batch otherwise
    work = Path(tempfile.mkdtemp(prefix="statusgen-inbox-"))
    try:
        forged(work)
        bombs(work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

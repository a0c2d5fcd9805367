"""The operator's view of the subscribers (``statusgen subscribers``): counts, and the export.

The counts name services and states, never an address. The export is the one file that holds the
addresses, written only where the operator asks, mode 0600, each cell one a spreadsheet shows as
text (CSV injection: OWASP).
"""

from __future__ import annotations

import csv
import os
import tempfile
from pathlib import Path

from statusgen.config import Config
from statusgen.decide.subscribers import Subscriber
from statusgen.errors import StatusgenError
from statusgen.store import Store
from statusgen.timeutil import iso

#: The outbox's states, in the order a message goes through them.
MAIL_STATES = ("pending", "sending", "sent", "refused", "uncertain", "expired")
#: The first characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def report_lines(cfg: Config, store: Store) -> list[str]:
    """Confirmed subscribers by service, the requests waiting, and the outbox by state."""
    by_service, pending, asking = store.subscriber_counts()
    names = {s.slug: s.name for s in cfg.services}
    lines = [f"{cfg.site.store}: {store.subscriber_count()} addresses; confirmed, by service:"]
    order = ["", *names, *sorted(set(by_service) - set(names) - {""})]
    for slug in order:
        shown = (
            "the whole site" if not slug else f"{names[slug]} ({slug})" if slug in names else f"{slug} (not configured)"
        )
        lines.append(f"  {shown}: {by_service.get(slug, 0)}")
    lines.append(f"waiting for confirmation: {pending} new addresses, {asking} subscribers asking for a change")
    mail = store.mail_counts()
    states = [*MAIL_STATES, *sorted(set(mail) - set(MAIL_STATES))]
    lines.append("outbox: " + ", ".join(f"{mail.get(state, 0)} {state}" for state in states))
    return lines


def _inert(cell: str) -> str:
    """A cell a spreadsheet shows as text: one that would start a formula gets a leading '."""
    return f"'{cell}" if cell.startswith(FORMULA_STARTS) else cell


def export(rows: list[Subscriber], path: Path) -> None:
    """Every address as CSV, written beside ``path`` with mode 0600 and renamed over it: the file
    holds personal data, and no reader ever sees half of it."""
    header = ("address", "state", "services", "language", "created_at", "confirmed_at")
    partial: str | None = None
    try:
        fd, partial = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")  # made 0600
        with open(fd, "w", encoding="utf-8", newline="") as f:
            out = csv.writer(f)
            out.writerow(header)
            for s in rows:
                cells = (s.address, s.state, " ".join(s.services), s.language, iso(s.created_at), iso(s.confirmed_at))
                out.writerow([_inert(c or "") for c in cells])
        os.replace(partial, path)
    except OSError as exc:
        raise StatusgenError(f"{path}: cannot write the export ({exc.strerror or exc}); name a writable file") from None
    finally:
        if partial is not None:
            Path(partial).unlink(missing_ok=True)

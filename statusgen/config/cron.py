"""Cron expressions for recurring maintenance windows, in UTC. Pure.

Five fields: minute (0-59), hour (0-23), day of month (1-31), month (1-12
or jan-dec), weekday (0-7 or sun-sat, 0 and 7 both Sunday). Each field is
``*``, a number, a range ``a-b``, a list ``a,b``, and any of them with a step
``/n``. As in cron, when both day of month and weekday are restricted, a day
matching either one matches.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

MONTHS = {
    m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)
}
DAYS = {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
FIELDS: tuple[tuple[str, int, int, dict[str, int]], ...] = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day", 1, 31, {}),
    ("month", 1, 12, MONTHS),
    ("weekday", 0, 7, DAYS),
)
MAX_LOOKBACK = timedelta(days=31)


class CronError(ValueError):
    pass


@dataclass(frozen=True)
class Cron:
    minutes: frozenset[int]
    hours: frozenset[int]
    days: frozenset[int]
    months: frozenset[int]
    weekdays: frozenset[int]
    any_day: bool
    any_weekday: bool

    def day_matches(self, t: datetime) -> bool:
        if t.month not in self.months:
            return False
        dom, dow = t.day in self.days, (t.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return dom and dow
        return dom or dow


def _value(text: str, names: dict[str, int], name: str) -> int:
    text = text.lower()
    if text in names:
        return names[text]
    if not text.isdigit():
        raise CronError(f"{name}: '{text}' is not a number")
    return int(text)


def _field(text: str, name: str, lo: int, hi: int, names: dict[str, int]) -> frozenset[int]:
    out: set[int] = set()
    for part in text.split(","):
        base, _, step_text = part.partition("/")
        step = _value(step_text, {}, name) if step_text else 1
        if base == "*":
            first, last = lo, hi
        elif "-" in base:
            a, b = base.split("-", 1)
            first, last = _value(a, names, name), _value(b, names, name)
        else:
            first = last = _value(base, names, name)
            last = hi if step_text else last
        if not lo <= first <= last <= hi or step < 1:
            raise CronError(f"{name}: '{part}' is outside {lo}-{hi}")
        out.update(range(first, last + 1, step))
    return frozenset(out)


def parse_cron(expr: str) -> Cron:
    parts = expr.split()
    if len(parts) != 5:
        raise CronError(f"needs 5 fields (minute hour day month weekday), got {len(parts)}")
    sets = [_field(p, name, lo, hi, names) for p, (name, lo, hi, names) in zip(parts, FIELDS)]
    weekdays = frozenset(d % 7 for d in sets[4])
    return Cron(sets[0], sets[1], sets[2], sets[3], weekdays, parts[2] == "*", parts[4] == "*")


def last_fire(expr: str, at: datetime, within_s: float) -> datetime | None:
    """The latest time ``t`` the expression fires with ``at - within_s < t <= at``, or None."""
    cron = parse_cron(expr)
    earliest = at - min(timedelta(seconds=within_s), MAX_LOOKBACK)
    t = at.replace(second=0, microsecond=0)
    while t > earliest:
        if not cron.day_matches(t):
            t = t.replace(hour=0, minute=0) - timedelta(minutes=1)
        elif t.hour not in cron.hours:
            t = t.replace(minute=0) - timedelta(minutes=1)
        elif t.minute not in cron.minutes:
            t -= timedelta(minutes=1)
        else:
            return t
    return None


def next_fire(expr: str, after: datetime, within_s: float) -> datetime | None:
    """The earliest time ``t`` the expression fires with ``after < t <= after + within_s``, or None."""
    cron = parse_cron(expr)
    latest = after + timedelta(seconds=within_s)
    t = after.replace(second=0, microsecond=0) + timedelta(minutes=1)
    while t <= latest:
        if not cron.day_matches(t):
            t = t.replace(hour=0, minute=0) + timedelta(days=1)
        elif t.hour not in cron.hours:
            t = t.replace(minute=0) + timedelta(hours=1)
        elif t.minute not in cron.minutes:
            t += timedelta(minutes=1)
        else:
            return t
    return None

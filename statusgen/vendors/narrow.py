"""Narrow a vendor view to the components a service depends on.

Components are picked by name or id, case-insensitively; a component group's
name picks all its members. The narrowed view keeps the incidents and
maintenance that touch a picked component or the whole page (those that
name no components), so the reason can name them; its status is the worst
current status of the picked components alone. An incident's impact is its
worst and may be hours old (a major incident now monitoring has moved its
component back to degraded): the component's own status is the vendor's
word for it now.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import replace

from statusgen.errors import VendorParseError
from statusgen.vendors._text import clean_text
from statusgen.vendors.model import VendorComponent, VendorView, worst_status

LISTED_CHARS = 600


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def _matches(component: VendorComponent, key: str) -> bool:
    keys = (component.name, component.id, component.group or "")
    return key in (_key(k) for k in keys if k)


def _available(view: VendorView) -> str:
    """The names to pick from, as many as fit in one readable line."""
    names = sorted({c.name for c in view.components} | {c.group for c in view.components if c.group})
    shown: list[str] = []
    while len(shown) < len(names) and sum(len(n) + 4 for n in shown) < LISTED_CHARS:
        shown.append(f'"{names[len(shown)]}"')
    more = f" and {len(names) - len(shown)} more" if len(shown) < len(names) else ""
    return (", ".join(shown) + more) or "none"


def _unknown(view: VendorView, missing: Iterable[str]) -> VendorParseError:
    wanted = ", ".join(f'"{clean_text(m, 100)}"' for m in missing)
    return VendorParseError(f"{view.format} payload: no component {wanted}; available: {_available(view)}")


def select_components(view: VendorView, wanted: Sequence[str]) -> tuple[VendorComponent, ...]:
    """The components picked by ``wanted``, in the vendor's order; every name must pick one."""
    keys = {name: _key(name) for name in wanted}
    missing = [n for n, k in keys.items() if not any(_matches(c, k) for c in view.components)]
    if missing:
        raise _unknown(view, missing)
    return tuple(c for c in view.components if any(_matches(c, k) for k in keys.values()))


def _affects(targets: Collection[str], picked: set[str]) -> bool:
    return not targets or not picked.isdisjoint(targets)


def narrow(view: VendorView, wanted: Sequence[str]) -> VendorView:
    """``view`` seen through the components ``wanted``."""
    components = select_components(view, wanted)
    picked = {c.id for c in components}
    incidents = tuple(i for i in view.incidents if _affects(i.touches(), picked))
    active = tuple(m for m in view.maintenance_active if _affects(m.components, picked))
    upcoming = tuple(m for m in view.maintenance_upcoming if _affects(m.components, picked))
    return replace(
        view,
        status=worst_status(c.status for c in components),
        components=components,
        incidents=incidents,
        maintenance_active=active,
        maintenance_upcoming=upcoming,
    )

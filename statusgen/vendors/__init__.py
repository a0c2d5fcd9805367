"""Vendor status adapters: a vendor's published status, as one normalized view.

    parse_vendor(body, fmt=None, components=None, zone=UTC) -> VendorView
      |  detect_format(body)            when fmt is None
      |  <format>.parse(body)           one adapter per format (Uptime Kuma's with ``zone``)
      +  narrow(view, components)       when components are given

    fetch_source(client, url, ...)      async, conditional, capped GET -> FetchResult
    read_local(path)                    a payload from a file (or file:// URL)

Every problem with a payload is a ``VendorParseError`` (one line naming the
format); network problems are ``Outcome`` values in a ``FetchResult``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, tzinfo
from types import MappingProxyType
from typing import Any

from statusgen.errors import VendorParseError
from statusgen.model import VENDOR_FORMATS
from statusgen.vendors import (
    cachet,
    feed,
    gcp,
    heroku,
    instatus,
    slack,
    statusio,
    statuspage,
    upptime,
    uptimekuma,
)
from statusgen.vendors.detect import detect_format
from statusgen.vendors.fetch import FetchResult, fetch_source, read_local
from statusgen.vendors.model import (
    STATUSES,
    VendorComponent,
    VendorIncident,
    VendorMaintenance,
    VendorView,
)
from statusgen.vendors.narrow import narrow

#: Format name -> adapter ``parse`` function, in the order of ``model.VENDOR_FORMATS``.
PARSERS: MappingProxyType[str, Callable[[Any], VendorView]] = MappingProxyType(
    {
        module.FORMAT: module.parse
        for module in (statuspage, statusio, slack, heroku, cachet, gcp, feed, instatus, uptimekuma, upptime)
    }
)
FORMATS: tuple[str, ...] = VENDOR_FORMATS


def parse_vendor(
    body: bytes, fmt: str | None = None, components: Sequence[str] | None = None, zone: tzinfo = UTC
) -> VendorView:
    """Read a vendor payload as ``fmt`` (guessed when None), narrowed to ``components``; times
    written without a zone (Uptime Kuma's beats) are in ``zone``."""
    name = detect_format(body) if fmt is None else fmt
    if name not in PARSERS:
        raise VendorParseError(f"unknown vendor format {name!r}; known: {', '.join(FORMATS)}")
    view = uptimekuma.parse(body, zone) if name == uptimekuma.FORMAT else PARSERS[name](body)
    if isinstance(components, str):
        components = [components]
    return narrow(view, components) if components else view


__all__ = [
    "FORMATS",
    "PARSERS",
    "STATUSES",
    "FetchResult",
    "VendorComponent",
    "VendorIncident",
    "VendorMaintenance",
    "VendorView",
    "detect_format",
    "fetch_source",
    "narrow",
    "parse_vendor",
    "read_local",
]

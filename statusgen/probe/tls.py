"""TLS for checks: whom a check trusts, and what the certificate of the server that answered says.

The certificate is read through httpcore's public ``network_stream`` response extension,
whose ``get_extra_info("ssl_object")`` is the connection's ``ssl.SSLObject``, while the
answer is still being read (no connection is kept after it). A certificate that failed
verification never gets that far: the handshake fails, and ``neterrors.outcome_of`` names
why (expired, another name, or any other TLS failure).
"""

from __future__ import annotations

import ssl
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx

from statusgen.errors import ConfigError
from statusgen.model import Certificate


def trust(ca_file: Path | None) -> ssl.SSLContext:
    """The TLS context of checks: httpx's own (its CA bundle), or only the CAs of ``ca_file``."""
    if ca_file is None:
        return httpx.create_ssl_context()
    try:
        return ssl.create_default_context(cafile=ca_file)
    except (OSError, ssl.SSLError) as exc:  # read when the configuration was; gone or changed since
        raise ConfigError([f"{ca_file}: cannot be read as PEM certificates ({exc}); give a PEM file of CAs"]) from None


def _issuer(cert: dict[str, Any]) -> str:
    """The issuer's organisation, else its common name, from ``getpeercert``'s relative names."""
    fields = {key: value for rdn in cert.get("issuer", ()) for key, value in rdn}
    return str(fields.get("organizationName") or fields.get("commonName") or "")


def certificate_of(response: httpx.Response) -> Certificate | None:
    """The verified certificate of the server that gave ``response``, or None (plain HTTP)."""
    stream = response.extensions.get("network_stream")
    ssl_object = stream.get_extra_info("ssl_object") if stream is not None else None
    cert = ssl_object.getpeercert() if isinstance(ssl_object, ssl.SSLObject) else None
    if not cert or "notAfter" not in cert:
        return None
    not_after = datetime.fromtimestamp(ssl.cert_time_to_seconds(str(cert["notAfter"])), UTC)
    names = tuple(str(pair[1]) for pair in cert.get("subjectAltName", ()) if pair[0] in ("DNS", "IP Address"))
    return Certificate(not_after, _issuer(cert), names)

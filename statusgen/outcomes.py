"""Our own vocabulary for what happened when we fetched something.

httpx exceptions are mapped to these once, at the probe and vendor-fetch
boundary; the store keeps outcomes, never exception strings.
"""

from __future__ import annotations

from enum import StrEnum


class Outcome(StrEnum):
    OK = "ok"                       # answered as expected
    TIMEOUT = "timeout"             # no complete answer within the timeout
    DNS = "dns"                     # the host name did not resolve
    CONNECT = "connect"             # TCP connection refused or unreachable
    TLS = "tls"                     # TLS handshake or certificate failure
    HTTP_STATUS = "http_status"     # answered with a status we did not expect
    KEYWORD = "keyword"             # body lacks the expected keyword
    TOO_LARGE = "too_large"         # body larger than the byte cap
    REDIRECTS = "redirects"         # too many redirects
    PROTOCOL = "protocol"           # broken HTTP (reset mid-answer, bad framing)
    PARSE = "parse"                 # (vendor sources) payload not in the expected shape
    ERROR = "error"                 # anything else; details go to the log only


DESCRIPTIONS: dict[Outcome, str] = {
    Outcome.OK: "answered as expected",
    Outcome.TIMEOUT: "timed out",
    Outcome.DNS: "host name did not resolve",
    Outcome.CONNECT: "connection failed",
    Outcome.TLS: "TLS handshake failed",
    Outcome.HTTP_STATUS: "answered with an unexpected HTTP status",
    Outcome.KEYWORD: "answer lacked the expected keyword",
    Outcome.TOO_LARGE: "answer exceeded the size cap",
    Outcome.REDIRECTS: "too many redirects",
    Outcome.PROTOCOL: "broke the HTTP protocol",
    Outcome.PARSE: "payload could not be read",
    Outcome.ERROR: "failed",
}

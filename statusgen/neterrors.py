"""The network boundary the probe and the vendor fetch share: how a request is sent, how its
answer is read, and what went wrong, in our words.

    opened(client, request, guard)   the answer, streamed, its redirects followed hop by hop,
                                     none from a public address to an internal one (``RedirectGuard``)
    PinnedTransport(inner)           the transport of a client ``opened`` sends with: a hop it checked
                                     goes to the address it checked
    read_capped(response, cap)       the decoded body, decoded a bounded piece at a time, at most ``cap`` bytes
    outcome_of(exc)                  an exception httpx, the OS or this module raised, as an ``Outcome``

The internet on the other side may be hostile: a few kilobytes of gzip can inflate to gigabytes,
and a public server can redirect us to addresses only our host reaches (a cloud metadata
service, an admin page on loopback). Nothing past the probe and the vendor fetch sees an
exception string.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
import zlib
from collections.abc import AsyncIterator, Collection, Iterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

import httpx

from statusgen.config.secrets import public_url
from statusgen.model import Outcome

CHAIN_LIMIT = 16
DNS_WORDS = (
    "name or service not known",
    "getaddrinfo",
    "nodename nor servname",
    "temporary failure in name resolution",
    "no address associated",
)
ACCEPT_ENCODING = "gzip, deflate"  # only what ``read_capped`` can decode with a bound on its output
PIECE = 65536  # the most one decoding step hands on at once
DEFAULT_PORTS = {"http": 80, "https": 443}
REDIRECT_BODY_LIMIT = 65536  # the most of a redirect's (raw) body read before its connection is closed
# OpenSSL's verification codes (``ssl.SSLCertVerificationError.verify_code``) that have outcomes of their own
CERT_CODES = {
    9: Outcome.CERT_EXPIRED,  # X509_V_ERR_CERT_NOT_YET_VALID: outside its validity all the same
    10: Outcome.CERT_EXPIRED,  # X509_V_ERR_CERT_HAS_EXPIRED
    62: Outcome.CERT_NAME,  # X509_V_ERR_HOSTNAME_MISMATCH
    64: Outcome.CERT_NAME,  # X509_V_ERR_IP_ADDRESS_MISMATCH
}

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


# -- redirects that lead inside ---------------------------------------------------


class PrivateRedirect(Exception):
    """A redirect from a public address to an internal one, refused (its message is the public URL)."""


#: IPv6 prefixes whose last 32 bits are an IPv4 address a connection may reach: IPv4-compatible
#: (deprecated, ::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d) and NAT64's (64:ff9b::a.b.c.d,
#: and the local-use 64:ff9b:1::/48). IPv4-mapped, 6to4 and Teredo have ``ipaddress``'s own.
EMBEDDING_V4 = tuple(ipaddress.IPv6Network(n) for n in ("::/96", "::ffff:0:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48"))


def reached(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """The address a connection to ``ip`` reaches: the IPv4 address an IPv6 one carries (mapped,
    6to4, Teredo's client, IPv4-compatible, translated, NAT64), else ``ip`` itself."""
    if not isinstance(ip, ipaddress.IPv6Address) or ip in (ipaddress.IPv6Address("::"), ipaddress.IPv6Address("::1")):
        return ip
    embedded = ip.ipv4_mapped or ip.sixtofour or (ip.teredo[1] if ip.teredo else None)
    if embedded is None and any(ip in network for network in EMBEDDING_V4):
        embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return embedded or ip


def is_public(address: str, internal: Collection[Network] | None = None) -> bool:
    """Whether a connection to ``address`` (an IP literal) leaves our host's networks.

    By default, whether it is globally routable (``ipaddress``'s ``is_global``: not loopback,
    link-local, private, unique-local, shared or reserved); an IPv6 address that carries an IPv4
    one is judged by that (``reached``). With ``internal``, whether it lies outside exactly those
    networks instead, so that a caller on loopback alone (a test) can make one loopback address
    stand for the public internet and another for the inside.
    """
    ip = reached(ipaddress.ip_address(address.split("%", 1)[0]))  # an IPv6 scope ("fe80::1%eth0") is not the address
    if internal is None:
        return ip.is_global
    return not any(ip in network for network in internal)


@dataclass(frozen=True)
class RedirectGuard:
    """Where redirects may lead. Once a chain has reached a public address, no later hop may lead
    to an internal one: a public server could otherwise make us request, with our headers,
    what only our host can reach. A target the operator configured internal is theirs to
    choose, and so are redirects among internal addresses from it. ``allow_private`` lifts the
    rule (``site.allow_private_targets``); ``internal`` is ``is_public``'s."""

    allow_private: bool = False
    internal: Collection[Network] | None = None


REFUSE_INSIDE = RedirectGuard()  # the default: no redirect from a public address to an internal one


async def _addresses(url: httpx.URL) -> list[str]:
    """The addresses a connection to ``url`` may use: an IP literal itself, else every address
    ``getaddrinfo`` gives, as the connection will resolve it."""
    host = url.raw_host.decode("ascii")
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
        return [host]
    except ValueError:
        pass
    port = url.port or DEFAULT_PORTS.get(url.scheme, 80)
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


async def _started_inside(response: httpx.Response, guard: RedirectGuard) -> bool:
    """Whether the connection that answered ``response`` went to an internal address: the address
    it used (httpcore's ``network_stream``), not a second lookup of its name, which a name may
    answer differently (public to the connection, internal to the check). Without a network stream
    (a transport of another kind), every address the name resolves to must be internal."""
    stream = response.extensions.get("network_stream")
    peer = stream.get_extra_info("server_addr") if stream is not None else None
    if peer:
        return not is_public(str(peer[0]), guard.internal)
    return all(not is_public(address, guard.internal) for address in await _addresses(response.request.url))


#: The request extension that names the address a hop was checked at (``opened``, ``PinnedTransport``).
PIN = "statusgen.address"


async def _check_and_pin(request: httpx.Request, guard: RedirectGuard) -> None:
    """Refuse a hop whose host resolves to any internal address; else have it sent to the first
    address checked (``PinnedTransport``), not to the one a second lookup by the connection would
    give: a name can answer a public address to the check and an internal one a moment later
    (DNS rebinding)."""
    addresses = await _addresses(request.url)
    if any(not is_public(address, guard.internal) for address in addresses):
        raise PrivateRedirect(public_url(str(request.url)))
    request.extensions.pop(PIN, None)  # httpx hands a hop's extensions on to the next
    if addresses and addresses[0] != request.url.host:  # a name, not an IP literal
        request.extensions[PIN] = addresses[0]


class PinnedTransport(httpx.AsyncBaseTransport):
    """httpx's transport, but a request that names an address in its ``PIN`` extension is sent to
    that address. Its host still names the server: the Host header, TLS's server name and the
    certificate's check are the host's, and the connection is not kept: the pool knows it by its
    address alone. The client above sees the request as it made it."""

    def __init__(self, inner: httpx.AsyncBaseTransport) -> None:
        self.inner = inner

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        address = request.extensions.get(PIN)
        if address is not None:
            headers = request.headers.copy()  # Host: the name
            headers["Connection"] = "close"  # a connection made for one name is never lent to another
            request = httpx.Request(
                request.method,
                request.url.copy_with(host=address),
                headers=headers,
                stream=request.stream,
                extensions={**request.extensions, "sni_hostname": request.url.raw_host.decode("ascii")},
            )
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or DEFAULT_PORTS.get(url.scheme)


async def _discard(response: httpx.Response) -> None:
    """Read a redirect's body as it came, never decoded, up to REDIRECT_BODY_LIMIT, then close
    it: a body read to its end lets the connection end cleanly, and a long one is cut."""
    read = 0
    async for raw in response.aiter_raw():
        read += len(raw)
        if read > REDIRECT_BODY_LIMIT:
            break
    await response.aclose()


@asynccontextmanager
async def opened(
    client: httpx.AsyncClient,
    request: httpx.Request,
    guard: RedirectGuard,
    private: Collection[str] = (),
    follow: bool = True,
) -> AsyncIterator[httpx.Response]:
    """The answer to ``request``, streamed. Redirects are followed here, not by httpx (at most
    ``client.max_redirects``; none when not ``follow``), so that each hop's addresses are checked
    before it is requested (and, with a ``PinnedTransport``, it goes to an address checked), and
    the body of a redirect is never decoded. The ``private`` headers
    (the configured ones, which may carry secrets) go to the first origin only: httpx strips only
    Authorization."""
    origin = _origin(request.url)
    response = await client.send(request, stream=True, follow_redirects=False)
    try:
        hops, outside = 0, False
        while follow and response.next_request is not None:
            if not (outside or guard.allow_private):  # where we are: resolved only once a redirect asks
                outside = not await _started_inside(response, guard)
            request = response.next_request
            await _discard(response)
            hops += 1
            if hops > client.max_redirects:
                raise httpx.TooManyRedirects("Exceeded maximum allowed redirects.", request=request)
            if outside:
                await _check_and_pin(request, guard)
            if _origin(request.url) != origin:
                for name in private:
                    request.headers.pop(name, None)
            response = await client.send(request, stream=True, follow_redirects=False)
        yield response
    finally:
        await response.aclose()


# -- bodies read within their cap -------------------------------------------------


class _Decoder(Protocol):
    def pieces(self, data: bytes) -> Iterator[bytes]: ...

    def rest(self) -> bytes: ...


class _Identity:
    def pieces(self, data: bytes) -> Iterator[bytes]:
        if data:
            yield data  # a network read, already bounded

    def rest(self) -> bytes:
        return b""


def _zlib_header(data: bytes) -> bool:
    return len(data) >= 2 and data[0] & 0x0F == 8 and (data[0] << 8 | data[1]) % 31 == 0


class _Inflate:
    """gzip or deflate, inflated at most ``PIECE`` bytes at a time: the input left over waits in
    ``unconsumed_tail`` until the output so far has been counted."""

    def __init__(self, wbits: int, sniff: bool = False) -> None:
        self.inflate = zlib.decompressobj(wbits)
        self.sniff = sniff  # "deflate" is sent with the zlib header or without: look at its first bytes
        self.head = b""

    def pieces(self, data: bytes) -> Iterator[bytes]:
        if self.sniff:
            data, self.head = self.head + data, b""
            if len(data) < 2:
                self.head = data  # too short to tell yet
                return
            self.sniff = False
            if not _zlib_header(data):
                self.inflate = zlib.decompressobj(-zlib.MAX_WBITS)
        while data:
            piece = self.inflate.decompress(data, PIECE)
            data = self.inflate.unconsumed_tail
            yield piece

    def rest(self) -> bytes:
        return self.inflate.decompress(self.head) + self.inflate.flush()


def _decoders(content_encoding: str) -> list[_Decoder]:
    """A decoder per encoding, the last applied first; an unknown one is read as it is, as httpx does."""
    decoders: list[_Decoder] = []
    for name in reversed([n.strip().lower() for n in content_encoding.split(",") if n.strip()]):
        if name in ("gzip", "x-gzip"):
            decoders.append(_Inflate(zlib.MAX_WBITS | 32))  # a gzip or zlib header, detected
        elif name == "deflate":
            decoders.append(_Inflate(zlib.MAX_WBITS, sniff=True))
        else:
            decoders.append(_Identity())
    return decoders


def _through(decoders: Sequence[_Decoder], data: bytes) -> Iterator[bytes]:
    """``data`` through every decoder in turn, lazily: each piece is handed on before the next is made."""
    if not decoders:
        yield data
        return
    for piece in decoders[0].pieces(data):
        yield from _through(decoders[1:], piece)


def _rests(decoders: Sequence[_Decoder]) -> Iterator[bytes]:
    for i, decoder in enumerate(decoders):
        yield from _through(decoders[i + 1 :], decoder.rest())


def _take(body: bytearray, pieces: Iterator[bytes], cap: int) -> bool:
    """Append ``pieces`` to ``body`` until it holds more than ``cap`` bytes; whether it does."""
    for piece in pieces:
        body += piece
        if len(body) > cap:
            return True
    return False


async def read_capped(response: httpx.Response, cap: int) -> bytes | None:
    """The decoded body, or None as soon as it grows past ``cap`` bytes. The raw stream is
    decoded here, not by httpx, which inflates each network read whole: the cap then holds on
    the decoded bytes as they are made, and nothing past it is read or inflated."""
    decoders = _decoders(response.headers.get("content-encoding", ""))
    body = bytearray()
    async for raw in response.aiter_raw():
        if _take(body, _through(decoders, raw), cap):
            return None
    return None if _take(body, _rests(decoders), cap) else bytes(body)


# -- exceptions into outcomes ----------------------------------------------------


def _causes(exc: BaseException) -> list[BaseException]:
    """The exception and what it was raised from, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and len(chain) < CHAIN_LIMIT:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _looks_like_dns(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, socket.gaierror) or any(w in text for w in DNS_WORDS)


def _connect_outcome(exc: BaseException) -> Outcome:
    chain = _causes(exc)
    if any(_looks_like_dns(e) for e in chain):
        return Outcome.DNS
    for e in chain:
        code = getattr(e, "verify_code", None)  # set by the ssl module's handshake, not by every raiser
        if isinstance(e, ssl.SSLCertVerificationError) and code in CERT_CODES:
            return CERT_CODES[code]
    if any(isinstance(e, ssl.SSLError) or "certificate" in str(e).lower() or "[ssl" in str(e).lower() for e in chain):
        return Outcome.TLS
    return Outcome.CONNECT


_OUTCOMES: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], Outcome], ...] = (
    ((httpx.TimeoutException, TimeoutError), Outcome.TIMEOUT),
    (httpx.TooManyRedirects, Outcome.REDIRECTS),
    (PrivateRedirect, Outcome.PRIVATE_REDIRECT),
    (httpx.ProxyError, Outcome.CONNECT),
    (
        (
            httpx.ProtocolError,
            httpx.ReadError,
            httpx.WriteError,
            httpx.CloseError,
            httpx.DecodingError,
            zlib.error,  # a body that does not inflate (``read_capped``)
        ),
        Outcome.PROTOCOL,
    ),
    (OSError, Outcome.CONNECT),  # a socket's own failure (no route to the host): a TCP check's, mostly
)


def outcome_of(exc: BaseException) -> Outcome:
    """Our word for what went wrong, from an exception httpx (or the OS) raised."""
    if isinstance(exc, (httpx.ConnectError, ConnectionError, socket.gaierror, ssl.SSLError)):
        return _connect_outcome(exc)
    for kinds, outcome in _OUTCOMES:
        if isinstance(exc, kinds):
            return outcome
    return Outcome.ERROR

"""The network under httpx for our checks: asyncio's own transports.

httpx normally reaches the network through httpcore's AnyIO backend, which
costs a task group per connect and a cancel scope per read and write. Checks
go through this plain-asyncio backend instead (``LoopTransport``): the same
httpx client, pool and HTTP/1.1 parser (h11), about a third less CPU per
check. Names resolve through the loop; several addresses of a host are tried
in turn, the next one after HAPPY_EYEBALLS_S, as AnyIO does.
"""

from __future__ import annotations

import asyncio
import ipaddress
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore
import httpx

HAPPY_EYEBALLS_S = 0.25         # the next address of a host gets a try after this long, as AnyIO does

READ_HIGH_WATER = 256 * 1024     # stop reading from the socket while this much is unread


class _Connection(asyncio.Protocol):
    """What one connection has received, whether it ended, and the one reader it must wake."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.received = bytearray()
        self.ended = False
        self.error: BaseException | None = None
        self.reading_paused = False
        self.writing_paused = False
        self.waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.received += data
        if len(self.received) > READ_HIGH_WATER and self.transport is not None:
            self.transport.pause_reading()
            self.reading_paused = True
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False            # let the transport close itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended, self.error = True, exc
        self._wake()

    def pause_writing(self) -> None:
        self.writing_paused = True

    def resume_writing(self) -> None:
        self.writing_paused = False
        self._wake()

    def _wake(self) -> None:
        if self.waiter is not None and not self.waiter.done():
            self.waiter.set_result(None)

    async def wait(self, timeout: float | None) -> None:
        """Until something happens on the connection (or ``timeout`` seconds pass)."""
        self.waiter = asyncio.get_running_loop().create_future()
        if timeout is None:
            await self.waiter
        else:
            async with asyncio.timeout(timeout):
                await self.waiter

    def take(self, max_bytes: int) -> bytes:
        data = bytes(self.received[:max_bytes])
        del self.received[:max_bytes]
        if self.reading_paused and len(self.received) < READ_HIGH_WATER // 2 and self.transport is not None:
            self.transport.resume_reading()
            self.reading_paused = False
        return data


class _LoopStream(httpcore.AsyncNetworkStream):
    """One connection as httpcore sees it: read, write, close, TLS."""

    def __init__(self, transport: asyncio.Transport, connection: _Connection) -> None:
        self.transport, self.connection = transport, connection

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        conn = self.connection
        while not conn.received:
            if conn.ended:
                if conn.error is not None:
                    raise httpcore.ReadError(str(conn.error)) from conn.error
                return b""
            try:
                await conn.wait(timeout)
            except TimeoutError as exc:
                raise httpcore.ReadTimeout("timed out reading") from exc
        return conn.take(max_bytes)

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        conn = self.connection
        if conn.ended or self.transport.is_closing():
            raise httpcore.WriteError("the connection is closed") from conn.error
        self.transport.write(buffer)
        while conn.writing_paused and not conn.ended:
            try:
                await conn.wait(timeout)
            except TimeoutError as exc:
                raise httpcore.WriteTimeout("timed out writing") from exc

    async def aclose(self) -> None:
        self.transport.close()

    async def start_tls(self, ssl_context: ssl.SSLContext, server_hostname: str | None = None,
                        timeout: float | None = None) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            tls = await loop.start_tls(self.transport, self.connection, ssl_context,
                                       server_hostname=server_hostname, ssl_handshake_timeout=timeout)
        except TimeoutError as exc:
            self.transport.close()
            raise httpcore.ConnectTimeout("timed out in the TLS handshake") from exc
        except OSError as exc:          # ssl.SSLError is an OSError
            self.transport.close()
            raise httpcore.ConnectError(str(exc)) from exc
        if tls is None:
            raise httpcore.ConnectError("the connection closed during the TLS handshake")
        return _LoopStream(tls, self.connection)  # type: ignore[arg-type]

    def get_extra_info(self, info: str) -> Any:
        if info == "is_readable":       # an idle connection the server closed or wrote to
            return self.connection.ended or bool(self.connection.received)
        names = {"ssl_object": "ssl_object", "client_addr": "sockname", "server_addr": "peername",
                 "socket": "socket"}
        return self.transport.get_extra_info(names[info]) if info in names else None


def _is_ip_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class _LoopBackend(httpcore.AsyncNetworkBackend):
    """Connections made by the running event loop itself (happy eyeballs as AnyIO does it)."""

    async def connect_tcp(self, host: str, port: int, timeout: float | None = None,
                          local_address: str | None = None,
                          socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None
                          ) -> httpcore.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = (local_address, 0) if local_address else None
        stagger = None if _is_ip_address(host) else HAPPY_EYEBALLS_S   # one address: nothing to race
        try:
            async with asyncio.timeout(timeout):
                transport, connection = await loop.create_connection(
                    _Connection, host, port, local_addr=local, happy_eyeballs_delay=stagger)
        except TimeoutError as exc:
            raise httpcore.ConnectTimeout("timed out connecting") from exc
        except OSError as exc:
            raise httpcore.ConnectError(str(exc)) from exc
        for option in socket_options or ():
            transport.get_extra_info("socket").setsockopt(*option)
        return _LoopStream(transport, connection)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


_HTTPX_ERRORS: tuple[tuple[type[Exception], type[httpx.HTTPError]], ...] = (
    # most specific first: the first match wins
    (httpcore.ConnectTimeout, httpx.ConnectTimeout), (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout), (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.ConnectError, httpx.ConnectError), (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError), (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError), (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol), (httpcore.ProtocolError, httpx.ProtocolError),
    (httpcore.NetworkError, httpx.NetworkError), (httpcore.TimeoutException, httpx.TimeoutException),
)


@contextmanager
def _as_httpx_errors() -> Iterator[None]:
    """httpcore's exceptions raised as httpx's, as httpx's own transport does."""
    try:
        yield
    except Exception as exc:
        for core, ours in _HTTPX_ERRORS:
            if isinstance(exc, core):
                raise ours(str(exc)) from exc
        raise


class _AnswerStream(httpx.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self.stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for part in self.stream:
                yield part

    async def aclose(self) -> None:
        close = getattr(self.stream, "aclose", None)
        if close is not None:
            await close()


class LoopTransport(httpx.AsyncBaseTransport):
    """httpx's transport, HTTP/1.1 over httpcore's pool, on the plain-asyncio backend."""

    def __init__(self, tls: ssl.SSLContext, max_connections: int) -> None:
        self.pool = httpcore.AsyncConnectionPool(
            ssl_context=tls, max_connections=max_connections, max_keepalive_connections=0,
            network_backend=_LoopBackend())

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = httpcore.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                           port=request.url.port, target=request.url.raw_path)
        core = httpcore.Request(method=request.method, url=url, headers=request.headers.raw,
                                content=request.stream, extensions=request.extensions)  # type: ignore[arg-type]
        with _as_httpx_errors():
            answer = await self.pool.handle_async_request(core)
        return httpx.Response(status_code=answer.status, headers=answer.headers,
                              stream=_AnswerStream(answer.stream), extensions=answer.extensions)  # type: ignore[arg-type]

    async def aclose(self) -> None:
        await self.pool.aclose()



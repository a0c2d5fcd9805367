"""Publish targets on loopback for tests and the publish bench: an S3-compatible server (moto in
server mode) and a recording proxy that sees every request rclone makes, in order, with its
headers and the size of its body.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import socket
import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit


@dataclass
class Request:
    method: str
    path: str  # the tree path, below the remote's folder (or the request's path, outside it)
    query: str
    headers: dict[str, list[str]] = field(repr=False)
    size: int  # bytes of its body

    def header(self, name: str) -> list[str]:
        return self.headers.get(name.lower(), [])


class RecordingProxy(ThreadingHTTPServer):
    """Forwards every request to ``upstream`` (a loopback port) and logs it in arrival order.
    ``prefix``: the remote's folder, stripped from the logged paths."""

    daemon_threads = True

    def __init__(self, upstream: int, prefix: str):
        super().__init__(("127.0.0.1", 0), ProxyHandler)
        self.upstream = upstream
        self.prefix = prefix
        self.log: list[Request] = []
        self.fail: set[str] = set()  # tree paths whose PUT is refused
        self.lock = threading.Lock()

    @property
    def port(self) -> int:
        return int(self.server_address[1])

    def uploads(self) -> list[str]:
        return [r.path for r in self.log if r.method == "PUT"]

    def taken(self) -> list[Request]:
        """The requests logged since the last call."""
        with self.lock:
            log, self.log = self.log, []
        return log

    def close(self) -> None:
        self.shutdown()
        self.server_close()


class ProxyHandler(BaseHTTPRequestHandler):
    server: RecordingProxy
    protocol_version = "HTTP/1.1"
    upstream: http.client.HTTPConnection | None = None

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() != "chunked":
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))
        chunks = []
        while size := int(self.rfile.readline().split(b";")[0].strip(), 16):
            chunks.append(self.rfile.read(size))
            self.rfile.readline()
        while self.rfile.readline().strip():  # trailers, then the blank line
            pass
        return b"".join(chunks)

    def _forward(self) -> None:
        body = self._body()
        parts = urlsplit(self.path)
        rel = unquote(parts.path).removeprefix(f"/{self.server.prefix}/")
        headers: dict[str, list[str]] = {}
        for k, v in self.headers.items():
            headers.setdefault(k.lower(), []).append(v)
        with self.server.lock:
            self.server.log.append(Request(self.command, rel, parts.query, headers, len(body)))
        if self.command == "PUT" and rel in self.server.fail:  # refused for good: rclone does not retry
            error = b"<Error><Code>AccessDenied</Code><Message>refused by the test</Message></Error>"
            return self._reply(403, [("Content-Type", "application/xml")], error)
        hop = {"connection", "content-length", "transfer-encoding", "keep-alive", "expect"}
        if self.upstream is None:  # one upstream connection per client connection
            self.upstream = http.client.HTTPConnection("127.0.0.1", self.server.upstream, timeout=30)
        sent = {k: v for k, v in self.headers.items() if k.lower() not in hop}
        self.upstream.request(self.command, self.path, body=body, headers=sent)
        answer = self.upstream.getresponse()
        data = answer.read()
        length = answer.getheader("Content-Length") if self.command == "HEAD" else None  # of the GET
        self._reply(answer.status, [(k, v) for k, v in answer.getheaders() if k.lower() not in hop], data, length)

    def _reply(self, status: int, headers: list[tuple[str, str]], data: bytes, length: str | None = None) -> None:
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", length or str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def __getattr__(self, name: str) -> object:
        if name.startswith("do_"):  # GET, PUT, HEAD, PROPFIND, MKCOL, DELETE, POST...
            return self._forward
        raise AttributeError(name)

    def handle(self) -> None:
        with contextlib.suppress(ConnectionResetError, BrokenPipeError):  # rclone leaves idle connections open
            super().handle()

    def log_message(self, format: str, *args: object) -> None:
        pass


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class S3:
    """An S3-compatible server on loopback behind a recording proxy, with one bucket."""

    proxy: RecordingProxy
    port: int  # the server's own port (reads that should not be counted go there)
    bucket: str

    def remote(self, through_proxy: bool = True) -> str:
        port = self.proxy.port if through_proxy else self.port
        return (
            f":s3,provider=Other,endpoint='http://127.0.0.1:{port}',access_key_id=test,"
            f"secret_access_key=test,region=us-east-1:{self.bucket}/{self.proxy.prefix.split('/', 1)[1]}"
        )

    def objects(self) -> dict[str, tuple[bytes, dict[str, str]]]:
        """Every object under the remote's folder: its bytes as stored, and its headers (read from
        the server itself, not counted by the proxy)."""
        import boto3  # moto's own dependency

        client = boto3.client(
            "s3",
            endpoint_url=f"http://127.0.0.1:{self.port}",
            aws_access_key_id="test",
            aws_secret_access_key="test",
            region_name="us-east-1",
        )
        prefix = self.proxy.prefix.split("/", 1)[1] + "/"
        out = {}
        for page in client.get_paginator("list_objects_v2").paginate(Bucket=self.bucket, Prefix=prefix):
            for item in page.get("Contents", []):
                got = client.get_object(Bucket=self.bucket, Key=item["Key"])
                headers = {k.lower(): v for k, v in got["ResponseMetadata"]["HTTPHeaders"].items()}
                out[item["Key"].removeprefix(prefix)] = (got["Body"].read(), headers)
        return out


@contextmanager
def s3_server(folder: str = "site") -> Iterator[S3]:
    """moto's S3 server on a free loopback port, a bucket in it, and a recording proxy before it."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line per request otherwise
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    # moto keeps its buckets per process, not per server: an earlier test's objects stay otherwise.
    conn.request("POST", "/moto-api/reset")
    reset = conn.getresponse()
    reset.read()
    assert reset.status == 200
    conn.request("PUT", "/status")
    assert conn.getresponse().status == 200
    conn.close()
    proxy = RecordingProxy(port, f"status/{folder}")
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        yield S3(proxy, port, "status")
    finally:
        proxy.close()
        server.stop()


def by_kind(log: list[Request]) -> Counter[str]:
    """Requests counted by kind: PUT, GET, HEAD, DELETE, LIST (a GET of the bucket), POST."""
    kinds: Counter[str] = Counter()
    for r in log:
        listing = r.method == "GET" and ("list-type" in r.query or "prefix=" in r.query)
        kinds["LIST" if listing else r.method] += 1
    return kinds

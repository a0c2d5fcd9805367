"""The generated nginx configuration, beyond the conformance suite: `nginx -t`
on its variants, included in an existing configuration, the real client
address behind a trusted proxy, ETags across generations, the atomic swap
under load, and a real caching HTTP client (hishel) reading through nginx."""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import hishel
import hishel._core._spec as hishel_spec
import httpx
import pytest
from click.testing import CliRunner
from hishel.httpx import CacheTransport

from statusgen import routes
from statusgen.cli import main
from statusgen.policy import PAGE_POLICY
from statusgen.web.nginx import nginx_config
from statusgen.web.nginx_inputs import NginxConfError, NginxOptions
from tests.conformance import (
    Server,
    free_port,
    fresh_address,
    nginx_test,
    rewrite,
    run_nginx,
    scenario,
    served,
    start_nginx,
    stop_nginx,
    worker_user,
)

VARIANTS = {
    "defaults": {},
    "ipv6 and names": {"listen": "[::]:8443", "server_name": "status.example.org status.example.net"},
    "no rate limit, no access log": {"rate_limit": False, "access_log": "off"},
    "behind proxies": {"real_ip_from": ("10.0.0.0/8", "2001:db8::/32", "unix:"), "real_ip_header": "CF-Connecting-IP"},
    "worker user": {"user": "www-data", "listen": "127.0.0.1:8080"},
    "worker user and group": {"user": "nobody nogroup"},
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    return scenario(tmp_path_factory, "nginx-site")


@pytest.fixture(scope="module")
def nginx(site, tmp_path_factory) -> Iterator[Server]:
    yield from served("nginx", site, tmp_path_factory.mktemp("nginx-prefix"))


def wrapper_conf(prefix: Path, included: Path) -> Path:
    """An existing nginx.conf of an operator, which includes the --server-block output."""
    conf = prefix / "outer.conf"
    conf.write_text(
        f"{'user root;' if worker_user() else ''}\npid nginx.pid;\nevents {{}}\nhttp {{\n"
        "    client_body_temp_path client_body_temp;\n    proxy_temp_path proxy_temp;\n"
        "    fastcgi_temp_path fastcgi_temp;\n    uwsgi_temp_path uwsgi_temp;\n    scgi_temp_path scgi_temp;\n"
        f"    access_log off;\n    include {included};\n}}\n"
    )
    return conf


# -- nginx -t ------------------------------------------------------------------


@pytest.mark.parametrize("name", VARIANTS)
def test_nginx_accepts_each_variant(site, tmp_path, name):
    conf = tmp_path / "nginx.conf"
    conf.write_text(nginx_config(NginxOptions(site=site, **VARIANTS[name])))  # type: ignore[arg-type]
    result = nginx_test(tmp_path, conf)
    assert result.returncode == 0, result.stderr
    assert "test is successful" in result.stderr


def test_nginx_accepts_the_server_block_inside_an_existing_configuration(site, tmp_path):
    block = tmp_path / "statusgen.conf"
    block.write_text(nginx_config(NginxOptions(site=site, server_block=True, real_ip_from=("192.0.2.1",))))
    result = nginx_test(tmp_path, wrapper_conf(tmp_path, block))
    assert result.returncode == 0, result.stderr


def test_nginx_t_can_fail(site, tmp_path):
    conf = tmp_path / "nginx.conf"
    conf.write_text(nginx_config(NginxOptions(site=site)).replace("limit_req_status 429;", "limit_req_status 42;"))
    assert nginx_test(tmp_path, conf).returncode != 0


def test_the_server_block_serves_inside_an_existing_configuration(site, tmp_path):
    port = free_port()
    block = tmp_path / "statusgen.conf"
    block.write_text(nginx_config(NginxOptions(site=site, server_block=True, listen=f"127.0.0.1:{port}")))
    process = run_nginx(tmp_path, wrapper_conf(tmp_path, block), port)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as client:
            assert client.get("/api/v1/snapshot").content == (site / "api/v1/snapshot.json").read_bytes()
            bad = client.get("/api/v1/services?category=nope")
            assert bad.status_code == 400 and bad.json()["error"]["parameter"] == "category"
    finally:
        stop_nginx(process)


# -- what is generated ----------------------------------------------------------


def copy_errors(site: Path, dest: Path, categories: list[str]) -> Path:
    """A tree holding only the error files of ``site``, with other declared categories."""
    (dest / routes.ERROR_DIR).mkdir(parents=True)
    for path in (site / routes.ERROR_DIR).glob("*.json"):
        shutil.copy(path, dest / routes.ERROR_DIR / path.name)
    (dest / routes.API).mkdir(parents=True)  # its health document lists the languages of its pages
    shutil.copy(site / routes.API / "health.json", dest / routes.API / "health.json")
    doc = json.loads((site / routes.error_file("400-category")).read_bytes())
    doc["error"]["allowed"] = categories
    (dest / routes.error_file("400-category")).write_text(json.dumps(doc))
    return dest


def test_the_whitelists_are_read_from_the_tree(site, tmp_path):
    conf = nginx_config(NginxOptions(site=copy_errors(site, tmp_path / "t", ["cloud", "developer-tools"])))
    assert '"~^cloud$"  cloud;' in conf and '"~^developer\\-tools$"  developer-tools;' in conf
    assert '"~^apis$"' not in conf
    assert '"~^partial_outage$"  partial_outage;' in conf and '"~^90d$"  90d;' in conf


def test_a_tree_with_unsafe_allowed_values_is_refused(site, tmp_path):
    with pytest.raises(NginxConfError, match="allowed"):
        nginx_config(NginxOptions(site=copy_errors(site, tmp_path / "t", ["ok", "a b; }"])))


def test_no_tree_is_a_clear_error(tmp_path):
    with pytest.raises(NginxConfError, match="statusgen build"):
        nginx_config(NginxOptions(site=tmp_path / "nothing"))


def test_bad_options_are_reported_all_at_once(site):
    with pytest.raises(NginxConfError) as info:
        nginx_config(
            NginxOptions(site=site, listen="80; evil", server_name="a{b", real_ip_from=("x y",), real_ip_header="X Bad")
        )
    assert len(str(info.value).splitlines()) == 4


def test_the_command_prints_the_configuration(site):
    runner = CliRunner()
    whole = runner.invoke(main, ["nginx-conf", "--site", str(site), "--listen", "127.0.0.1:8080"])
    assert whole.exit_code == 0, whole.output
    assert whole.output == nginx_config(NginxOptions(site=site, listen="127.0.0.1:8080"))
    assert f'root "{site.absolute()}";' in whole.output and "events {" in whole.output
    part = runner.invoke(main, ["nginx-conf", "--site", str(site), "--server-block", "--no-rate-limit"])
    assert part.exit_code == 0 and "events {" not in part.output and "http {" not in part.output
    assert "server {" in part.output and "map $args" in part.output and "limit_req" not in part.output
    failed = runner.invoke(main, ["nginx-conf", "--site", str(site / "nope")])
    assert failed.exit_code == 2 and "statusgen build" in failed.output


# -- client addresses ----------------------------------------------------------


def burst(client: httpx.Client, headers: dict[str, str], n: int = 120) -> list[int]:
    return [client.get("/api/v1/health", headers=headers).status_code for _ in range(n)]


def test_the_real_client_address_comes_from_a_trusted_proxy(site, tmp_path):
    proxied = start_nginx(site, tmp_path, real_ip_from=("127.0.0.0/8",))
    try:
        with proxied.client() as proxy:  # one proxy address, two clients behind it
            assert burst(proxy, {"X-Forwarded-For": "203.0.113.7"}) == [200] * 120
            assert proxy.get("/api/v1/health", headers={"X-Forwarded-For": "203.0.113.7"}).status_code == 429
            assert proxy.get("/api/v1/health", headers={"X-Forwarded-For": "203.0.113.8"}).status_code == 200
    finally:
        proxied.stop()


def test_without_a_trusted_proxy_forwarded_for_is_ignored(nginx):
    with nginx.client() as client:
        codes = [
            client.get("/api/v1/health", headers={"X-Forwarded-For": f"198.51.100.{i}"}).status_code
            for i in range(1, 122)
        ]
    assert codes[:120] == [200] * 120 and codes[120] == 429


def test_without_the_rate_limit_nothing_is_refused(site, tmp_path):
    unlimited = start_nginx(site, tmp_path, rate_limit=False)
    try:
        with unlimited.client() as client:
            assert burst(client, {}, 300) == [200] * 300
    finally:
        unlimited.stop()


# -- ETags across generations, and the swap ------------------------------------------

ETAGGED = [
    "/api/v1/snapshot",
    "/api/v1/services?status=degraded",
    "/api/v1/services/golf/history?range=30d",
    "/feed/incidents.xml",
    "/api/v1/services/nope",
]


def etags(server: Server) -> dict[tuple[str, str], str]:
    with server.client() as client:
        return {
            (url, enc): client.get(url, headers={"Accept-Encoding": enc}).headers["etag"]
            for url in ETAGGED
            for enc in ("identity", "gzip")
        }


def test_nginx_etag_is_mtime_and_size_of_the_file(nginx):
    history = "api/v1/services/golf/history/24h.json"  # a file with a .gz copy
    for rel, url, enc in (
        (history, "/api/v1/services/golf/history", "identity"),
        (history + ".gz", "/api/v1/services/golf/history", "gzip"),
    ):
        st = os.stat(nginx.site / rel)
        with nginx.client() as client:
            assert (
                client.get(url, headers={"Accept-Encoding": enc}).headers["etag"]
                == f'"{int(st.st_mtime):x}-{st.st_size:x}"'
            )


def test_a_new_generation_with_the_same_bytes_keeps_every_etag(nginx):
    before, generation = etags(nginx), nginx.site.resolve()
    rewrite(nginx.site, {})
    assert nginx.site.resolve() != generation
    assert etags(nginx) == before


def test_the_swap_is_atomic_for_readers(nginx):
    rel = "api/v1/health.json"
    original = nginx.file(rel)
    versions = [original, original.replace(b"}\n", b"}" + b" " * 300 + b"\n")]
    answers: list[tuple[int, bytes]] = []
    done = threading.Event()

    def read() -> None:
        while not done.is_set():
            with nginx.client() as client:  # a new address every 100 requests: under the limit
                for _ in range(100):
                    r = client.get("/api/v1/health", headers={"Accept-Encoding": "gzip"})
                    answers.append((r.status_code, r.content))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for i in range(12):
            rewrite(nginx.site, {rel: versions[i % 2]})
            time.sleep(0.01)
    finally:
        done.set()
        reader.join()
        rewrite(nginx.site, {rel: original})
    assert len(answers) > 12
    assert all(status == 200 and body in versions for status, body in answers)
    assert {body for _, body in answers} == set(versions)


# -- a real caching client --------------------------------------------------------


class Recording(httpx.HTTPTransport):
    """The network under the cache: records what went on the wire."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.sent: list[tuple[str | None, int]] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        response = super().handle_request(request)
        self.sent.append((request.headers.get("if-none-match"), response.status_code))
        return response


def test_a_caching_client_uses_fresh_answers_then_revalidates_with_304(nginx, tmp_path, monkeypatch):
    wire = Recording(local_address=fresh_address())
    cache = CacheTransport(
        next_transport=wire,
        storage=hishel.SqliteStorage(database_path=tmp_path / "cache.db"),
        rfc=hishel.CacheOptions(shared=False),
    )
    with httpx.Client(transport=cache, base_url=nginx.base) as client:
        first = client.get("/api/v1/snapshot")
        assert first.status_code == 200 and first.extensions["caching"]["stored"]
        fresh = client.get("/api/v1/snapshot")
        assert fresh.extensions["caching"]["from_cache"] and fresh.content == first.content
        assert len(wire.sent) == 1  # fresh for 15 s: not asked again
        real = time.time
        monkeypatch.setattr(hishel_spec, "time", SimpleNamespace(time=lambda: real() + 16))  # 16 s later
        stale = client.get("/api/v1/snapshot")
        assert stale.status_code == 200 and stale.content == first.content
        assert stale.extensions["caching"]["revalidated"]
        assert wire.sent[1] == (first.headers["etag"], 304)  # If-None-Match, then 304 without a body


def test_the_error_log_holds_no_error(nginx):
    assert nginx.prefix is not None
    log = (nginx.prefix / "error.log").read_text()
    bad = [line for line in log.splitlines() if any(f"[{lvl}]" in line for lvl in ("error", "crit", "alert", "emerg"))]
    assert not bad, bad[:5]


def test_every_option_is_in_the_deploy_doc():
    doc = (Path(__file__).resolve().parents[1] / "docs" / "deploy.md").read_text()
    for param in main.commands["nginx-conf"].params:
        for opt in param.opts:
            assert f"`{opt}" in doc, f"{opt} of statusgen nginx-conf is not in docs/deploy.md"


def test_the_configuration_bounds_slow_clients_and_holds_the_whole_policy(site):
    conf = nginx_config(NginxOptions(site=site))
    for line in (
        "client_header_timeout 10s;",
        "send_timeout 10s;",
        "keepalive_timeout 15s;",
        "limit_conn statusgen_conn 64;",
    ):
        assert line in conf, line
    assert "worker_connections 8192;" in conf and "worker_rlimit_nofile 16384;" in conf
    (policy,) = re.findall(r'"~\\\.html\$"  "([^"]*)";', conf)
    assert policy == PAGE_POLICY and len(policy) < 4000  # whole, in one value nginx can read (4 KB)
    assert "limit_conn" not in nginx_config(NginxOptions(site=site, rate_limit=False))

"""The pages under their Content-Security-Policy (issue 28): the demo build served by the real
nginx with the generated configuration, opened in Debian's Chromium. No page breaks a rule of
its policy, and the pages' scripts still work under it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import lxml.html
import pytest
from playwright.sync_api import Browser, Page, expect, sync_playwright

from statusgen.policy import EMBED_POLICY, PAGE_POLICY
from tests.conformance import Server, start_nginx
from tests.test_browser import ARGS, CHROMIUM, PLOT, point_at, told
from tests.test_pages import DemoBuild, demo_build

PAGES = ["/", "/services/payments-eu/", "/incidents/", "/api/", "/subscribe/"]
#: Collects what the page's policy refused, from before the page's first script runs.
LISTEN_FOR_VIOLATIONS = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__violations.push(`${e.violatedDirective}: ${e.blockedURI} ${e.sample}`);
});
"""


@pytest.fixture(scope="module")
def build() -> DemoBuild:
    return demo_build()


@pytest.fixture(scope="module")
def nginx(build: DemoBuild, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    server = start_nginx(build.root, tmp_path_factory.mktemp("csp-nginx"))
    yield server
    server.stop()


@pytest.fixture(scope="module")
def browser(nginx: Server) -> Iterator[Browser]:
    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


@dataclass
class Opened:
    page: Page
    console: list[str] = field(default_factory=list)

    def violations(self) -> list[str]:
        seen: list[str] = self.page.evaluate("window.__violations")
        return seen + [m for m in self.console if "Content Security Policy" in m or "Refused to" in m]


def open_page(browser: Browser, url: str) -> Opened:
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.add_init_script(LISTEN_FOR_VIOLATIONS)
    opened = Opened(page)
    page.on("console", lambda m: opened.console.append(m.text))
    page.on("pageerror", lambda e: opened.console.append(f"Refused to run: {e}"))
    answer = page.goto(url, wait_until="load")
    assert answer is not None and answer.status == 200, url
    assert answer.headers["content-security-policy"] == PAGE_POLICY
    return opened


def history(nginx: Server, slug: str, name: str) -> Any:
    return httpx.get(f"{nginx.base}/api/v1/services/{slug}/history?range={name}").json()


@pytest.mark.parametrize("path", PAGES)
def test_no_page_breaks_its_policy(browser: Browser, nginx: Server, path: str) -> None:
    opened = open_page(browser, nginx.base + path)
    opened.page.wait_for_load_state("networkidle")
    assert opened.violations() == [], path
    opened.page.context.close()


def test_the_front_page_bar_still_tells_a_day(browser: Browser, nginx: Server) -> None:
    points = history(nginx, "acme-api", "90d")
    opened = open_page(browser, nginx.base + "/")
    tip = opened.page.locator("#svc-acme-api .tip")
    point_at(opened.page, "#svc-acme-api .bar", 45, len(points["points"]) + 1)  # and today so far
    expect(tip).to_have_text(told(points["points"][45], points["resolution_s"]))
    widths = opened.page.locator("#svc-acme-api .bar i").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().width)"
    )
    assert max(widths) > 2 * min(widths), "a cell of many days is wider: its class was applied"
    assert opened.violations() == []
    opened.page.context.close()


def test_the_service_page_chart_still_tells_a_bucket(browser: Browser, nginx: Server) -> None:
    doc = history(nginx, "payments-eu", "24h")
    points = doc["points"]
    opened = open_page(browser, nginx.base + "/services/payments-eu/")
    chart = "#panel-24h figure:nth-of-type(1) svg"
    point_at(opened.page, chart, len(points) - 1, len(points), PLOT)
    expect(opened.page.locator("#panel-24h figure:nth-of-type(1) .tip")).to_have_text(
        told(points[-1], doc["resolution_s"], "latency")
    )
    assert opened.violations() == []
    opened.page.context.close()


# -- without a browser: the policy allows exactly the pages' inline styles ------------------------


def test_no_page_holds_an_inline_style_and_the_policy_is_short(build: DemoBuild) -> None:
    for path in Path(build.root).resolve().rglob("*.html"):
        tree = lxml.html.fromstring(path.read_bytes())
        styles = {el.get("style") for el in tree.iter() if isinstance(el.tag, str) and el.get("style")}
        assert styles == set(), path  # classes, not style attributes: the policy lists no hash
        # the one inline script element is data the script reads (its words): never run, outside CSP's script-src
        inline = tree.xpath("//script[not(@src) and not(@type='application/json')] | //style")
        assert not inline, f"{path}: an inline script or style element"
        handlers = [a for el in tree.iter() if isinstance(el.tag, str) for a in el.attrib if a.startswith("on")]
        assert handlers == [], path
    assert "style-src-attr" not in PAGE_POLICY and len(PAGE_POLICY.encode()) < 1024


#: nginx as any operator puts it in front of a site: proxy_pass with every buffer at its default
#: (proxy_buffer_size 4 KB: an answer's headers that do not fit are a 502).
STOCK_PROXY = """
worker_processes 1;
pid {prefix}/proxy.pid;
events {{ worker_connections 64; }}
http {{
    access_log off;
    client_body_temp_path {prefix}/body; proxy_temp_path {prefix}/proxy;
    fastcgi_temp_path {prefix}/fastcgi; uwsgi_temp_path {prefix}/uwsgi; scgi_temp_path {prefix}/scgi;
    server {{
        listen 127.0.0.1:{port};
        location / {{ proxy_pass http://127.0.0.1:{upstream}; }}
    }}
}}
"""


@pytest.mark.parametrize("kind", ["serve", "nginx"])
def test_every_page_passes_a_stock_reverse_proxy(build: DemoBuild, tmp_path: Path, kind: str) -> None:
    from tests.conformance import free_port, run_nginx, start, stop_nginx

    upstream = start(kind, build.root, tmp_path / "upstream")
    port, prefix = free_port(), tmp_path / "proxy"
    prefix.mkdir()
    conf = prefix / "proxy.conf"
    conf.write_text(STOCK_PROXY.format(prefix=prefix, port=port, upstream=upstream.port))
    proxy = run_nginx(prefix, conf, port)
    try:
        root = Path(build.root).resolve()
        pages = sorted(p.relative_to(root).as_posix() for p in root.rglob("index.html"))
        assert len(pages) > 20
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as client:
            for rel in pages:
                path = "/" + rel.removesuffix("index.html")
                answer = client.get(path)
                assert answer.status_code == 200, (path, answer.status_code)
                assert answer.headers["content-security-policy"] in (PAGE_POLICY, EMBED_POLICY), path
    finally:
        stop_nginx(proxy)
        upstream.stop()

"""The published site in a real headless Chromium: the report page's figures render,
asv's graphs render, and neither page logs a console error.

Needs Chromium (Debian: `apt-get install chromium`; or set TFGPUBENCH_CHROMIUM)
and the `playwright` Python package; skipped, with the reason, without them.
The site is served by http.server bound to 127.0.0.1 on an ephemeral port.
"""

import functools
import http.server
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest

from tfgpubench.config import load_config
from tfgpubench.report import publish_page

from .conftest import asv_publish, write_config
from .test_page import make_hostile_results

# asv's index.html loads jQuery, flot and bootstrap from these CDNs.
ASV_CDN_HOSTS = ["code.jquery.com", "cdnjs.cloudflare.com", "cdn.jsdelivr.net"]


def chromium_path():
    for candidate in (os.environ.get("TFGPUBENCH_CHROMIUM"), "chromium", "chromium-browser",
                      "google-chrome"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    return None


pytestmark = [
    pytest.mark.skipif(chromium_path() is None,
                       reason="no Chromium: apt-get install chromium (or set TFGPUBENCH_CHROMIUM)"),
]


def cdn_reachable():
    try:
        for host in ASV_CDN_HOSTS:
            socket.create_connection((host, 443), timeout=3).close()
    except OSError:
        return False
    return True


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture
def serve():
    """serve(directory) -> base URL; a server on 127.0.0.1 only, stopped after the test."""
    servers = []

    def start(directory):
        handler = functools.partial(QuietHandler, directory=str(directory))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture
def browser():
    sync_api = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium_path(), headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"],
        )
        yield launched
        launched.close()


def open_page(browser, url):
    """(page, console errors, dialogs) after `url` has loaded."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    errors, dialogs = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)

    def dismiss(dialog):
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.goto(url, wait_until="networkidle")
    return page, errors, dialogs


def site(tmp_path, results_dir, repo):
    config_path = write_config(tmp_path, results_dir, repo)
    asv_publish(config_path)
    publish_page(load_config(config_path), show_progress=False)
    return tmp_path / "html"


def test_report_page_shows_its_figures(tmp_path, results_copy, stack_repo, serve, browser):
    base = serve(site(tmp_path, results_copy, stack_repo))
    page, errors, _ = open_page(browser, f"{base}/report/index.html")
    images = page.eval_on_selector_all(
        "img", "els => els.map(e => [e.getAttribute('src'), e.complete && e.naturalWidth])"
    )
    assert len(images) >= 4
    assert all(width and width > 100 for _, width in images), images
    assert "No GPU results" in page.inner_text("body")
    assert page.locator("table").count() >= 4
    assert errors == []
    shot = os.environ.get("TFGPUBENCH_SCREENSHOT")
    page.screenshot(path=shot or str(tmp_path / "report.png"), full_page=True)
    # The page's links lead into asv's site, which is served beside it.
    href = page.locator("a", has_text="time per op (asv graph)").first.get_attribute("href")
    assert href.startswith("../index.html#multiply.Multiply.time_multiply")


def test_hostile_names_stay_text(tmp_path, results_copy, serve, browser):
    repo = make_hostile_results(tmp_path, results_copy)
    base = serve(site(tmp_path, results_copy, repo))
    page, errors, dialogs = open_page(browser, f"{base}/report/index.html")
    assert dialogs == [] and errors == []
    body = page.inner_text("body")
    assert "<script>alert('mode')</script>" in body
    assert "box<img src=x onerror=alert('machine')>" in body


def test_asv_graphs_render(tmp_path, results_copy, stack_repo, serve, browser):
    html_dir = site(tmp_path, results_copy, stack_repo)
    if not cdn_reachable():
        pytest.skip("asv's site loads jQuery and flot from " + ", ".join(ASV_CDN_HOSTS)
                    + ", which this machine cannot reach")
    base = serve(html_dir)
    page, errors, _ = open_page(
        browser, f"{base}/index.html#multiply.Multiply.time_multiply?machine=testbox"
    )
    page.wait_for_selector("#graph-display canvas", timeout=20_000)
    assert page.locator("#graph-display canvas").count() >= 1
    assert errors == []
    assert Path(html_dir, "graphs").is_dir()

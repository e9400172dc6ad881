"""The published site in a real headless Chromium: the report page's figures render,
asv's graphs render, and neither page logs a console error.

Needs Chromium (Debian: `apt-get install chromium`; or set TFGPUBENCH_CHROMIUM)
and the `playwright` Python package; skipped, with the reason, without them.
asv's site loads jQuery, flot and bootstrap from CDNs; where those cannot be
reached, the same releases come from the npm registry (see NPM_LIBRARIES).
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

from .conftest import SYNTHETIC_GPU_RESULTS, asv_publish, write_config
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


def open_page(browser, url, before=None):
    """(page, console errors, dialogs) after `url` has loaded; `before(page)` runs first."""
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    if before:
        before(page)
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


def test_report_page_on_synthetic_gpu_results_shows_the_gpu_figures(tmp_path, stack_repo, serve,
                                                                   browser):
    # SYNTHETIC results from a stated model (make_synthetic_gpu_results.py): the page's
    # GPU branches render, and the page says what they are.
    base = serve(site(tmp_path, SYNTHETIC_GPU_RESULTS, stack_repo))
    page, errors, _ = open_page(browser, f"{base}/report/index.html")
    speedups = page.eval_on_selector_all(
        "figure", "els => els.filter(e => e.innerText.includes('GPU/CPU speedup'))"
                  ".map(e => e.querySelector('img').naturalWidth)")
    assert len(speedups) >= 4 and all(width > 100 for width in speedups)
    body = page.inner_text("body")
    assert "SYNTHETIC" in body and "GPU self-check, run before measuring" in body
    assert "Best measured GPU speedup" in body and "No GPU results" not in body
    assert errors == []


def test_hostile_names_stay_text(tmp_path, results_copy, serve, browser):
    repo = make_hostile_results(tmp_path, results_copy)
    base = serve(site(tmp_path, results_copy, repo))
    page, errors, dialogs = open_page(browser, f"{base}/report/index.html")
    assert dialogs == [] and errors == []
    body = page.inner_text("body")
    assert "<script>alert('mode')</script>" in body
    assert "box<img src=x onerror=alert('machine')>" in body


# Where no CDN can be reached, asv's third-party libraries are served from the
# same releases on the npm registry. cdnjs's minified flot 0.8.3 builds and
# stupidtable 1.0.1 are not on npm (flot's unminified 0.8.3 sources and
# stupid-table-plugin 1.1.3 are), so the integrity hashes of asv's index.html
# cannot be met and are dropped from the served copy; asv's own code and the
# data it published are served unchanged.
NPM_LIBRARIES = ["jquery@3.3.1", "flot@0.8.3", "flot-orderbars@1.0.0",
                 "stupid-table-plugin@1.1.3", "blueimp-md5@2.19.0", "bootstrap@3.1.1"]
CDN_FILES = {
    "https://code.jquery.com/jquery-3.3.1.min.js": "jquery/dist/jquery.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js":
        "stupid-table-plugin/stupidtable.min.js",
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js":
        "blueimp-md5/js/md5.min.js",
}


def cdn_to_npm_file(url, node_modules):
    """The npm package file standing in for a CDN URL of asv's index.html, or None."""
    if url in CDN_FILES:
        return node_modules / CDN_FILES[url]
    flot = "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/"
    if url.startswith(flot):
        return node_modules / "flot" / url[len(flot):].replace(".min.js", ".js")
    jsdelivr = "https://cdn.jsdelivr.net/npm/"
    if url.startswith(jsdelivr):
        package_at_version, _, path = url[len(jsdelivr):].partition("/")
        return node_modules / package_at_version.rsplit("@", 1)[0] / path
    return None


@pytest.fixture(scope="session")
def npm_libraries(tmp_path_factory):
    """node_modules with asv's libraries, or a skip saying why not."""
    import subprocess

    if not shutil.which("npm"):
        pytest.skip("asv's site needs its CDN libraries: no CDN and no npm here")
    prefix = tmp_path_factory.mktemp("asv-libraries")
    done = subprocess.run(
        ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--silent",
         *NPM_LIBRARIES], capture_output=True, text=True, timeout=300,
    )
    if done.returncode != 0:
        pytest.skip(f"no CDN, and npm could not install asv's libraries: {done.stderr[-300:]}")
    return prefix / "node_modules"


def serve_cdn_from_npm(page, base, node_modules):
    import re

    def fulfil(route):
        url = route.request.url
        if url.startswith(base) and url.split("#")[0].split("?")[0].endswith("/index.html"):
            response = route.fetch()
            body = re.sub(r'\s+integrity="[^"]*"', "", response.text())
            return route.fulfill(response=response, body=body)
        local = cdn_to_npm_file(url, node_modules)
        if local is None:
            return route.continue_()
        assert local.is_file(), f"{url}: no {local}"
        content_type = "text/css" if url.endswith(".css") else "application/javascript"
        return route.fulfill(body=local.read_bytes(), content_type=content_type,
                             headers={"Access-Control-Allow-Origin": "*"})

    page.route("**/*", fulfil)


def test_asv_graphs_render(tmp_path, results_copy, stack_repo, serve, browser, request):
    html_dir = site(tmp_path, results_copy, stack_repo)
    base = serve(html_dir)
    url = f"{base}/index.html#multiply.Multiply.time_multiply?machine=testbox"
    if cdn_reachable():
        page, errors, _ = open_page(browser, url)
    else:
        node_modules = request.getfixturevalue("npm_libraries")
        page, errors, _ = open_page(
            browser, url, before=lambda p: serve_cdn_from_npm(p, base, node_modules)
        )
    page.wait_for_selector("#graph-display canvas", timeout=20_000)
    assert page.locator("#graph-display canvas").count() >= 1
    # flot labels the axes it drew from the data: the x axis carries the tags.
    page.wait_for_selector("#graph-display .flot-tick-label", timeout=20_000)
    assert errors == []
    assert Path(html_dir, "graphs").is_dir()
    shot = os.environ.get("TFGPUBENCH_ASV_SCREENSHOT")
    page.screenshot(path=shot or str(tmp_path / "asv.png"), full_page=True)

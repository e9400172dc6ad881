"""The published site in a real headless Chromium with no network beyond 127.0.0.1:
the report page's figures render, asv's graphs render with the releases on their
x axis, and no page logs a console error or asks for anything outside.

Needs Chromium (Debian: `apt-get install chromium`; or set TFGPUBENCH_CHROMIUM)
and the `playwright` Python package; skipped, with the reason, without them.
The site is published as `python -m tfgpubench publish` does (runner.publish):
asv's CDN libraries are taken from the npm registry at publish time and
served from html/ itself; the asv test is skipped, with the reason, where
that registry cannot be reached. The site is served by http.server bound to
127.0.0.1 on an ephemeral port.
"""

import functools
import http.server
import importlib
import inspect
import json
import os
import shutil
import threading
import urllib.parse

import pytest

from tests.vendor.registries import refused_address
from tfgpubench.runner import publish
from tfgpubench.vendor.cdn import external_references
from tfgpubench.vendor.npm import Registry, registry_url

from .conftest import SYNTHETIC_GPU_RESULTS, write_config
from .stackrepo import STACKS
from .test_page import make_hostile_results

TAGS = [tag for tag, _ in STACKS]
# Every name resolves to nothing but 127.0.0.1: a request for a CDN fails in
# the browser itself, whatever page.route lets through.
NO_NETWORK_ARGS = ["--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
                   "--disable-background-networking", "--disable-component-update",
                   "--disable-sync", "--no-first-run", "--disable-domain-reliability"]


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
            args=["--no-sandbox", "--disable-gpu", *NO_NETWORK_ARGS],
        )
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def npm_cache(tmp_path_factory):
    """One download of asv's libraries for the whole session."""
    return tmp_path_factory.mktemp("npm-cache")


@pytest.fixture
def npm_registry(npm_cache):
    """The registry publishing takes asv's libraries from, or a skip saying why not."""
    registry = Registry(registry_url(), npm_cache)
    try:
        registry.tarball("jquery", "3.3.1")
    except Exception as exc:
        pytest.skip(f"asv's libraries cannot be had from the npm registry: {exc}")
    return registry


def open_page(browser, url):
    """(page, console errors, dialogs, requests for other hosts) after `url` has loaded.

    Every request for a host other than 127.0.0.1 is aborted and recorded.
    """
    page = browser.new_page(viewport={"width": 1300, "height": 900})
    errors, dialogs, blocked = [], [], []

    def only_this_machine(route):
        if urllib.parse.urlsplit(route.request.url).hostname == "127.0.0.1":
            return route.continue_()
        blocked.append(route.request.url)
        return route.abort("blockedbyclient")

    page.route("**/*", only_this_machine)
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: errors.append(f"{r.status} {r.url}") if r.status >= 400 else None)

    def dismiss(dialog):
        dialogs.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", dismiss)
    page.goto(url, wait_until="networkidle")
    return page, errors, dialogs, blocked


def site(tmp_path, results_dir, repo, registry=None):
    """html/ as `python -m tfgpubench publish` writes it (asv's libraries from `registry`;
    None: offline, so asv's pages keep their CDN links)."""
    config_path = write_config(tmp_path, results_dir, repo)
    assert publish(config_path, registry=registry or Registry(refused_address()))
    return tmp_path / "html"


def test_report_page_shows_its_figures(tmp_path, results_copy, stack_repo, serve, browser):
    base = serve(site(tmp_path, results_copy, stack_repo))
    page, errors, _, blocked = open_page(browser, f"{base}/report/index.html")
    images = page.eval_on_selector_all(
        "img", "els => els.map(e => [e.getAttribute('src'), e.complete && e.naturalWidth])"
    )
    assert len(images) >= 4
    assert all(width and width > 100 for _, width in images), images
    assert "No GPU results" in page.inner_text("body")
    assert page.locator("table").count() >= 4
    assert errors == [] and blocked == []
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
    page, errors, _, blocked = open_page(browser, f"{base}/report/index.html")
    speedups = page.eval_on_selector_all(
        "figure", "els => els.filter(e => e.innerText.includes('GPU/CPU speedup'))"
                  ".map(e => e.querySelector('img').naturalWidth)")
    assert len(speedups) >= 4 and all(width > 100 for width in speedups)
    body = page.inner_text("body")
    assert "SYNTHETIC" in body and "GPU self-check, run before measuring" in body
    assert "Best measured GPU speedup" in body and "No GPU results" not in body
    assert errors == [] and blocked == []


def test_hostile_names_stay_text(tmp_path, results_copy, serve, browser):
    repo = make_hostile_results(tmp_path, results_copy)
    base = serve(site(tmp_path, results_copy, repo))
    page, errors, dialogs, blocked = open_page(browser, f"{base}/report/index.html")
    assert dialogs == [] and errors == [] and blocked == []
    body = page.inner_text("body")
    assert "<script>alert('mode')</script>" in body
    assert "box<img src=x onerror=alert('machine')>" in body


def test_asv_graphs_render_with_no_network(tmp_path, results_copy, stack_repo, serve, browser,
                                           npm_registry):
    html_dir = site(tmp_path, results_copy, stack_repo, npm_registry)
    # Publishing served every CDN library from html/ itself.
    assert external_references((html_dir / "index.html").read_text()) == []
    base = serve(html_dir)
    page, errors, _, blocked = open_page(
        browser, f"{base}/index.html#multiply.Multiply.time_multiply?machine=testbox")
    page.wait_for_selector("#graph-display canvas", timeout=20_000)
    assert page.locator("#main-graph canvas").count() >= 1
    # flot drew its axes from the data, and asv labels each release (a git tag of the
    # stacks repo) at its place on the x axis, the older one to the left.
    page.wait_for_selector("#main-graph .flot-tick-label", timeout=20_000)
    tags = [page.locator("#main-graph div", has_text=tag).last for tag in TAGS]
    for tag in tags:
        tag.wait_for(timeout=20_000)
    lefts = [tag.bounding_box()["x"] for tag in tags]
    assert lefts[0] < lefts[1]
    assert errors == []
    assert blocked == []
    shot = os.environ.get("TFGPUBENCH_ASV_SCREENSHOT")
    page.screenshot(path=shot or str(tmp_path / "asv.png"), full_page=True)


def test_asv_list_sorts_and_regressions_open_with_no_network(tmp_path, results_copy, stack_repo,
                                                            serve, browser, npm_registry):
    """asv's benchmark list (and regressions table) sort with stupidtable, the library
    whose exact release npm lacks (a later one stands in): the list still sorts, and
    the regressions view opens without an error."""
    base = serve(site(tmp_path, results_copy, stack_repo, npm_registry))
    page, errors, _, blocked = open_page(browser, f"{base}/index.html#/summarylist")
    table = page.locator("#summarylist-body table")
    table.wait_for(timeout=20_000)
    first_column = table.locator("tbody tr td:first-child")
    names = first_column.all_inner_texts()
    assert len(names) > 1
    orders = {}
    for direction in ("desc", "asc"):
        # asv records each sort in the URL and draws the table anew from it.
        table.locator("thead th").first.click()
        page.wait_for_function(f"location.hash.includes('dir={direction}')", timeout=20_000)
        page.locator(f"#summarylist-body thead th.{direction}").wait_for(timeout=20_000)
        orders[direction] = first_column.all_inner_texts()
    # Sorted by the name column one way, then the other: the same rows, reordered.
    assert sorted(orders["asc"]) == sorted(names)
    assert orders["asc"] == orders["desc"][::-1] != orders["desc"]
    page.goto(f"{base}/index.html#/regressions", wait_until="networkidle")
    page.locator("#regressions-display").wait_for(timeout=20_000)
    assert errors == [] and blocked == []


def docstring_line(benchmark_id):
    """The first line of the docstring of `benchmark_id`'s method in this checkout."""
    module, cls, method = benchmark_id.split(".")
    owner = importlib.import_module(f"benchmarks.{module}")
    doc = inspect.getdoc(getattr(getattr(owner, cls), method))
    return doc.splitlines()[0] if doc else None


def test_asv_site_shows_every_benchmarks_docstring(tmp_path, results_copy, stack_repo, serve,
                                                   browser, npm_registry):
    """asv shows a benchmark's source, docstring first, when the pointer rests on its name
    in the graphs' benchmark list: every benchmark of the results has a docstring, and it
    is today's (the fixture results come from a run of today's suite)."""
    html_dir = site(tmp_path, results_copy, stack_repo, npm_registry)
    ids = sorted(json.loads((html_dir / "index.json").read_text())["benchmarks"])
    assert {i.split(".")[0] for i in ids} >= {"multiply", "wait", "seed", "reference"}
    base = serve(html_dir)
    page, errors, _, blocked = open_page(browser, f"{base}/index.html#{ids[0]}?machine=testbox")
    # Open every module and class of the list, as a reader would: parents come first.
    headers = page.locator("#graphdisplay-navigation label.nav-header")
    headers.first.wait_for(timeout=20_000)
    for i in range(headers.count()):
        headers.nth(i).click()
    for benchmark_id in ids:
        expected = docstring_line(benchmark_id)
        assert expected, f"{benchmark_id} has no docstring"
        page.hover(f'#graph-display a[href="#{benchmark_id}"]')
        tooltip = page.locator(".tooltip .tooltip-inner").last
        tooltip.wait_for(timeout=20_000)
        assert expected in tooltip.inner_text(), benchmark_id
        page.mouse.move(0, 0)
    assert errors == [] and blocked == []

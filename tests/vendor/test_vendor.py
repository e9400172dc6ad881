"""asv's pages made self-contained, against a stand-in registry (and once the real one)."""

import json
import shutil
from pathlib import Path

import asv
import pytest

from tfgpubench.vendor import describe, make_self_contained
from tfgpubench.vendor.cdn import external_references
from tfgpubench.vendor.integrity import digest
from tfgpubench.vendor.npm import DEFAULT_REGISTRY, Registry

from .registries import npm_reachable

# The CDN's files, as npm also has them (jquery, bootstrap), and flot's sources
# (cdnjs serves its own minified build of them, hence a hash nothing on npm meets).
JQUERY = b"/*! jQuery v3.3.1 */ window.jQuery = {};"
FLOT = b"/* Flot v0.8.3 */ jQuery.plot = function () {};"
CSS = b".glyphicon{font-family:'G'} @font-face{src:url(../fonts/g.woff)}"
FONT = b"wOFF font"
JQUERY_URL = "https://code.jquery.com/jquery-3.3.1.min.js"
FLOT_URL = "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js"
CSS_URL = "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css"

PAGE = f"""<!doctype html>
<html><head>
<script src="{JQUERY_URL}" integrity="{digest(JQUERY, 'sha256')}" crossorigin="anonymous" onerror="js_load_failure()"></script>
<script src="{FLOT_URL}" integrity="{digest(b'cdnjs minified flot')}" crossorigin="anonymous" onerror="js_load_failure()"></script>
<script language="javascript" type="text/javascript" src="asv.js"></script>
<link rel="stylesheet" href="{CSS_URL}" integrity="{digest(CSS, 'sha256')}" crossorigin="anonymous">
</head><body><a href="https://github.com/airspeed-velocity/asv/">airspeed velocity</a></body></html>
"""  # noqa: E501


def publish_libraries(registry, jquery_integrity=None):
    registry.publish("jquery", "3.3.1", {"dist/jquery.min.js": JQUERY, "LICENSE.txt": b"MIT"},
                     integrity=jquery_integrity)
    registry.publish("flot", "0.8.3", {"jquery.flot.js": FLOT, "LICENSE.txt": b"MIT"})
    registry.publish("bootstrap", "3.1.1", {"dist/css/bootstrap.min.css": CSS,
                                            "dist/fonts/g.woff": FONT, "LICENSE": b"MIT"})


@pytest.fixture
def site(tmp_path):
    html = tmp_path / "html"
    html.mkdir()
    (html / "index.html").write_text(PAGE, encoding="utf-8")
    (html / "error.html").write_text("<html><body>offline?</body></html>", encoding="utf-8")
    return html


def cdn_urls(html_dir):
    return [r.url for r in external_references((html_dir / "index.html").read_text())]


def test_libraries_are_served_from_the_site_and_checked(fake_registry, site, tmp_path):
    publish_libraries(fake_registry)
    outcome = make_self_contained(site, Registry(fake_registry.url, tmp_path / "cache"))
    assert outcome.kept == []
    assert cdn_urls(site) == []
    vendor = site / "vendor"
    assert (vendor / "jquery@3.3.1/dist/jquery.min.js").read_bytes() == JQUERY
    assert (vendor / "flot@0.8.3/jquery.flot.js").read_bytes() == FLOT
    assert (vendor / "bootstrap@3.1.1/dist/css/bootstrap.min.css").read_bytes() == CSS
    # What the stylesheet refers to comes along, and each package's license.
    assert (vendor / "bootstrap@3.1.1/dist/fonts/g.woff").read_bytes() == FONT
    assert (vendor / "jquery@3.3.1/LICENSE.txt").read_bytes() == b"MIT"
    # The CDN's own bytes keep the page's hash (the browser checks it again); flot's
    # sources can never meet the hash of cdnjs's build, so it goes.
    checked = {s.file.package: s.page_hash_checked for s in outcome.served}
    assert checked == {"jquery": True, "flot": False, "bootstrap": True}
    page = (site / "index.html").read_text()
    assert f'src="vendor/jquery@3.3.1/dist/jquery.min.js" data-cdn="{JQUERY_URL}" ' \
           f'integrity="{digest(JQUERY, "sha256")}"' in page
    assert f'src="vendor/flot@0.8.3/jquery.flot.js" data-cdn="{FLOT_URL}" crossorigin' in page
    # Everything else is asv's page as it was.
    assert page.count("https://github.com/airspeed-velocity/asv/") == 1
    assert 'src="asv.js"' in page
    sources = json.loads((vendor / "sources.json").read_text())
    assert [s["url"] for s in sources["served"]] == [JQUERY_URL, FLOT_URL, CSS_URL]
    assert "unminified" in sources["served"][1]["differs_from_cdn"]


def test_second_publish_needs_no_network(fake_registry, unreachable_registry, site, tmp_path):
    publish_libraries(fake_registry)
    make_self_contained(site, Registry(fake_registry.url, tmp_path / "cache"))
    # asv publish writes a fresh site each time; this time the machine is offline.
    shutil.rmtree(site)
    site.mkdir()
    (site / "index.html").write_text(PAGE, encoding="utf-8")
    outcome = make_self_contained(site, Registry(unreachable_registry, tmp_path / "cache"))
    assert outcome.kept == [] and len(outcome.served) == 3
    assert cdn_urls(site) == []


def test_offline_without_a_cache_leaves_the_page_as_asv_wrote_it(unreachable_registry, site,
                                                                 tmp_path):
    outcome = make_self_contained(site, Registry(unreachable_registry, tmp_path / "cache"))
    assert (site / "index.html").read_text() == PAGE
    assert outcome.served == []
    assert {k.url for k in outcome.kept} == {JQUERY_URL, FLOT_URL, CSS_URL}
    lines = describe(outcome, site)
    assert len(lines) == 1
    assert lines[0].startswith("index.html still loads 3 file(s) from CDNs")
    assert f"the npm registry {unreachable_registry} cannot be reached" in lines[0]


def test_tampered_tarball_keeps_that_librarys_cdn_link(fake_registry, site, tmp_path):
    publish_libraries(fake_registry, jquery_integrity=digest(b"what npm really has"))
    outcome = make_self_contained(site, Registry(fake_registry.url, tmp_path / "cache"))
    assert cdn_urls(site) == [JQUERY_URL]
    assert PAGE.splitlines()[2] in (site / "index.html").read_text().splitlines()
    assert not (site / "vendor" / "jquery@3.3.1").exists()
    [kept] = outcome.kept
    assert "does not match the registry's integrity hash" in kept.reason
    assert len(outcome.served) == 2


def test_file_not_matching_the_pages_hash_is_rejected(fake_registry, site, tmp_path):
    # The registry's tarball is intact, but its jquery.min.js is not the CDN's file.
    fake_registry.publish("jquery", "3.3.1", {"dist/jquery.min.js": JQUERY + b"/* evil */"})
    outcome = make_self_contained(site, Registry(fake_registry.url, tmp_path / "cache"))
    assert JQUERY_URL in cdn_urls(site)
    assert any("does not match the page's integrity hash: rejected" in k.reason
               for k in outcome.kept if k.url == JQUERY_URL)
    assert not (site / "vendor" / "jquery@3.3.1" / "dist" / "jquery.min.js").exists()


def test_unknown_url_is_named_and_kept(fake_registry, site, tmp_path):
    unknown = "https://cdnjs.cloudflare.com/ajax/libs/d3/7.8.5/d3.min.js"
    (site / "index.html").write_text(PAGE.replace(FLOT_URL, unknown), encoding="utf-8")
    publish_libraries(fake_registry)
    outcome = make_self_contained(site, Registry(fake_registry.url, tmp_path / "cache"))
    assert cdn_urls(site) == [unknown]
    assert [(k.url, k.reason) for k in outcome.kept] == [
        (unknown, "no npm package is known for this URL")]
    assert "d3.min.js" in describe(outcome, site)[-1]


def test_asvs_own_page_from_the_real_npm_registry(tmp_path):
    """asv's index.html, every library from registry.npmjs.org, each check done for real."""
    if not npm_reachable():
        pytest.skip(f"{DEFAULT_REGISTRY} cannot be reached from here")
    www = Path(asv.__file__).parent / "www"
    html = tmp_path / "html"
    html.mkdir()
    shutil.copy(www / "index.html", html)
    outcome = make_self_contained(html, Registry(DEFAULT_REGISTRY, tmp_path / "cache"))
    assert outcome.kept == [] and outcome.notes == []
    assert cdn_urls(html) == []
    # npm holds the CDN's very bytes for these; asv's own integrity hashes prove it.
    assert sorted(s.file.spec for s in outcome.served if s.page_hash_checked) == [
        "blueimp-md5@2.19.0", "bootstrap@3.1.1", "bootstrap@3.1.1", "flot-orderbars@1.0.0",
        "jquery@3.3.1"]
    assert sorted({s.file.spec for s in outcome.served if not s.page_hash_checked}) == [
        "flot@0.8.3", "stupid-table-plugin@1.1.3"]
    assert (html / "vendor/bootstrap@3.1.1/dist/fonts/glyphicons-halflings-regular.woff"
            ).stat().st_size > 0


def test_a_stylesheets_missing_font_is_noted(fake_registry, site, tmp_path):
    publish_libraries(fake_registry)
    fake_registry.publish("bootstrap", "3.1.1", {"dist/css/bootstrap.min.css": CSS})
    outcome = make_self_contained(site, Registry(fake_registry.url, tmp_path / "cache"))
    assert outcome.kept == []
    assert outcome.notes == ["bootstrap@3.1.1/dist/css/bootstrap.min.css refers to a file that "
                             "is not served: its tarball has no dist/fonts/g.woff"]
    assert outcome.notes[0] in describe(outcome, site)


def test_a_url_leading_out_of_vendor_is_not_followed(fake_registry, site, tmp_path):
    escaping = "https://cdn.jsdelivr.net/npm/x@1.0.0/../../../index.html"
    (site / "index.html").write_text(f'<script src="{escaping}"></script>', encoding="utf-8")
    outcome = make_self_contained(site, Registry(fake_registry.url, tmp_path / "cache"))
    assert [k.url for k in outcome.kept] == [escaping]
    assert "outside vendor/" in outcome.kept[0].reason
    assert fake_registry.requests == []
    assert (site / "index.html").read_text() == f'<script src="{escaping}"></script>'

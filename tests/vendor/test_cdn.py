from pathlib import Path

import asv
import pytest

from tfgpubench.vendor.cdn import (
    NpmFile,
    external_references,
    local_tag,
    npm_file,
    rewrite,
    stylesheet_files,
)

# asv 0.6.6's CDN URLs and the npm files that stand in for them. "Same bytes"
# was established by hashing the npm files against asv's integrity attributes;
# cdnjs's flot .min.js builds and stupidtable 1.0.1 are on no npm release.
ASV_066 = {
    "https://code.jquery.com/jquery-3.3.1.min.js":
        ("jquery", "3.3.1", "dist/jquery.min.js", True),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js":
        ("flot", "0.8.3", "jquery.flot.js", False),
    "https://cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.time.min.js":
        ("flot", "0.8.3", "jquery.flot.time.js", False),
    "https://cdn.jsdelivr.net/npm/flot-orderbars@1.0.0/js/jquery.flot.orderBars.js":
        ("flot-orderbars", "1.0.0", "js/jquery.flot.orderBars.js", True),
    "https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.0.1/stupidtable.min.js":
        ("stupid-table-plugin", "1.1.3", "stupidtable.min.js", False),
    "https://cdnjs.cloudflare.com/ajax/libs/blueimp-md5/2.19.0/js/md5.min.js":
        ("blueimp-md5", "2.19.0", "js/md5.min.js", True),
    "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css":
        ("bootstrap", "3.1.1", "dist/css/bootstrap.min.css", True),
}


@pytest.mark.parametrize("url", ASV_066)
def test_asv_cdn_urls_map_to_npm(url):
    found = npm_file(url)
    assert (found.package, found.version, found.path, found.same_bytes) == ASV_066[url]
    # Where the bytes differ, the reader is told how.
    assert bool(found.note) != found.same_bytes


def test_served_path_keeps_the_package_layout():
    found = npm_file("https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css")
    assert found.local_path == "vendor/bootstrap@3.1.1/dist/css/bootstrap.min.css"


def test_rules_hold_for_other_releases_and_scoped_packages():
    assert npm_file("https://code.jquery.com/jquery-3.7.1.slim.min.js") == NpmFile(
        "jquery", "3.7.1", "dist/jquery.slim.min.js")
    assert npm_file("https://cdn.jsdelivr.net/npm/@popperjs/core@2.11.8/dist/umd/popper.js") \
        == NpmFile("@popperjs/core", "2.11.8", "dist/umd/popper.js")
    # A cdnjs version npm has under the same number is taken as it is.
    assert npm_file("https://cdnjs.cloudflare.com/ajax/libs/stupidtable/1.1.3/stupidtable.min.js"
                    ).version == "1.1.3"


def test_protocol_relative_and_http_urls_are_the_same_files():
    expected = npm_file("https://code.jquery.com/jquery-3.3.1.min.js")
    assert npm_file("//code.jquery.com/jquery-3.3.1.min.js") == expected
    assert npm_file("http://code.jquery.com/jquery-3.3.1.min.js") == expected


@pytest.mark.parametrize("url", [
    "https://cdnjs.cloudflare.com/ajax/libs/d3/7.8.5/d3.min.js",  # no rule for this library
    "https://unpkg.com/jquery@3.3.1/dist/jquery.min.js",  # no rule for this host
    "https://code.jquery.com/ui/1.13.2/jquery-ui.min.js",
    "https://cdn.jsdelivr.net/gh/user/repo@1.0/file.js",  # GitHub, not npm
])
def test_unknown_urls_are_not_guessed(url):
    assert npm_file(url) is None


PAGE = """<!doctype html>
<html><head>
  <script>function js_load_failure() { window.location = "error.html"; }</script>
  <script src="https://code.jquery.com/jquery-3.3.1.min.js" integrity="sha256-AAA=" crossorigin="anonymous" onerror="js_load_failure()"></script>
  <script src='//cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js' integrity='sha512-BBB==' referrerpolicy="no-referrer"></script>
  <script language="javascript" type="text/javascript" src="asv.js"></script>
  <link rel="stylesheet" href="https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css">
  <link rel="alternate" type="application/atom+xml" href="regressions.xml"/>
</head><body><a href="https://github.com/airspeed-velocity/asv/">asv</a>
<img src="https://example.org/x.png"></body></html>
"""  # noqa: E501


def test_external_references_are_script_and_link_tags_naming_another_host():
    found = external_references(PAGE)
    assert [r.url for r in found] == [
        "https://code.jquery.com/jquery-3.3.1.min.js",
        "//cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js",
        "https://cdn.jsdelivr.net/npm/bootstrap@3.1.1/dist/css/bootstrap.min.css",
    ]
    assert [r.integrity for r in found] == ["sha256-AAA=", "sha512-BBB==", ""]
    assert all(r.start_tag in PAGE for r in found)


def test_local_tag_keeps_integrity_only_for_the_cdns_own_bytes():
    jquery, flot, _ = external_references(PAGE)
    same = local_tag(jquery, "vendor/jquery@3.3.1/dist/jquery.min.js", keep_integrity=True)
    assert same == ('<script src="vendor/jquery@3.3.1/dist/jquery.min.js" '
                    'data-cdn="https://code.jquery.com/jquery-3.3.1.min.js" '
                    'integrity="sha256-AAA=" crossorigin="anonymous" '
                    'onerror="js_load_failure()">')
    rebuilt = local_tag(flot, "vendor/flot@0.8.3/jquery.flot.js", keep_integrity=False)
    assert rebuilt == ('<script src="vendor/flot@0.8.3/jquery.flot.js" '
                       'data-cdn="//cdnjs.cloudflare.com/ajax/libs/flot/0.8.3/jquery.flot.min.js"'
                       ' referrerpolicy="no-referrer">')


def test_link_tags_get_their_href_replaced():
    bootstrap = external_references(PAGE)[2]
    tag = local_tag(bootstrap, "vendor/bootstrap@3.1.1/dist/css/bootstrap.min.css", True)
    assert tag.startswith('<link rel="stylesheet" href="vendor/bootstrap@3.1.1/dist/css/')
    assert external_references(tag) == []


def test_rewrite_changes_only_the_given_tags():
    jquery = external_references(PAGE)[0]
    new_tag = local_tag(jquery, "vendor/jquery@3.3.1/dist/jquery.min.js", True)
    page = rewrite(PAGE, {jquery.start_tag: new_tag})
    assert page == PAGE.replace(jquery.start_tag, new_tag)
    assert [r.url for r in external_references(page)][0].startswith("//cdnjs")
    assert rewrite(PAGE, {}) == PAGE


def test_stylesheet_files_resolve_inside_the_package():
    css = """@font-face{src:url(../fonts/g.eot);src:url('../fonts/g.eot?#iefix') format('eot'),
        url("../fonts/g.svg#glyphs") format('svg'), url(data:font/woff;base64,AAAA)}
        .a{background:url(https://example.org/a.png)} .b{behavior:url(#default#VML)}
        .c{background:url(/root.png)} .d{background:url(../../../outside.png)}
        .e{background:url( img/e.png )}"""
    assert stylesheet_files(css, "dist/css/bootstrap.min.css") == [
        "dist/fonts/g.eot", "dist/fonts/g.svg", "dist/css/img/e.png"]


def test_every_library_of_the_installed_asv_has_an_npm_file():
    """A new asv release that loads a library no rule knows fails here, not on a user's site."""
    index = Path(asv.__file__).parent / "www" / "index.html"
    references = external_references(index.read_text(encoding="utf-8"))
    assert references, "asv's index.html loads no CDN library any more: revisit tfgpubench.vendor"
    unknown = [r.url for r in references if npm_file(r.url) is None]
    assert unknown == []

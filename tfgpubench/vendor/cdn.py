"""What asv's pages load from other hosts, where npm has the same files, and the
pages rewritten to load them from html/ instead.

Pure: strings in, strings out. The library list is read from the page itself
(every <script src> and <link href> that names another host), so a new asv
release that changes its libraries is handled by the same rules, and a URL no
rule knows is named, never guessed.

Where the npm registry has the files the CDNs serve:
- cdn.jsdelivr.net/npm/PACKAGE@VERSION/PATH serves npm's own tarball files:
  the same bytes.
- code.jquery.com/jquery-VERSION.min.js is dist/jquery.min.js of npm's jquery
  at that version: the same bytes.
- cdnjs.cloudflare.com/ajax/libs/LIBRARY/VERSION/PATH: per library, see
  CDNJS_LIBRARIES (cdnjs names and builds some libraries itself).
"""

import html as html_escaping
import posixpath
import re
from dataclasses import dataclass
from html.parser import HTMLParser

from ..names import VENDOR_DIR


@dataclass(frozen=True)
class Reference:
    """One <script src> or <link href> of a page that names another host."""

    url: str
    start_tag: str  # the tag as the page writes it
    integrity: str  # its `integrity` attribute, "" when it has none


@dataclass(frozen=True)
class NpmFile:
    """The file of an npm package that stands in for a CDN URL."""

    package: str
    version: str
    path: str  # inside the package
    # The CDN serves this very file, so the page's integrity hash must match it.
    same_bytes: bool = True
    note: str = ""  # how it differs from the CDN's file, when it does

    @property
    def spec(self):
        return f"{self.package}@{self.version}"

    @property
    def local_path(self):
        """Where the file is served from, relative to html/ (the package's layout is
        kept, so a stylesheet's relative url(...) resolves within it)."""
        return f"{VENDOR_DIR}/{self.spec}/{self.path}"


@dataclass(frozen=True)
class CdnjsLibrary:
    """How a cdnjs library maps to npm."""

    package: str
    # cdnjs minified the files itself: npm has only the sources (x.js for x.min.js).
    minified_by_cdnjs: bool = False
    # (cdnjs version, npm release standing in), for versions never published on npm.
    stand_ins: tuple = ()
    note: str = ""


CDNJS_LIBRARIES = {
    "blueimp-md5": CdnjsLibrary("blueimp-md5"),
    "flot": CdnjsLibrary(
        "flot", minified_by_cdnjs=True,
        note="cdnjs's .min.js builds are its own; npm has flot's unminified sources of "
             "the same release",
    ),
    "stupidtable": CdnjsLibrary(
        "stupid-table-plugin", stand_ins=(("1.0.1", "1.1.3"),),
        note="stupidtable 1.0.1 was never published on npm; stupid-table-plugin 1.1.3, "
             "the same plugin's first npm release, stands in",
    ),
}

JSDELIVR_NPM = re.compile(
    r"^https://cdn\.jsdelivr\.net/npm/(?P<package>(?:@[^/@]+/)?[^/@]+)@(?P<version>[^/]+)"
    r"/(?P<path>[^?#]+)$"
)
JQUERY = re.compile(r"^https://code\.jquery\.com/jquery-(?P<version>\d+\.\d+\.\d+)"
                    r"(?P<build>(?:\.slim)?(?:\.min)?)\.js$")
CDNJS = re.compile(r"^https://cdnjs\.cloudflare\.com/ajax/libs/(?P<library>[^/]+)"
                   r"/(?P<version>[^/]+)/(?P<path>[^?#]+)$")


def is_external(url):
    return re.match(r"^(?:https?:)?//", url.strip(), re.IGNORECASE) is not None


def normalized(url):
    """https:// for protocol-relative and http:// URLs: the CDNs serve the same files."""
    url = url.strip()
    if url.startswith("//"):
        return "https:" + url
    return re.sub(r"^http://", "https://", url, flags=re.IGNORECASE)


def npm_file(url):
    """The npm file standing in for a CDN URL, or None when no rule knows the URL."""
    url = normalized(url)
    if match := JSDELIVR_NPM.match(url):
        return NpmFile(match["package"], match["version"], match["path"])
    if match := JQUERY.match(url):
        return NpmFile("jquery", match["version"], f"dist/jquery{match['build']}.js")
    if match := CDNJS.match(url):
        library = CDNJS_LIBRARIES.get(match["library"])
        if library is None:
            return None
        version = dict(library.stand_ins).get(match["version"], match["version"])
        path = match["path"]
        if library.minified_by_cdnjs:
            path = re.sub(r"\.min\.(js|css)$", r".\1", path)
        same = version == match["version"] and path == match["path"]
        return NpmFile(library.package, version, path, same_bytes=same,
                       note="" if same else library.note)
    return None


class _Collector(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.references = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        url = {"script": attributes.get("src"), "link": attributes.get("href")}.get(tag)
        if url and is_external(url):
            self.references.append(
                Reference(url, self.get_starttag_text(), attributes.get("integrity") or "")
            )


def external_references(page):
    """Every <script src> and <link href> of an HTML page that names another host."""
    collector = _Collector()
    collector.feed(page)
    collector.close()
    return collector.references


_INTEGRITY_ATTRIBUTE = re.compile(r"""\s+integrity\s*=\s*(?:"[^"]*"|'[^']*'|[^\s>]+)""",
                                  re.IGNORECASE)


def local_tag(reference, local_path, keep_integrity):
    """The start tag loading `local_path` instead; the CDN URL stays as data-cdn.

    keep_integrity: the file is the CDN's very bytes, so the browser checks
    the page's hash once more; otherwise the attribute goes, since a hash of
    the CDN's build can never match a different build of the same release.
    """
    attribute = "src" if reference.start_tag[1:7].lower() == "script" else "href"
    value = re.compile(rf"""(\s{attribute}\s*=\s*)(?:"[^"]*"|'[^']*'|[^\s>]+)""",
                       re.IGNORECASE)
    quoted = html_escaping.escape(reference.url, quote=True)
    tag = value.sub(lambda m: f'{m[1]}"{local_path}" data-cdn="{quoted}"',
                    reference.start_tag, count=1)
    return tag if keep_integrity else _INTEGRITY_ATTRIBUTE.sub("", tag)


def rewrite(page, local_tags):
    """The page with each start tag of `local_tags` ({original tag: new tag}) replaced;
    everything else is left byte for byte."""
    for original, replacement in local_tags.items():
        page = page.replace(original, replacement)
    return page


_CSS_URL = re.compile(r"""url\(\s*(["']?)([^"')]+)\1\s*\)""")


def stylesheet_files(css, css_path):
    """Paths, inside the same package, of the files a stylesheet's relative url(...)
    references (Bootstrap's fonts), so they are served beside it."""
    base = posixpath.dirname(css_path)
    found = []
    for match in _CSS_URL.finditer(css):
        reference = match[2].strip()
        if re.match(r"^(?:[a-z][a-z0-9+.-]*:|/|#)", reference, re.IGNORECASE):
            continue  # data:, another host, the site's root, or a fragment only
        path = posixpath.normpath(posixpath.join(base, re.split(r"[?#]", reference)[0]))
        if not path.startswith("../") and path not in found:
            found.append(path)
    return found

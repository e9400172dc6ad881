"""asv's published site made self-contained: the libraries its pages load from
CDNs (jQuery, flot, stupidtable, blueimp-md5, Bootstrap) served from
html/vendor/ instead, so its graphs render with no network.

Each library comes from the npm registry at the release the page names
(cdn.py says how a CDN URL maps to npm), its tarball checked against the
registry's integrity hash, and the file checked against the page's own
`integrity` attribute where npm holds the CDN's very bytes. Tarballs are
cached (npm.py), so a second publish needs no network. A library that
cannot be had, or fails a check, keeps its CDN link: the page is left
unchanged for it and the reason is given in one line.
"""

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..names import VENDOR_DIR, VENDOR_SOURCES_FILE
from . import integrity
from .cdn import NpmFile, external_references, local_tag, npm_file, rewrite, stylesheet_files
from .npm import Registry, Unavailable, license_files, package_file


@dataclass(frozen=True)
class Served:
    """A CDN URL of a page now served from html/vendor/."""

    page: str
    url: str
    file: NpmFile
    page_hash_checked: bool  # also matched the page's own integrity attribute


@dataclass(frozen=True)
class Kept:
    """A CDN URL a page still loads from the network, and why."""

    page: str
    url: str
    reason: str


@dataclass
class Outcome:
    served: list = field(default_factory=list)
    kept: list = field(default_factory=list)
    notes: list = field(default_factory=list)


class _Files:
    """Files of npm releases, each tarball fetched once per publish."""

    def __init__(self, registry):
        self.registry = registry
        self.tarballs = {}
        self.licensed = set()

    def read(self, wanted):
        if wanted.spec not in self.tarballs:
            try:
                self.tarballs[wanted.spec] = self.registry.tarball(wanted.package,
                                                                   wanted.version)
            except Unavailable as exc:
                self.tarballs[wanted.spec] = exc
        tarball = self.tarballs[wanted.spec]
        if isinstance(tarball, Unavailable):
            raise tarball
        return package_file(tarball, wanted.path)

    def write_licenses(self, wanted, html_dir):
        """The package's license files beside its served files, once per release."""
        if wanted.spec in self.licensed:
            return
        self.licensed.add(wanted.spec)
        for name, data in license_files(self.tarballs[wanted.spec]).items():
            (html_dir / VENDOR_DIR / wanted.spec / name).write_bytes(data)


def make_self_contained(html_dir, registry=None):
    """Serve the CDN libraries of html_dir's pages from html_dir/vendor/; an Outcome.

    registry: an npm.Registry (default: the one the environment names, with
    the user's cache). Pages are rewritten in place; a page none of whose
    libraries could be had is left byte for byte as it was.
    """
    html_dir = Path(html_dir)
    registry = registry or Registry.from_environment()
    files = _Files(registry)
    outcome = Outcome()
    for page_path in sorted(html_dir.glob("*.html")):
        page = page_path.read_bytes().decode("utf-8")
        new_tags = {}
        for reference in external_references(page):
            result = _serve(reference, page_path.name, html_dir, files, outcome.notes)
            if isinstance(result, Kept):
                outcome.kept.append(result)
                continue
            outcome.served.append(result)
            new_tags[reference.start_tag] = local_tag(
                reference, result.file.local_path, keep_integrity=result.file.same_bytes)
        if new_tags:
            page_path.write_bytes(rewrite(page, new_tags).encode("utf-8"))
    if outcome.served or outcome.kept:
        _write_sources(html_dir, registry, outcome)
    return outcome


def _serve(reference, page_name, html_dir, files, notes):
    """Write the file standing in for one reference: Served, or Kept with the reason."""

    def keep(reason):
        return Kept(page_name, reference.url, reason)

    wanted = npm_file(reference.url)
    if wanted is None:
        return keep("no npm package is known for this URL")
    target = _inside(html_dir, wanted.local_path)
    if target is None:
        return keep(f"{wanted.spec}/{wanted.path} would be written outside {VENDOR_DIR}/")
    try:
        data = files.read(wanted)
    except Unavailable as exc:
        return keep(str(exc))
    page_hash_checked = False
    if wanted.same_bytes and reference.integrity:
        if not integrity.matches(data, reference.integrity):
            return keep(f"{wanted.spec}/{wanted.path} does not match the page's integrity "
                        "hash: rejected")
        page_hash_checked = True
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    files.write_licenses(wanted, html_dir)
    if wanted.path.endswith(".css"):
        _write_stylesheet_files(data, wanted, html_dir, files, notes)
    return Served(page_name, reference.url, wanted, page_hash_checked)


def _write_stylesheet_files(css, wanted, html_dir, files, notes):
    """The files a served stylesheet refers to (fonts), beside it; a note for each missing."""
    for path in stylesheet_files(css.decode("utf-8", "replace"), wanted.path):
        extra = NpmFile(wanted.package, wanted.version, path)
        target = _inside(html_dir, extra.local_path)
        try:
            if target is None:
                raise Unavailable(f"{path} would be written outside {VENDOR_DIR}/")
            data = files.read(extra)
        except Unavailable as exc:
            notes.append(f"{wanted.spec}/{wanted.path} refers to a file that is not "
                         f"served: {exc}")
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def _inside(html_dir, local_path):
    """html_dir/local_path, or None where `..` in a URL would lead out of vendor/."""
    root = (html_dir / VENDOR_DIR).resolve()
    target = (html_dir / local_path).resolve()
    return target if target.is_relative_to(root) and target != root else None


def _write_sources(html_dir, registry, outcome):
    """html/vendor/sources.json: where each served file came from and what was checked."""
    sources = {
        "registry": registry.url,
        "served": [{
            "page": s.page, "url": s.url, "package": s.file.package,
            "version": s.file.version, "file": s.file.path, "served_as": s.file.local_path,
            "checked": _checks(s), **({"differs_from_cdn": s.file.note} if s.file.note else {}),
        } for s in outcome.served],
        "kept_on_cdn": [{"page": k.page, "url": k.url, "reason": k.reason}
                        for k in outcome.kept],
    }
    path = html_dir / VENDOR_DIR / VENDOR_SOURCES_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(sources, indent=1) + "\n", encoding="utf-8")


def _checks(served):
    if served.page_hash_checked:
        return "npm's tarball hash, and the page's integrity hash"
    return "npm's tarball hash"


def describe(outcome, html_dir):
    """One line per fact worth a reader's attention, for the terminal."""
    lines = []
    if outcome.served:
        matched = sum(s.page_hash_checked for s in outcome.served)
        lines.append(
            f"{len(outcome.served)} CDN files of asv's pages now served from "
            f"{Path(html_dir) / VENDOR_DIR} (npm releases, tarball hashes checked; "
            f"{matched} also match the page's integrity hash)"
        )
    differing = {}
    for served in outcome.served:
        if served.file.note:
            differing.setdefault((served.file.spec, served.file.note), []).append(
                served.file.path)
    for (spec, note), paths in differing.items():
        lines.append(f"  {spec} ({', '.join(paths)}): {note}; checked against npm's "
                     "tarball hash only")
    by_reason = {}
    for kept in outcome.kept:
        by_reason.setdefault((kept.page, kept.reason), []).append(kept.url)
    for (page, reason), urls in by_reason.items():
        names = ", ".join(url.rsplit("/", 1)[-1] for url in urls)
        lines.append(f"{page} still loads {len(urls)} file(s) from CDNs ({names}), "
                     f"so it needs network: {reason}")
    lines.extend(outcome.notes)
    return lines

"""Releases from the npm registry: a package's tarball at one version, checked
against the registry's own integrity hash, and cached so that the next
publish needs no network.

The registry is the one npm itself is configured with through the
environment (npm_config_registry, for a mirror or a proxy's), else
registry.npmjs.org; urllib honours https_proxy. The cache lives in the
user's cache directory (TFGPUBENCH_CACHE_DIR overrides it).
"""

import base64
import io
import json
import os
import sys
import tarfile
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

from . import integrity

DEFAULT_REGISTRY = "https://registry.npmjs.org"
CACHE_DIR_VARIABLE = "TFGPUBENCH_CACHE_DIR"
# Long enough for a slow proxy, short enough that a black-holed network is
# given up on: after the first failed connection no further request is tried.
TIMEOUT_S = 30
# A package's license files, served beside its files.
LICENSE_PREFIXES = ("LICENSE", "LICENCE", "COPYING")


class Unavailable(Exception):
    """The release cannot be had; the message says why, in one line."""


class IntegrityMismatch(Unavailable):
    """The bytes are not those the hash names: damaged or tampered, never served."""


def registry_url(environ=os.environ):
    """npm's own setting (npm reads it from the environment in either case), else npm's."""
    for name in ("npm_config_registry", "NPM_CONFIG_REGISTRY"):
        if environ.get(name):
            return environ[name].rstrip("/")
    return DEFAULT_REGISTRY


def default_cache_dir(environ=os.environ, platform=sys.platform):
    """Where downloaded tarballs are kept: the user's cache directory."""
    if environ.get(CACHE_DIR_VARIABLE):
        return Path(environ[CACHE_DIR_VARIABLE]) / "npm"
    home = Path(environ.get("HOME") or Path.home())
    if platform == "darwin":
        base = home / "Library" / "Caches"
    elif platform == "win32":
        base = Path(environ.get("LOCALAPPDATA") or home / "AppData" / "Local")
    else:
        base = Path(environ.get("XDG_CACHE_HOME") or home / ".cache")
    return base / "tfgpubench" / "npm"


def tarball_integrity(dist):
    """The integrity string the registry gives for a tarball ('dist' of a release).

    Old releases carry only a sha1 'shasum'; it is used when nothing stronger is there.
    """
    if dist.get("integrity"):
        return dist["integrity"]
    if dist.get("shasum"):
        return "sha1-" + base64.b64encode(bytes.fromhex(dist["shasum"])).decode("ascii")
    return ""


def check_tarball(data, dist):
    """Raise IntegrityMismatch unless `data` is the tarball the registry's hash names."""
    expected = tarball_integrity(dist)
    if not expected:
        raise IntegrityMismatch("the registry gives no integrity hash for its tarball")
    if not integrity.matches(data, expected):
        raise IntegrityMismatch(
            f"the tarball does not match the registry's integrity hash {expected[:24]}...: "
            "rejected"
        )


def package_file(tarball, path):
    """The bytes of `path` inside an npm tarball. Raises Unavailable when it is not there."""
    try:
        with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
            for inside, member in _package_members(archive):
                if inside == path:
                    return archive.extractfile(member).read()
    except (tarfile.TarError, OSError) as exc:
        raise Unavailable(f"its tarball cannot be read: {exc}") from exc
    raise Unavailable(f"its tarball has no {path}")


def license_files(tarball):
    """{name: bytes} of the license files at the top of an npm tarball, to serve beside
    the package's files (their licenses ask that copies carry the notice)."""
    with tarfile.open(fileobj=io.BytesIO(tarball), mode="r:gz") as archive:
        return {inside: archive.extractfile(member).read()
                for inside, member in _package_members(archive)
                if "/" not in inside and inside.upper().startswith(LICENSE_PREFIXES)}


def _package_members(archive):
    """(path inside the package, member) for each file; an npm tarball holds its files
    under one top folder, 'package/' for all but the oldest releases."""
    for member in archive.getmembers():
        if member.isfile():
            name = member.name[2:] if member.name.startswith("./") else member.name
            yield name.partition("/")[2], member


class Registry:
    """Tarballs of npm releases, checked, and kept in `cache_dir` (None: not kept)."""

    def __init__(self, url=DEFAULT_REGISTRY, cache_dir=None, timeout=TIMEOUT_S):
        self.url = url.rstrip("/")
        self.cache_dir = Path(cache_dir) if cache_dir else None
        self.timeout = timeout
        # Set at the first failed connection, so an offline publish says so once
        # and does not wait for a timeout per library.
        self.unreachable = None

    @classmethod
    def from_environment(cls, environ=os.environ):
        return cls(registry_url(environ), default_cache_dir(environ))

    def tarball(self, package, version):
        """The release's tarball, checked against the registry's integrity hash.

        From the cache when it holds a copy that still matches its hash (a copy
        that does not is discarded and fetched anew). Raises Unavailable.
        """
        discarded = False
        cached = self._from_cache(package, version)
        if cached is not None:
            data, dist = cached
            try:
                check_tarball(data, dist)
                return data
            except IntegrityMismatch:
                discarded = True
                self._forget(package, version)
        try:
            dist = self._release(package, version)["dist"]
            data = self._get(dist["tarball"])
            check_tarball(data, dist)
        except Unavailable as exc:
            if discarded:
                raise Unavailable(f"the cached tarball failed its integrity check and was "
                                  f"discarded; {exc}") from exc
            raise
        self._store(package, version, data, dist)
        return data

    def _release(self, package, version):
        name = urllib.parse.quote(package, safe="@")  # a scope's '/' is sent as %2F
        try:
            release = json.loads(self._get(f"{self.url}/{name}/{version}"))
        except ValueError as exc:
            raise Unavailable(f"the registry's answer for {package}@{version} is not JSON") \
                from exc
        if release.get("version") != version or "tarball" not in release.get("dist", {}):
            raise Unavailable(f"the registry has no release {package}@{version}")
        return release

    def _get(self, url):
        if self.unreachable:
            raise Unavailable(self.unreachable)
        request = urllib.request.Request(url, headers={"Accept": "application/json, */*"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return response.read()
        except urllib.error.HTTPError as exc:
            raise Unavailable(f"{url}: the registry answered {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", None) or exc
            self.unreachable = f"the npm registry {self.url} cannot be reached ({reason})"
            raise Unavailable(self.unreachable) from exc

    # --- the cache: NAME-VERSION.tgz and, beside it, the registry's 'dist' as JSON --

    def _paths(self, package, version):
        stem = f"{package.replace('/', '+')}-{version}"
        return self.cache_dir / f"{stem}.tgz", self.cache_dir / f"{stem}.dist.json"

    def _from_cache(self, package, version):
        if self.cache_dir is None:
            return None
        tarball_path, dist_path = self._paths(package, version)
        try:
            return tarball_path.read_bytes(), json.loads(dist_path.read_text())
        except (OSError, ValueError):
            return None

    def _forget(self, package, version):
        for path in self._paths(package, version):
            path.unlink(missing_ok=True)

    def _store(self, package, version, data, dist):
        if self.cache_dir is None:
            return
        self.cache_dir.mkdir(parents=True, exist_ok=True)
        tarball_path, dist_path = self._paths(package, version)
        for path, content in ((tarball_path, data), (dist_path, json.dumps(dist).encode())):
            # Written aside and renamed: an interrupted publish leaves no half file.
            partial = path.with_name(path.name + ".partial")
            partial.write_bytes(content)
            os.replace(partial, path)

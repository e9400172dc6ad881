"""Registries for the tests: a stand-in npm registry on 127.0.0.1 (releases made of
a few bytes, served the way registry.npmjs.org serves them: /NAME/VERSION with
its 'dist', and the tarball; each request counted), an address nothing listens
on, and whether the real registry answers from here."""

import functools
import http.server
import io
import json
import socket
import tarfile
import threading
import urllib.parse
import urllib.request

from tfgpubench.vendor.integrity import digest
from tfgpubench.vendor.npm import DEFAULT_REGISTRY


def make_tarball(files, top="package"):
    """A .tgz as npm packs one: every file under one top folder."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as archive:
        for path, data in files.items():
            member = tarfile.TarInfo(f"{top}/{path}")
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


class FakeRegistry:
    def __init__(self):
        self.routes = {}
        self.requests = []
        self.url = None

    def publish(self, package, version, files, integrity=None, top="package"):
        """Add a release; integrity: what the registry claims, when not the tarball's own."""
        tarball = make_tarball(files, top)
        tarball_path = f"/{package}/-/{package.rsplit('/', 1)[-1]}-{version}.tgz"
        self.routes[tarball_path] = tarball
        release = {"name": package, "version": version, "dist": {
            "tarball": self.url + tarball_path, "integrity": integrity or digest(tarball)}}
        name = urllib.parse.quote(package, safe="@")
        self.routes[f"/{name}/{version}"] = json.dumps(release).encode()
        return tarball


class _Handler(http.server.BaseHTTPRequestHandler):
    def __init__(self, registry, *args, **kwargs):
        self.registry = registry
        super().__init__(*args, **kwargs)

    def do_GET(self):
        self.registry.requests.append(self.path)
        body = self.registry.routes.get(self.path)
        self.send_response(200 if body is not None else 404)
        self.end_headers()
        self.wfile.write(body if body is not None else b'{"error":"Not found"}')

    def log_message(self, *args):
        pass


def start(registry):
    """Serve `registry` on 127.0.0.1; returns the server (shut it down after)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(_Handler, registry))
    registry.url = f"http://127.0.0.1:{server.server_address[1]}"
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                     daemon=True).start()
    return server


def refused_address():
    """The address of a registry that refuses every connection, as an offline machine sees."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def npm_reachable():
    try:
        with urllib.request.urlopen(f"{DEFAULT_REGISTRY}/jquery/3.3.1", timeout=10):
            return True
    except OSError:
        return False

import base64
import hashlib
from pathlib import Path

import pytest

from tfgpubench.vendor.integrity import digest
from tfgpubench.vendor.npm import (
    DEFAULT_REGISTRY,
    IntegrityMismatch,
    Registry,
    Unavailable,
    default_cache_dir,
    license_files,
    package_file,
    registry_url,
    tarball_integrity,
)

from .registries import make_tarball

FILES = {"dist/jquery.min.js": b"/*! jQuery v3.3.1 */", "LICENSE.txt": b"MIT",
         "src/core.js": b"// core"}


def test_registry_is_the_one_npm_is_configured_with():
    assert registry_url({}) == DEFAULT_REGISTRY
    assert registry_url({"npm_config_registry": "https://mirror.example/npm/"}) == \
        "https://mirror.example/npm"
    assert registry_url({"NPM_CONFIG_REGISTRY": "https://proxy.example"}) == \
        "https://proxy.example"


def test_cache_lives_in_the_users_cache_directory():
    home = {"HOME": "/home/u"}
    assert default_cache_dir(home, "linux") == Path("/home/u/.cache/tfgpubench/npm")
    assert default_cache_dir({**home, "XDG_CACHE_HOME": "/c"}, "linux") == \
        Path("/c/tfgpubench/npm")
    assert default_cache_dir(home, "darwin") == Path("/home/u/Library/Caches/tfgpubench/npm")
    assert default_cache_dir({**home, "TFGPUBENCH_CACHE_DIR": "/ci/cache"}, "darwin") == \
        Path("/ci/cache/npm")


def test_old_releases_are_checked_by_their_sha1_shasum():
    tarball = make_tarball(FILES)
    shasum = hashlib.sha1(tarball).hexdigest()
    expected = "sha1-" + base64.b64encode(hashlib.sha1(tarball).digest()).decode()
    assert tarball_integrity({"shasum": shasum}) == expected
    assert tarball_integrity({"shasum": shasum, "integrity": "sha512-x"}) == "sha512-x"


def test_files_of_a_tarball_whatever_its_top_folder():
    for top in ("package", "jquery"):
        tarball = make_tarball(FILES, top=top)
        assert package_file(tarball, "dist/jquery.min.js") == FILES["dist/jquery.min.js"]
        assert license_files(tarball) == {"LICENSE.txt": b"MIT"}
    with pytest.raises(Unavailable, match="no dist/missing.js"):
        package_file(make_tarball(FILES), "dist/missing.js")
    with pytest.raises(Unavailable, match="cannot be read"):
        package_file(b"not a tarball", "dist/jquery.min.js")


def test_tarball_is_fetched_checked_and_cached(fake_registry, tmp_path):
    tarball = fake_registry.publish("jquery", "3.3.1", FILES)
    registry = Registry(fake_registry.url, tmp_path / "cache")
    assert registry.tarball("jquery", "3.3.1") == tarball
    asked = len(fake_registry.requests)
    assert asked == 2  # the release, then its tarball
    # A new publish, a new Registry: the cache answers, the network is not asked.
    assert Registry(fake_registry.url, tmp_path / "cache").tarball("jquery", "3.3.1") == tarball
    assert len(fake_registry.requests) == asked


def test_scoped_package_names(fake_registry, tmp_path):
    tarball = fake_registry.publish("@popperjs/core", "2.11.8", {"dist/popper.js": b"p"})
    assert Registry(fake_registry.url, tmp_path).tarball("@popperjs/core", "2.11.8") == tarball
    assert fake_registry.requests[0] == "/@popperjs%2Fcore/2.11.8"


def test_tarball_not_matching_the_registrys_hash_is_rejected(fake_registry, tmp_path):
    fake_registry.publish("jquery", "3.3.1", FILES, integrity=digest(b"the real tarball"))
    registry = Registry(fake_registry.url, tmp_path / "cache")
    with pytest.raises(IntegrityMismatch, match="does not match the registry's integrity"):
        registry.tarball("jquery", "3.3.1")
    assert not (tmp_path / "cache").exists() or not any((tmp_path / "cache").iterdir())


def test_damaged_cache_is_discarded_and_fetched_anew(fake_registry, tmp_path):
    tarball = fake_registry.publish("jquery", "3.3.1", FILES)
    cache = tmp_path / "cache"
    Registry(fake_registry.url, cache).tarball("jquery", "3.3.1")
    cached = cache / "jquery-3.3.1.tgz"
    cached.write_bytes(cached.read_bytes()[:-10] + b"tampered!!")
    assert Registry(fake_registry.url, cache).tarball("jquery", "3.3.1") == tarball
    assert cached.read_bytes() == tarball


def test_damaged_cache_offline_says_both(fake_registry, unreachable_registry, tmp_path):
    fake_registry.publish("jquery", "3.3.1", FILES)
    cache = tmp_path / "cache"
    Registry(fake_registry.url, cache).tarball("jquery", "3.3.1")
    (cache / "jquery-3.3.1.tgz").write_bytes(b"tampered")
    with pytest.raises(Unavailable) as raised:
        Registry(unreachable_registry, cache).tarball("jquery", "3.3.1")
    message = str(raised.value)
    assert "failed its integrity check and was discarded" in message
    assert "cannot be reached" in message
    assert not (cache / "jquery-3.3.1.tgz").exists()


def test_missing_release_is_a_registry_answer_not_an_outage(fake_registry, tmp_path):
    registry = Registry(fake_registry.url, tmp_path)
    with pytest.raises(Unavailable, match="answered 404"):
        registry.tarball("jquery", "9.9.9")
    assert registry.unreachable is None


def test_unreachable_registry_is_given_up_once(unreachable_registry, tmp_path):
    registry = Registry(unreachable_registry, tmp_path)
    with pytest.raises(Unavailable, match="cannot be reached"):
        registry.tarball("jquery", "3.3.1")
    # Later libraries are not tried against a registry known to be down.
    registry.url = "http://must-not-be-asked.invalid"
    with pytest.raises(Unavailable, match=f"{unreachable_registry} cannot be reached"):
        registry.tarball("flot", "0.8.3")
